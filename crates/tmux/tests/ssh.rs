//! tmux reached over ssh, the way a remote host is: `ssh -F CONFIG -T -o
//! BatchMode=yes ALIAS tmux -L NAME -C ...` against a private sshd on
//! loopback (`support/sshd.rs`). Skipped, saying why, without openssh.

#[path = "support/sshd.rs"]
mod sshd;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use sshd::Sshd;

const LIMIT: Duration = Duration::from_secs(10);

/// A tmux server started through ssh; killed through ssh, its socket file
/// removed, when dropped.
struct RemoteTmux<'a> {
    sshd: &'a Sshd,
    name: String,
    socket: Option<PathBuf>,
}

impl RemoteTmux<'_> {
    fn tmux(&self, args: &[&str]) -> std::process::Output {
        let mut words = vec!["tmux", "-L", &self.name, "-f", "/dev/null"];
        words.extend(args);
        self.sshd.ssh(&words)
    }
}

impl Drop for RemoteTmux<'_> {
    fn drop(&mut self) {
        let _ = self.tmux(&["kill-server"]);
        if let Some(socket) = &self.socket {
            let _ = std::fs::remove_file(socket);
        }
    }
}

/// Reads lines of `reader` on a thread, so that each read can be bounded.
fn lines_of(reader: impl std::io::Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(reader).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

#[test]
fn a_control_mode_client_runs_over_ssh() {
    if let Some(reason) = sshd::missing_reason() {
        eprintln!("skipped: {reason}");
        return;
    }
    let sshd = Sshd::start();
    let mut remote = RemoteTmux {
        sshd: &sshd,
        name: format!("tp-ssh-{}", std::process::id()),
        socket: None,
    };

    let created = remote.tmux(&["-C", "new-session", "-d", "-s", "over-ssh"]);
    let text = String::from_utf8_lossy(&created.stdout);
    assert!(created.status.success(), "{created:?}\n{}", sshd.log_text());
    assert!(
        text.starts_with("%begin ") && text.contains("\n%end "),
        "{text}"
    );
    // The remote shell parses the words again: quote the format's `#`.
    let socket = remote.tmux(&["display-message", "-p", "'#{socket_path}'"]);
    let socket = String::from_utf8_lossy(&socket.stdout).trim().to_owned();
    assert!(socket.ends_with(&format!("/{}", remote.name)), "{socket}");
    remote.socket = Some(PathBuf::from(&socket));

    // A control client over the ssh connection's pipes: one command, its
    // reply block, then the empty line that detaches it.
    let mut client = sshd
        .command()
        .args(["tmux", "-L", &remote.name, "-f", "/dev/null", "-C"])
        .args(["attach-session", "-t", "over-ssh"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("ssh runs");
    let lines = lines_of(client.stdout.take().expect("stdout"));
    let mut stdin = client.stdin.take().expect("stdin");
    stdin
        .write_all(b"display-message -p \"#{session_name} #{socket_path}\"\n")
        .expect("send a command");
    // The attach itself answers with an empty block first.
    let mut reply = Vec::new();
    while let Ok(line) = lines.recv_timeout(LIMIT) {
        let end = line.starts_with("%end ") || line.starts_with("%error ");
        let empty = reply
            .last()
            .is_some_and(|l: &String| l.starts_with("%begin "));
        reply.push(line);
        if end && !empty {
            break;
        }
    }
    stdin.write_all(b"\n").expect("detach");
    drop(stdin);
    let exit = (0..LIMIT.as_millis() / 20).find_map(|_| {
        std::thread::sleep(Duration::from_millis(20));
        client.try_wait().expect("ssh status")
    });
    if exit.is_none() {
        let _ = client.kill();
        let _ = client.wait();
    }

    let Some(end) = reply.last().filter(|l| l.starts_with("%end ")) else {
        panic!("no reply block: {reply:?}");
    };
    let answer = &reply[reply.len() - 2];
    assert!(end.ends_with(" 1"), "not this client's block: {reply:?}");
    assert_eq!(answer, &format!("over-ssh {socket}"), "{reply:?}");
    assert!(
        exit.is_some_and(|s| s.success()),
        "ssh did not end after detaching: {exit:?}"
    );

    // The server lives on this machine: reachable by its socket path.
    let local = Command::new("tmux")
        .args(["-S", &socket, "has-session", "-t", "over-ssh"])
        .status()
        .expect("tmux runs");
    assert!(local.success());

    let killed = remote.tmux(&["kill-server"]);
    assert!(killed.status.success(), "{killed:?}");
    let gone = Command::new("tmux")
        .args(["-S", &socket, "has-session"])
        .stderr(Stdio::null())
        .status()
        .expect("tmux runs");
    assert!(!gone.success(), "the server outlived kill-server");
}
