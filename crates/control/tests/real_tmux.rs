//! Checks quoting against a real tmux: every argument must arrive byte for byte.
//!
//! Each test starts a private server (`tmux -L tp-control-<pid>-<n> -f /dev/null`) and
//! kills only that server when it ends, even on failure. Without `tmux` on PATH the
//! tests print a note and pass.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command as Process, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{Receiver, channel};
use std::thread;
use std::time::{Duration, Instant};

use termpilot_control::{Command, Event, Parser, Reply};

/// No single wait in these tests is longer than this.
const DEADLINE: Duration = Duration::from_secs(5);

static SERVERS: AtomicUsize = AtomicUsize::new(0);

fn tmux_available() -> bool {
    let found = Process::new("tmux")
        .arg("-V")
        .output()
        .is_ok_and(|out| out.status.success());
    if !found {
        eprintln!("note: tmux is not on PATH; skipping the real tmux test");
    }
    found
}

/// A private tmux server and a scratch directory, both removed on drop.
struct Server {
    socket: String,
    dir: PathBuf,
    /// The socket file, which tmux leaves behind when its server exits.
    socket_path: Option<PathBuf>,
}

impl Server {
    fn start() -> Server {
        let n = SERVERS.fetch_add(1, Ordering::Relaxed);
        let socket = format!("tp-control-{}-{n}", std::process::id());
        let dir = std::env::temp_dir().join(&socket);
        std::fs::create_dir_all(&dir).unwrap();
        let mut server = Server {
            socket,
            dir,
            socket_path: None,
        };
        let status = server
            .tmux()
            .args(["new-session", "-d", "-x", "80", "-y", "24"])
            .status();
        assert!(
            status.unwrap().success(),
            "could not start tmux server {}",
            server.socket
        );
        let path = server
            .tmux()
            .args(["display-message", "-p", "#{socket_path}"])
            .output();
        let path = String::from_utf8(path.unwrap().stdout).unwrap();
        server.socket_path = Some(PathBuf::from(path.trim_end()));
        server
    }

