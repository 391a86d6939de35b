//! Reading the processes of a pane where they run.
//!
//! Which shell a pane runs, whether it is at its prompt and whether its
//! program waits for input are read in `/proc` and from the terminal's mode.
//! For a server on this machine that is `/proc` here ([`Here`]). For a server
//! on another host, pids name processes there: one shell script run on that
//! host ([`crate::transport::Transport::shell`]) dumps the pane's process
//! tree and its terminal's mode, and a [`Snapshot`] answers from the dump.
//! This machine's `/proc` is never read for another host's pane.

use std::collections::HashMap;

use crate::input_state::TtyMode;

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
/// line a fact, `P PID` starting each process. Runs under any POSIX `sh`
/// with `od`, `tr`, `readlink` and `stty` (coreutils or busybox).
pub(crate) fn dump_script(pid: u32, tty: &str) -> String {
    let tty = crate::transport::shell_quote(tty);
    format!(
        r#"d() {{
  for p in "$@"; do
    [ -r /proc/$p/stat ] || continue
    echo "P $p"
    for f in stat comm wchan syscall; do printf '%s ' "$f"; tr '\n' ' ' < /proc/$p/$f 2>/dev/null; echo; done
    printf 'cmdline '; od -An -tx1 -v /proc/$p/cmdline 2>/dev/null | tr -d ' \n'; echo
    k=$(cat /proc/$p/task/*/children 2>/dev/null)
    echo "kids " $k
    ls /proc/$p/fd >/dev/null 2>&1 || echo hidden
    x=$(readlink /proc/$p/exe 2>/dev/null) && echo "exe $x"
    for f in /proc/$p/fd/*; do t=$(readlink "$f" 2>/dev/null) && echo "fd ${{f##*/}} $t"; done
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
                    if let Some(bytes) = unhex(rest.trim()) {
                        entry.files.insert(key.to_owned(), bytes);
                    }
                }
                "hidden" => entry.hidden = true,
                "exe" => entry.exe = Some(rest.to_owned()),
                "kids" => {
                    entry.children = rest
                        .split_whitespace()
                        .filter_map(|pid| pid.parse().ok())
                        .collect();
                }
                "fd" => {
                    if let Some((fd, target)) = rest.split_once(' ')
                        && let Ok(fd) = fd.parse()
                    {
                        entry.fds.insert(fd, target.to_owned());
                    }
                }
                _ => {}
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
                    syscall 7 0x1 \ncmdline 2d626173680041\nkids  20 21\nfd 0 /dev/pts/3\n\
                    fd 1 /dev/pts/3\nP 20\nstat 20 (cat) S 10 20 10 34816 20 \ncomm cat \n\
                    wchan \nsyscall \ncmdline 636174\nkids \n\
                    tty 4500:5:bf:8a3b:3:1c:7f:15:4:0:1:0:11:13:1a:0:12:f:17:16:0:0:0\n";
        let snap = Snapshot::parse(dump, "/dev/pts/3");
        assert_eq!(snap.text(10, "comm").as_deref(), Some("bash\n"));
        assert_eq!(snap.file(10, "cmdline").unwrap(), b"-bash\0A");
        assert_eq!(snap.children(10), [20, 21]);
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
