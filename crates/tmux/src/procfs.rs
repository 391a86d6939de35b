//! Reading the processes of a pane where they run.
//!
//! Which shell a pane runs, whether it is at its prompt and whether its
//! program waits for input are read in `/proc` and from the terminal's mode.
//! For a server on this machine that is `/proc` here ([`Here`]). For a server
//! on another host, pids name processes there: one shell script run on that
//! host dumps the pane's process tree and its terminal's mode, and a
//! [`Snapshot`] answers from the dump. This machine's `/proc` is never read
//! for another host's pane.
//!
//! The script runs through the control connection that is already open: the
//! tmux server there runs it (`run-shell`), it hands its dump to the server
//! as a paste buffer, and the same command line reads the buffer back, so a
//! look costs one round trip and starts no process here. Looks at one pane
//! with no output between them share one dump (see [`Dumps`]). Where that
//! cannot work (no `/proc/PID/exe` of tmux there), the transport runs the
//! script instead ([`crate::transport::Transport::shell`]). A command's
//! keys can bring a look along ([`LookAhead`], in `look_ahead`), which
//! arrives with the command's end marker.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use termpilot_control::{Command, PaneId};
use tokio::time::Instant;

use crate::engine::Engine;
use crate::input_state::TtyMode;

mod look_ahead;
pub(crate) use look_ahead::LookAhead;

/// How long a finished dump answers further looks at its pane while the
/// pane prints nothing: the looks of one step of a call (is the shell back?
/// is its line editor reading?), not a look after a pause (the shortest,
/// the 25 ms of a starting shell's settle, wants a new dump).
const REUSE: Duration = Duration::from_millis(20);

/// How long a dump may take before its facts count as unknown.
const DUMP_LIMIT: Duration = Duration::from_secs(3);

/// The dumps taken of each remote pane, newest only.
#[derive(Debug, Default)]
pub(crate) struct Dumps {
    /// A std `Mutex`: held to look up or replace an entry, never across an
    /// `.await`.
    newest: Mutex<HashMap<PaneId, Arc<Dump>>>,
    /// Numbers the paste buffers dumps travel in.
    next: AtomicU64,
    /// Set once the server could not run a dump: the transport runs them.
    through_transport: AtomicBool,
}

/// One dump of a pane's processes: asked for when the pane's journal ended
/// at `asked_at_end`, shared by every look that comes before it is stale
/// (the pane printed, something was typed into it, or it is old).
#[derive(Debug)]
struct Dump {
    pid: u32,
    tty: String,
    asked_at_end: u64,
    snapshot: tokio::sync::OnceCell<Arc<Snapshot>>,
    /// When it arrived.
    done: OnceLock<Instant>,
    /// Set when something was typed into the pane since it was asked for:
    /// what the keys start shows in no output yet.
    typed_since: AtomicBool,
}

impl Dump {
    /// Whether a look at `pid`/`tty` now, with the journal ending at `end`,
    /// may take this dump: nothing printed since it was asked for, and it
    /// is on its way or fresh.
    fn serves(&self, pid: u32, tty: &str, end: u64) -> bool {
        self.pid == pid
            && self.tty == tty
            && self.asked_at_end == end
            && !self.typed_since.load(Ordering::Relaxed)
            && self.done.get().is_none_or(|at| at.elapsed() < REUSE)
    }
}

impl Dumps {
    /// Keeps the pane's dump from serving looks from now on: something is
    /// being typed into the pane.
    pub(crate) fn typed_into(&self, pane: PaneId) {
        let newest = self.newest.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(dump) = newest.get(&pane) {
            dump.typed_since.store(true, Ordering::Relaxed);
        }
    }

    /// The commands that run `script` on the server's host with
    /// `run-shell` and read its output back (`show-buffer`) from a paste
    /// buffer of its own, which the last deletes.
    fn read_back(&self, script: &str) -> [(Command, Option<PaneId>); 3] {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let buffer = format!("termpilot-dump-{n}");
        let job = run_shell_job(script, &buffer);
        [
            (Command::new("run-shell").arg(job), None),
            (Command::new("show-buffer").opt("-b", &buffer), None),
            (Command::new("delete-buffer").opt("-b", &buffer), None),
        ]
    }