    fn tmux(&self) -> Process {
        let mut process = Process::new("tmux");
        process.args(["-L", &self.socket, "-f", "/dev/null"]);
        process
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self
            .tmux()
            .arg("kill-server")
            .stderr(Stdio::null())
            .status();
        let _ = std::fs::remove_dir_all(&self.dir);
        if let Some(path) = &self.socket_path {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// A `tmux -C attach` client whose output is parsed on a reader thread.
struct ControlClient {
    child: Child,
    stdin: Option<ChildStdin>,
    events: Receiver<Event>,
}

impl ControlClient {
    fn attach(server: &Server) -> ControlClient {
        let mut child = server
            .tmux()
            .args(["-C", "attach"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().unwrap();
        let (sender, events) = channel();
        thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            let mut parser = Parser::new();
            loop {
                let Ok(chunk) = reader.fill_buf() else { return };
                if chunk.is_empty() {
                    return;
                }
                parser.feed(chunk);
                let consumed = chunk.len();
                reader.consume(consumed);
                while let Some(event) = parser.next_event() {
                    if sender.send(event).is_err() {
                        return;
                    }
                }
            }
        });
        ControlClient {
            child,
            stdin,
            events,
        }
    }

    fn send(&mut self, line: &[u8]) {
        self.stdin.as_mut().unwrap().write_all(line).unwrap();
    }

    /// Collects the replies to this client's own commands until `count` arrived.
    fn replies(&mut self, count: usize) -> Vec<Reply> {
        let start = Instant::now();
        let mut replies = Vec::new();
        while replies.len() < count {
            let left = DEADLINE
                .checked_sub(start.elapsed())
                .expect("tmux did not reply in time");
            match self
                .events
                .recv_timeout(left)
                .expect("tmux did not reply in time")
            {
                Event::Reply(reply) if reply.flags == 1 => replies.push(reply),
                Event::Exit { reason } => panic!("control client exited: {reason:?}"),
                _ => {}
            }
        }
        replies
    }
}

impl Drop for ControlClient {
    fn drop(&mut self) {
        // Closing stdin makes the client exit; kill it if it lingers.
        drop(self.stdin.take());
        let start = Instant::now();
        while start.elapsed() < DEADLINE {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn nasty_strings() -> Vec<Vec<u8>> {
    let mut strings: Vec<Vec<u8>> = [
        "ends with;",
        r"\;",
        ";",
        "$(whoami)",
        "$HOME ${HOME}",
        "`id`",
        r#"both 'quotes' "here""#,
        "#{pane_id} #[fg=red] ##",
        "%",
        "%1",
        "%if",
        "~",
        "~root/x",
        "a\tb",
        "line1\nline2\n",
        "\\",
        "trailing backslash \\",
        "{ braces }",
        "héllo wörld ✓",
        "emoji 😀👍🏽",
        "-leading dash",
        "--",
        "\x7f",
        "\x01\x1b[31m",
        "  spaces  ",
    ]
    .iter()
    .map(|text| text.as_bytes().to_vec())
    .collect();
    strings.push(vec![0x80, 0xfe, 0xff, b'x', 0xff]);
    strings.push((1..=255).collect());
    strings
}

fn set_and_save(index: usize, data: &[u8], file: &Path) -> Vec<u8> {
    let buffer = format!("t{index}");
    let mut line = Command::new("set-buffer")
        .opt("-b", &buffer)
        .end_of_flags()
        .arg(data)
        .build()
        .unwrap();
    let save = Command::new("save-buffer")
        .opt("-b", &buffer)
        .arg(file.as_os_str().as_encoded_bytes());
    line.extend(save.build().unwrap());
    line
}

/// Reads a file that `save-buffer` writes. tmux ends the command's reply block before
/// the client finished writing the file, so wait (boundedly) for the expected length.
fn read_when_written(file: &Path, expected_len: usize) -> Vec<u8> {
    let start = Instant::now();
    loop {
        let saved = std::fs::read(file).unwrap_or_default();
        if saved.len() >= expected_len || start.elapsed() > DEADLINE {
            return saved;
        }
        thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn quoted_arguments_arrive_byte_for_byte() {
    if !tmux_available() {
        return;
    }
    let server = Server::start();
    let mut client = ControlClient::attach(&server);
    let strings = nasty_strings();
    let files: Vec<PathBuf> = (0..strings.len())
        .map(|i| server.dir.join(format!("out {i};$x")))
        .collect();
    for (index, data) in strings.iter().enumerate() {
        client.send(&set_and_save(index, data, &files[index]));
    }
    let replies = client.replies(2 * strings.len());
    for (reply, command) in replies
        .iter()
        .zip(["set-buffer", "save-buffer"].iter().cycle())
    {
        assert!(reply.ok, "{command} failed: {}", reply.text());
    }
    for (data, file) in strings.iter().zip(&files) {
        let saved = read_when_written(file, data.len());
        assert_eq!(
            saved,
            *data,
            "{:?} came back as {:?}",
            String::from_utf8_lossy(data),
            String::from_utf8_lossy(&saved)
        );
    }
}

#[test]
fn quoted_target_and_empty_argument_work() {
    if !tmux_available() {
        return;
    }
    let server = Server::start();
    let mut client = ControlClient::attach(&server);
    client.send(
        &Command::new("display-message")
            .flag("-p")
            .opt("-t", "%0")
            .arg("")
            .build()
            .unwrap(),
    );
    client.send(
        &Command::new("display-message")
            .flag("-p")
            .opt("-t", "%0")
            .arg("#{pane_id}")
            .build()
            .unwrap(),
    );
    let replies = client.replies(2);
    assert!(replies[0].ok, "{}", replies[0].text());
    assert_eq!(replies[0].lines, vec![Vec::<u8>::new()]);
    // The backslashes keep `#{}` away from the command parser, but display-message
    // itself expands formats in its argument, which is what tmux documents.
    assert_eq!(replies[1].text(), "%0");
}
