//! What `/proc` says about the processes in a pane: which process group has
//! the terminal, whether a shell runs a command string or a child. Read
//! through [`Procfs`], on the pane's own host. Linux only; elsewhere nothing
//! is found, and callers fall back to what tmux says.

use super::Shell;
use crate::procfs::Procfs;

/// A child of `shell` in the shell's own process group: a command the shell
/// runs in the foreground without job control (as `sh -c` does), which tmux
/// reports as the shell itself. Linux only; elsewhere nothing is found.
pub(super) fn foreground_child(fs: &dyn Procfs, shell: u32) -> Option<String> {
    let shell_group = process_group(fs, shell)?;
    fs.children(shell)
        .into_iter()
        .filter(|&pid| process_group(fs, pid) == Some(shell_group))
        // A child that exited meanwhile has no name left: it is not busy.
        .find_map(|pid| fs.text(pid, "comm"))
        .map(|name| name.trim().to_owned())
}

/// The leader of the terminal's foreground process group, seen from the
/// pane's first process: the interactive shell when it waits at its prompt
/// (whether or not the pane's first process is that shell itself).
pub(super) fn foreground_leader(fs: &dyn Procfs, pane_pid: u32) -> Option<u32> {
    stat_field(fs, pane_pid, TPGID).filter(|&group| group > 0)
}

/// The command string of a shell started with `-c` (as tmux starts the
/// command of `new-session CMD`), read from `/proc/PID/cmdline`; `None` for
/// any other process.
pub(super) fn command_string(fs: &dyn Procfs, pid: u32) -> Option<String> {
    let cmdline = fs.file(pid, "cmdline")?;
    let mut args = cmdline
        .split(|&b| b == 0)
        .map(|arg| String::from_utf8_lossy(arg).into_owned());
    let program = args.next()?;
    let name = program.rsplit('/').next().unwrap_or(&program);
    Shell::from_command(name)?;
    while let Some(arg) = args.next() {
        if arg == "--" || !arg.starts_with('-') {
            return None;
        }
        let short = !arg.starts_with("--");
        if short && arg.contains('c') {
            return args.next();
        }
    }
    None
}

/// Whether `shell` has the terminal again and runs nothing: its process
/// group is the foreground one and it has no child in it.
pub(super) fn idle_in_foreground(fs: &dyn Procfs, shell: u32) -> bool {
    stat_field(fs, shell, TPGID) == Some(shell) && foreground_child(fs, shell).is_none()
}

/// Whether `shell` is still a shell (a command may `exec` another program
/// in its place) and has the terminal to itself: see
/// [`idle_in_foreground`]. No program it runs can make this true while it
/// runs, whatever it prints.
pub(super) fn in_charge(fs: &dyn Procfs, shell: u32) -> bool {
    shell_kind(fs, shell).is_some() && idle_in_foreground(fs, shell)
}

/// Which shell `pid` is, by its name in `/proc`; `None` for another
/// program, or when `/proc` does not tell.
pub(super) fn shell_kind(fs: &dyn Procfs, pid: u32) -> Option<Shell> {
    name(fs, pid).and_then(|name| Shell::from_command(&name))
}

/// The name of `pid` when it is not a shell; `None` for a shell, or when
/// `/proc` does not tell.
pub(super) fn not_a_shell(fs: &dyn Procfs, pid: u32) -> Option<String> {
    name(fs, pid).filter(|name| Shell::from_command(name).is_none())
}

/// The name of `pid`'s program (`/proc/PID/comm`).
fn name(fs: &dyn Procfs, pid: u32) -> Option<String> {
    let comm = fs.text(pid, "comm")?;
    Some(comm.trim_end_matches('\n').to_owned())
}

/// The process group of `pid`.
fn process_group(fs: &dyn Procfs, pid: u32) -> Option<u32> {
    stat_field(fs, pid, PGRP)
}

/// Fields of `/proc/PID/stat`, counted from the one after the name.
const PGRP: usize = 2;
const TPGID: usize = 5;

/// A numeric field of `/proc/PID/stat` (the name in parentheses before the
/// fields may itself contain spaces and parentheses).
fn stat_field(fs: &dyn Procfs, pid: u32, field: usize) -> Option<u32> {
    let stat = fs.text(pid, "stat")?;
    let fields = &stat[stat.rfind(')')? + 1..];
    let value: i64 = fields.split_whitespace().nth(field)?.parse().ok()?;
    u32::try_from(value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::procfs::Here;
    use std::time::{Duration, Instant};

    /// The first `Some` from `probe`, polled for up to five seconds.
    fn eventually<T>(mut probe: impl FnMut() -> Option<T>) -> Option<T> {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let found = probe();
            if found.is_some() || Instant::now() >= deadline {
                return found;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn finds_a_foreground_child_of_a_shell() {
        let mut shell = std::process::Command::new("sh")
            .args(["-c", "sleep 5; true"])
            .spawn()
            .expect("sh runs");
        let pid = shell.id();
        // Until sh has exec'd sleep, the child is still called sh.
        let child = eventually(|| foreground_child(&Here, pid).filter(|name| name == "sleep"));
        let _ = shell.kill();
        let _ = shell.wait();
        assert_eq!(child.as_deref(), Some("sleep"));
        assert_eq!(foreground_child(&Here, u32::MAX), None);
    }

    #[test]
    fn tells_a_command_string_from_an_interactive_shell() {
        let mut shell = std::process::Command::new("sh")
            .args(["-ec", "sleep 5; true"])
            .spawn()
            .expect("sh runs");
        // Until the forked child has exec'd sh, its command line is ours.
        let script = eventually(|| command_string(&Here, shell.id()));
        let mut sleep = std::process::Command::new("sleep")
            .arg("5")
            .spawn()
            .expect("sleep runs");
        let not_a_shell = command_string(&Here, sleep.id());
        for child in [&mut shell, &mut sleep] {
            let _ = child.kill();
            let _ = child.wait();
        }
        assert_eq!(script.as_deref(), Some("sleep 5; true"));
        assert_eq!(not_a_shell, None);
        assert_eq!(command_string(&Here, u32::MAX), None);
    }
}