    /// The first process and terminal of `pane` as its last dump named
    /// them: a pane keeps both for its life, so the next dump can be asked
    /// for before the pane's facts are back.
    pub(crate) fn last_procs(&self, pane: PaneId) -> Option<(u32, String)> {
        let newest = self.newest.lock().unwrap_or_else(|e| e.into_inner());
        newest.get(&pane).map(|dump| (dump.pid, dump.tty.clone()))
    }
}

impl Engine {
    /// The processes under `pid` (the first process of `pane`) and the
    /// mode of its terminal `tty`, read where the pane runs: `/proc` here
    /// for a local server, a dump taken on the host for another (empty when
    /// the host cannot be asked, so nothing is known).
    pub(crate) async fn procfs(&self, pane: PaneId, pid: u32, tty: &str) -> Arc<dyn Procfs> {
        if self.panes_are_local() {
            return Arc::new(Here);
        }
        let dumps = &self.shared.dumps;
        let end = self.journal_end(pane);
        let dump = {
            let mut newest = dumps.newest.lock().unwrap_or_else(|e| e.into_inner());
            match newest.get(&pane) {
                Some(dump) if dump.serves(pid, tty, end) => Arc::clone(dump),
                _ => {
                    let dump = Arc::new(Dump {
                        pid,
                        tty: tty.to_owned(),
                        asked_at_end: end,
                        snapshot: tokio::sync::OnceCell::new(),
                        done: OnceLock::new(),
                        typed_since: AtomicBool::new(false),
                    });
                    newest.insert(pane, Arc::clone(&dump));
                    dump
                }
            }
        };
        let snapshot = dump
            .snapshot
            .get_or_init(|| async {
                let snapshot = self.dump(pid, tty).await;
                let _ = dump.done.set(Instant::now());
                Arc::new(snapshot)
            })
            .await;
        Arc::clone(snapshot) as Arc<dyn Procfs>
    }

    /// Takes one dump on the pane's host: through the tmux server, or
    /// through the transport where the server cannot run it.
    pub(crate) async fn dump(&self, pid: u32, tty: &str) -> Snapshot {
        let script = dump_script(pid, tty);
        let dumps = &self.shared.dumps;
        if !dumps.through_transport.load(Ordering::Relaxed) {
            match tokio::time::timeout(DUMP_LIMIT, self.dump_through_server(&script)).await {
                Ok(Ok(dump)) => return Snapshot::parse(&dump, tty),
                Ok(Err(e)) => {
                    tracing::debug!(error = %e, "the server cannot dump processes");
                    // tmux refused the line (no buffer came back): the
                    // server's host cannot run the job, and never will.
                    let lost = matches!(
                        e,
                        crate::Error::Disconnected { .. }
                            | crate::Error::SessionEnded { .. }
                            | crate::Error::Connect { .. }
                    );
                    if !lost {
                        dumps.through_transport.store(true, Ordering::Relaxed);
                    }
                }
                Err(_) => return Snapshot::default(),
            }
        }
        let ran = tokio::time::timeout(DUMP_LIMIT, self.shared.transport.shell(&script)).await;
        match ran {
            Ok(Ok(ended)) => Snapshot::parse(ended.printed(), tty),
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "cannot read the host's processes");
                Snapshot::default()
            }
            Err(_) => Snapshot::default(),
        }
    }

    /// Runs `script` on the server's host with `run-shell`, which hands
    /// its output to the server as a paste buffer (run by the server's own
    /// executable, on its own socket), reads the buffer back and deletes
    /// it: one command line, one round trip.
    async fn dump_through_server(&self, script: &str) -> crate::Result<String> {
        let group = crate::engine::group(self.shared.dumps.read_back(script))?;
        let client = self.primary().await?;
        let answers = client.call_group(group).await?;
        // A failed command ends the line: its `%error` is the last reply.
        let mut answers = answers.into_iter();
        let shown = answers.nth(1).ok_or_else(|| crate::Error::Command {
            command: "run-shell".into(),
            message: "no reply".into(),
        })?;
        Ok(crate::engine::ok_reply(shown)?.text())
    }
}

