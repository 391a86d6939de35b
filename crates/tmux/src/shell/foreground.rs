//! The facts about a pane's terminal that tell whether its program waits for
//! input: the processes of the terminal's foreground group, how each one
//! sleeps (`/proc/PID/stat`, `wchan`, `syscall`, its descriptors), and the
//! terminal's mode (`tcgetattr` on the pane's tty). Linux only; elsewhere
//! nothing is found, and nothing is ever reported as waiting.

use crate::input_state::{LeaderShell, ProcessFacts, Syscall};
use crate::procfs::{Fd, Procfs};

use super::Shell;
use super::proc::{command_string, foreground_leader};

/// The foreground group of a pane's terminal, and whether it is a lone
/// interactive shell.
pub(super) struct Foreground {
    pub(super) group: Vec<ProcessFacts>,
    pub(super) lone_shell: Option<LeaderShell>,
}

/// Reads the foreground group of the terminal `tty` whose first process is
/// `pane_pid`: the processes among `pane_pid` and its descendants that are
/// in the group the terminal's `tpgid` names, leader first.
pub(super) fn foreground(fs: &dyn Procfs, pane_pid: u32, tty: &str) -> Option<Foreground> {
    let group_id = foreground_leader(fs, pane_pid)?;
    let pids = foreground_pids(fs, pane_pid)?;
    let group: Vec<ProcessFacts> = pids
        .iter()
        .filter_map(|&pid| process(fs, pid, tty))
        .collect();
    let lone_shell = match pids.as_slice() {
        [leader] if *leader == group_id && command_string(fs, *leader).is_none() => group
            .first()
            .and_then(|p| shell_kind(&p.name))
            .filter(|&kind| kind == LeaderShell::Editing || !runs_script(fs, *leader)),
        _ => None,
    };
    Some(Foreground { group, lone_shell })
}

/// The pids of the terminal's foreground group among `pane_pid` and its
/// descendants, leader first.
pub(crate) fn foreground_pids(fs: &dyn Procfs, pane_pid: u32) -> Option<Vec<u32>> {
    let group_id = foreground_leader(fs, pane_pid)?;
    let mut pids = Vec::new();
    let mut queue = vec![pane_pid];
    while let Some(pid) = queue.pop() {
        queue.extend(fs.children(pid));
        if stat(fs, pid).is_some_and(|s| s.group == group_id) {
            pids.push(pid);
        }
    }
    pids.sort_by_key(|&pid| (pid != group_id, pid));
    Some(pids)
}

/// Whether a shell was given a script to run (an argument that is not an
/// option): `sh script.sh` reads in line mode as `sh` at its prompt does,
/// but it has no prompt.
fn runs_script(fs: &dyn Procfs, pid: u32) -> bool {
    let Some(cmdline) = fs.file(pid, "cmdline") else {
        return false;
    };
    cmdline
        .split(|&b| b == 0)
        .skip(1)
        .any(|arg| !arg.is_empty() && !arg.starts_with(b"-"))
}

fn shell_kind(name: &str) -> Option<LeaderShell> {
    match Shell::from_command(name)? {
        Shell::Bash | Shell::Zsh | Shell::Fish => Some(LeaderShell::Editing),
        Shell::Posix => Some(LeaderShell::Plain),
    }
}

/// The two fields of `/proc/PID/stat` read here.
struct Stat {
    state: char,
    group: u32,
}

fn stat(fs: &dyn Procfs, pid: u32) -> Option<Stat> {
    let stat = fs.text(pid, "stat")?;
    // The name in parentheses may itself hold spaces and parentheses.
    let mut fields = stat[stat.rfind(')')? + 1..].split_whitespace();
    let state = fields.next()?.chars().next()?;
    let group = fields.nth(1)?.parse().ok()?;
    Some(Stat { state, group })
}

pub(crate) fn process(fs: &dyn Procfs, pid: u32, tty: &str) -> Option<ProcessFacts> {
    let state = stat(fs, pid)?.state;
    let stdin = fs.fd_target(pid, 0);
    Some(ProcessFacts {
        name: fs.text(pid, "comm")?.trim().to_owned(),
        state,
        wchan: fs.text(pid, "wchan").unwrap_or_default().trim().to_owned(),
        syscall: fs
            .text(pid, "syscall")
            .and_then(|line| syscall(fs, pid, &line, tty)),
        stdin_is_tty: stdin.is_tty(tty),
        // A set-user-id program of another user's: its descriptors, wait
        // channel and system call may not be read.
        hidden: stdin == Fd::Hidden,
    })
}

/// Classifies `/proc/PID/syscall` (`NR ARG1 ...`, or `running`).
fn syscall(fs: &dyn Procfs, pid: u32, line: &str, tty: &str) -> Option<Syscall> {
    let mut fields = line.split_whitespace();
    let number: i64 = fields.next()?.parse().ok()?;
    let first = fields.next()?.trim_start_matches("0x");
    Some(if READS.contains(&number) {
        let fd = u32::from_str_radix(first, 16).ok()?;
        Syscall::Read {
            tty: fs.fd_target(pid, fd).is_tty(tty),
        }
    } else if POLLS.contains(&number) {
        Syscall::Poll
    } else {
        Syscall::Other
    })
}

/// System call numbers of `read`, `readv`, `pread64`; and of `poll`,
/// `select`, `pselect6`, `ppoll`, `epoll_wait`, `epoll_pwait`,
/// `epoll_pwait2`.
#[cfg(target_arch = "x86_64")]
const READS: &[i64] = &[0, 19, 17];
#[cfg(target_arch = "x86_64")]
const POLLS: &[i64] = &[7, 23, 270, 271, 232, 281, 441];
#[cfg(target_arch = "aarch64")]
const READS: &[i64] = &[63, 65, 67];
#[cfg(target_arch = "aarch64")]
const POLLS: &[i64] = &[72, 73, 22, 441];
// Elsewhere the wait channel alone is read.
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const READS: &[i64] = &[];
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const POLLS: &[i64] = &[];

#[cfg(test)]
mod tests {
    use super::*;
    use crate::procfs::Here;

    #[test]
    fn reads_its_own_state() {
        let me = std::process::id();
        let facts = process(&Here, me, "/nonexistent").expect("own /proc entry");
        // The test harness's main thread waits for the test threads.
        assert!(matches!(facts.state, 'R' | 'S'));
        assert!(!facts.name.is_empty());
        assert!(!facts.stdin_is_tty && !facts.hidden);
        assert!(stat(&Here, u32::MAX).is_none());
    }

    #[test]
    fn a_child_reading_a_pipe_is_not_reading_a_terminal() {
        let mut child = std::process::Command::new("cat")
            .stdin(std::process::Stdio::piped())
            .spawn()
            .expect("cat runs");
        let pid = child.id();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        let mut seen = None;
        while std::time::Instant::now() < deadline {
            seen = process(&Here, pid, "/nonexistent").filter(|p| p.state == 'S');
            if seen.is_some() {
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let ours = Here.children(std::process::id()).contains(&pid);
        let _ = child.kill();
        let _ = child.wait();
        let seen = seen.expect("cat sleeps");
        assert!(ours);
        assert_eq!(seen.name, "cat");
        assert!(!matches!(seen.syscall, Some(Syscall::Read { tty: true })));
    }
}