/// The shell command `run-shell` runs for `script`: its output goes to
/// paste buffer `buffer` of the same server, never to a pane (tmux shows a
/// job's output, and a failure's status, in the current pane), and it ends
/// with status 0. `#` is doubled, since `run-shell` expands formats first;
/// `#{pid}` and `#{socket_path}` are the server's.
fn run_shell_job(script: &str, buffer: &str) -> String {
    let script = script.replace('#', "##");
    format!(
        "{{\n{script}}} 2>/dev/null | /proc/#{{pid}}/exe -S #{{q:socket_path}} load-buffer -b {buffer} - \
         >/dev/null 2>&1; true"
    )
}

/// What the engine reads about processes, wherever they run.
pub(crate) trait Procfs: Send + Sync {
    /// A file of `/proc/PID/`: `stat`, `comm`, `cmdline`, `wchan`, `syscall`.
    fn file(&self, pid: u32, name: &str) -> Option<Vec<u8>>;
    /// The children of every thread of `pid`.
    fn children(&self, pid: u32) -> Vec<u32>;
    /// Where descriptor `fd` of `pid` points (`/dev/pts/3`, `pipe:[123]`).
    fn fd_target(&self, pid: u32, fd: u32) -> Fd;
    /// The mode of the terminal `tty`.
    fn tty_mode(&self, tty: &str) -> Option<TtyMode>;
    /// The executable `pid` runs (`/proc/PID/exe`), hidden for another
    /// user's process.
    fn exe(&self, pid: u32) -> Fd;

    /// [`Procfs::file`] as text.
    fn text(&self, pid: u32, name: &str) -> Option<String> {
        self.file(pid, name)
            .map(|bytes| String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// Where a descriptor (or `/proc/PID/exe`) points, if it may be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Fd {
    /// Its target.
    Target(String),
    /// The process is another user's (a set-user-id program such as sudo):
    /// its descriptors, wait channel and system call may not be read.
    Hidden,
    /// No such descriptor or process.
    Absent,
}

impl Fd {
    /// Whether it is the terminal `tty` (or `/dev/tty`, the controlling
    /// terminal, which for a process of its foreground group is `tty`).
    pub(crate) fn is_tty(&self, tty: &str) -> bool {
        matches!(self, Fd::Target(target) if target == tty || target == "/dev/tty")
    }
}

/// `/proc` of this machine, read as it is asked.
pub(crate) struct Here;

impl Procfs for Here {
    fn file(&self, pid: u32, name: &str) -> Option<Vec<u8>> {
        std::fs::read(format!("/proc/{pid}/{name}")).ok()
    }

    fn children(&self, pid: u32) -> Vec<u32> {
        let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
            return Vec::new();
        };
        tasks
            .flatten()
            .filter_map(|task| std::fs::read_to_string(task.path().join("children")).ok())
            .flat_map(|list| {
                list.split_whitespace()
                    .filter_map(|child| child.parse().ok())
                    .collect::<Vec<u32>>()
            })
            .collect()
    }

    fn fd_target(&self, pid: u32, fd: u32) -> Fd {
        self.fd_link(pid, &format!("fd/{fd}"))
    }

    fn exe(&self, pid: u32) -> Fd {
        self.fd_link(pid, "exe")
    }

    fn tty_mode(&self, tty: &str) -> Option<TtyMode> {
        use rustix::fs::{Mode, OFlags, open};
        use rustix::termios::{LocalModes, tcgetattr};
        let flags = OFlags::RDONLY | OFlags::NOCTTY | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let fd = open(tty, flags, Mode::empty()).ok()?;
        let termios = tcgetattr(&fd).ok()?;
        Some(TtyMode {
            echo: termios.local_modes.contains(LocalModes::ECHO),
            canonical: termios.local_modes.contains(LocalModes::ICANON),
        })
    }
}

impl Here {
    /// Where the link `/proc/PID/NAME` points.
    fn fd_link(&self, pid: u32, name: &str) -> Fd {
        match std::fs::read_link(format!("/proc/{pid}/{name}")) {
            Ok(target) => Fd::Target(target.to_string_lossy().into_owned()),
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => Fd::Hidden,
            Err(_) => Fd::Absent,
        }
    }
}

/// One process as the dump shows it.
#[derive(Debug, Default, Clone)]
struct Entry {
    files: HashMap<String, Vec<u8>>,
    children: Vec<u32>,
    fds: HashMap<u32, String>,
    /// Its executable, when readable.
    exe: Option<String>,
    /// Its descriptors could not be listed.
    hidden: bool,
}

/// A pane's process tree and terminal mode, dumped at one moment on the
/// pane's own host.
#[derive(Debug, Default, Clone)]
pub(crate) struct Snapshot {
    processes: HashMap<u32, Entry>,
    tty: Option<(String, TtyMode)>,
}

/// The script that dumps the tree under `pid` and the mode of `tty`: one
/// line a fact, `P PID` starting each process, its executable and its
/// descriptors as `ls -l` lists them (`.../exe -> PATH`, `0 -> /dev/pts/3`),
/// `hidden` when its descriptors may not be read. Runs under any POSIX `sh`
/// with `od`, `ls` and `stty` (coreutils or busybox); the files of `/proc`
/// are read with the shell's own `read`, so a process costs two programs
/// (a dump is part of a remote call's time).
pub(crate) fn dump_script(pid: u32, tty: &str) -> String {
    let tty = crate::transport::shell_quote(tty);
    format!(
        r#"d() {{
  for p in "$@"; do
    [ -r /proc/$p/stat ] || continue
    echo "P $p"
    for f in stat comm wchan syscall; do v=; read -r v < /proc/$p/$f 2>/dev/null; printf '%s %s\n' $f "$v"; done
    echo cmdline $(od -An -tx1 -v /proc/$p/cmdline 2>/dev/null)
    k=
    for t in /proc/$p/task/*/children; do c=; read -r c < $t 2>/dev/null; k="$k $c"; done
    echo "kids $k"
    [ -r /proc/$p/fd ] || echo hidden
    ls -l /proc/$p/exe /proc/$p/fd 2>/dev/null
    d $k
  done
}}
d {pid}
printf 'tty '; stty -g < {tty} 2>/dev/null; echo
"#
    )
}

impl Snapshot {
    /// Reads what [`dump_script`] printed for terminal `tty`.
    pub(crate) fn parse(dump: &str, tty: &str) -> Snapshot {
        let mut snapshot = Snapshot::default();
        let mut current: Option<u32> = None;
        for line in dump.lines() {
            let (key, rest) = line.split_once(' ').unwrap_or((line, ""));
            if key == "P" {
                current = rest.trim().parse().ok();
                if let Some(pid) = current {
                    snapshot.processes.entry(pid).or_default();
                }
                continue;
            }
            if key == "tty" {
                snapshot.tty = stty_mode(rest.trim()).map(|mode| (tty.to_owned(), mode));
                continue;
            }
            let Some(entry) = current.and_then(|pid| snapshot.processes.get_mut(&pid)) else {
                continue;
            };
            match key {
                "stat" | "comm" | "wchan" | "syscall" => {
                    // The dump turned newlines into spaces: put back the
                    // one `comm` ends with; the readers trim the others.
                    let mut value = rest.trim_end().as_bytes().to_vec();
                    if key == "comm" {
                        value.push(b'\n');
                    }
                    if !value.is_empty() {
                        entry.files.insert(key.to_owned(), value);
                    }
                }
                "cmdline" => {
                    let digits: String = rest.split_whitespace().collect();
                    if let Some(bytes) = unhex(&digits) {
                        entry.files.insert(key.to_owned(), bytes);
                    }
                }
                "hidden" => entry.hidden = true,
                "kids" => {
                    entry.children = rest
                        .split_whitespace()
                        .filter_map(|pid| pid.parse().ok())
                        .collect();
                }
                _ => {
                    // `ls -l`: `lrwx------ 1 me me 64 Nov 26 20:58 0 -> /dev/pts/3`,
                    // and `... /proc/10/exe -> /usr/bin/bash` before them.
                    let Some((head, target)) = line.split_once(" -> ") else {
                        continue;
                    };
                    let name = head.split_whitespace().last().unwrap_or_default();
                    if name.ends_with("/exe") {
                        entry.exe = Some(target.to_owned());
                    } else if let Ok(fd) = name.parse() {
                        entry.fds.insert(fd, target.to_owned());
                    }
                }
            }
        }
        snapshot
    }
}

impl Procfs for Snapshot {
    fn file(&self, pid: u32, name: &str) -> Option<Vec<u8>> {
        self.processes.get(&pid)?.files.get(name).cloned()
    }

    fn children(&self, pid: u32) -> Vec<u32> {
        self.processes
            .get(&pid)
            .map(|entry| entry.children.clone())
            .unwrap_or_default()
    }

    fn fd_target(&self, pid: u32, fd: u32) -> Fd {
        match self.processes.get(&pid) {
            Some(entry) if entry.hidden => Fd::Hidden,
            Some(entry) => entry.fds.get(&fd).cloned().map_or(Fd::Absent, Fd::Target),
            None => Fd::Absent,
        }
    }

    fn exe(&self, pid: u32) -> Fd {
        match self.processes.get(&pid) {
            Some(entry) if entry.hidden => Fd::Hidden,
            Some(entry) => entry.exe.clone().map_or(Fd::Absent, Fd::Target),
            None => Fd::Absent,
        }
    }

    fn tty_mode(&self, tty: &str) -> Option<TtyMode> {
        self.tty
            .as_ref()
            .filter(|(dumped, _)| dumped == tty)
            .map(|(_, mode)| *mode)
    }
}

/// Hex digits, two a byte, to bytes.
fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// The mode in `stty -g` output (`iflag:oflag:cflag:lflag:...` in hex, as
/// GNU coreutils and busybox print it).
fn stty_mode(saved: &str) -> Option<TtyMode> {
    const ECHO: u32 = 0o10;
    const ICANON: u32 = 0o2;
    let lflag = u32::from_str_radix(saved.split(':').nth(3)?, 16).ok()?;
    Some(TtyMode {
        echo: lflag & ECHO != 0,
        canonical: lflag & ICANON != 0,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_dump_reads_back() {
        let dump = "P 10\nstat 10 (bash) S 1 10 10 34816 20 \ncomm bash \nwchan do_select\n\
                    syscall 7 0x1 \ncmdline 2d 62 61 73 68 00 41\nkids  20 21\n\
                    lrwxrwxrwx 1 me me 0 Nov 26 20:58 /proc/10/exe -> /usr/bin/bash\n\n\
                    /proc/10/fd:\ntotal 0\n\
                    lrwx------ 1 me me 64 Nov 26 20:58 0 -> /dev/pts/3\n\
                    lrwx------ 1 me me 64 Nov 26 20:58 1 -> /dev/pts/3\nP 20\nstat 20 (cat) S 10 20 10 34816 20 \ncomm cat \n\
                    wchan \nsyscall \ncmdline 636174\nkids \n\
                    tty 4500:5:bf:8a3b:3:1c:7f:15:4:0:1:0:11:13:1a:0:12:f:17:16:0:0:0\n";
        let snap = Snapshot::parse(dump, "/dev/pts/3");
        assert_eq!(snap.text(10, "comm").as_deref(), Some("bash\n"));
        assert_eq!(snap.file(10, "cmdline").unwrap(), b"-bash\0A");
        assert_eq!(snap.children(10), [20, 21]);
        assert_eq!(snap.exe(10), Fd::Target("/usr/bin/bash".into()));
        assert_eq!(snap.exe(20), Fd::Absent);
        assert!(snap.fd_target(10, 0).is_tty("/dev/pts/3"));
        assert_eq!(snap.fd_target(10, 2), Fd::Absent);
        let hidden = Snapshot::parse("P 7\ncomm sudo \nhidden\n", "/dev/pts/3");
        assert_eq!(hidden.fd_target(7, 0), Fd::Hidden);
        assert_eq!(snap.file(20, "wchan"), None, "an empty file is absent");
        assert!(snap.text(10, "stat").unwrap().starts_with("10 (bash) S"));
        let mode = snap.tty_mode("/dev/pts/3").unwrap();
        assert!(mode.echo && mode.canonical);
        assert_eq!(snap.tty_mode("/dev/pts/4"), None);
        assert!(snap.children(99).is_empty());
    }

    #[test]
    fn the_script_dumps_what_proc_here_says() {
        let mut child = std::process::Command::new("sleep")
            .arg("5")
            .stdin(std::process::Stdio::piped())
            .spawn()
            .expect("sleep runs");
        let pid = child.id();
        let output = std::process::Command::new("sh")
            .args(["-c", &dump_script(pid, "/dev/null")])
            .output()
            .expect("sh runs");
        let _ = child.kill();
        let _ = child.wait();
        let snap = Snapshot::parse(&String::from_utf8_lossy(&output.stdout), "/dev/null");
        assert_eq!(snap.text(pid, "comm").as_deref(), Some("sleep\n"));
        assert_eq!(snap.file(pid, "cmdline").unwrap(), b"sleep\x005\x00");
        let stat = snap.text(pid, "stat").unwrap();
        assert!(stat.starts_with(&format!("{pid} (sleep) ")), "{stat}");
        assert!(matches!(snap.fd_target(pid, 0), Fd::Target(t) if t.starts_with("pipe:")));
        assert!(matches!(snap.exe(pid), Fd::Target(exe) if exe.ends_with("/sleep")));
        // /dev/null is no terminal: no mode.
        assert_eq!(snap.tty_mode("/dev/null"), None);
    }

    #[test]
    fn a_dump_serves_looks_until_the_pane_prints_or_it_gets_old() {
        let dump = Dump {
            pid: 10,
            tty: "/dev/pts/3".into(),
            asked_at_end: 500,
            snapshot: tokio::sync::OnceCell::new(),
            done: OnceLock::new(),
            typed_since: AtomicBool::new(false),
        };
        assert!(dump.serves(10, "/dev/pts/3", 500), "on its way");
        assert!(
            !dump.serves(10, "/dev/pts/3", 501),
            "the pane printed since"
        );
        assert!(!dump.serves(11, "/dev/pts/3", 500) && !dump.serves(10, "/dev/pts/4", 500));
        dump.typed_since.store(true, Ordering::Relaxed);
        assert!(!dump.serves(10, "/dev/pts/3", 500), "keys went in since");
        dump.typed_since.store(false, Ordering::Relaxed);
        dump.done.set(Instant::now() - REUSE).unwrap();
        assert!(!dump.serves(10, "/dev/pts/3", 500), "too old");
    }

    #[test]
    fn the_job_doubles_hashes_and_reports_nothing() {
        let job = run_shell_job("echo ${f##*/} #x\n", "termpilot-dump-1");
        assert!(job.contains("${f####*/} ##x"), "{job}");
        assert!(
            job.contains("/proc/#{pid}/exe -S #{q:socket_path} load-buffer -b termpilot-dump-1 -")
        );
        assert!(job.ends_with("; true"), "{job}");
    }

    #[test]
    fn stty_modes() {
        // Raw mode (readline at a prompt): neither ECHO nor ICANON.
        let raw = stty_mode("4500:5:bf:8a31:3:1c:7f:15:4:0:1:0").unwrap();
        assert!(!raw.echo && !raw.canonical);
        // A password prompt: ICANON without ECHO.
        let secret = stty_mode("4500:5:bf:8a33:3:1c").unwrap();
        assert!(!secret.echo && secret.canonical);
        assert!(stty_mode("").is_none() && stty_mode("a:b").is_none());
        assert!(unhex("6").is_none() && unhex("zz").is_none());
    }
}
