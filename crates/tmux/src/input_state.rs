//! Whether the program in a pane waits for input: a pure decision over facts
//! the kernel reports (no I/O here; `shell::awaiting` gathers the facts).
//!
//! A program waits for input when every process of the terminal's
//! foreground group sleeps, at least one of them in a read of the terminal
//! (a line-mode reader: `read -p`, `cat`, a password prompt), or in a
//! `poll`/`select`/`epoll` wait while the terminal is in raw mode (a program
//! that reads keys itself: a readline REPL, `less`, an editor), and the pane
//! has printed nothing for the settle time. A sleeping `sleep`, `tail -f`
//! (a poll in line mode) or a reader of a pipe does not count, nor does a
//! busy process. An interactive shell at its own prompt is not a program
//! waiting for input: it is the end of whatever ran before.
//!
//! A set-user-id program (sudo, su, passwd) run by the user the server runs
//! as hides how it waits: `/proc` shows its state but not its wait channel,
//! system call or descriptors. Asleep while the terminal reads lines without
//! echo, the mode these programs set to ask for a password, it counts as
//! waiting at a password prompt; any other wait of such a program cannot be
//! told from work (a `sudo apt-get` asking `[Y/n]` is not seen).

use std::time::Duration;

/// What one process of the foreground group is doing, as `/proc` tells it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProcessFacts {
    /// Its name (`/proc/PID/comm`).
    pub name: String,
    /// The state letter of `/proc/PID/stat` (`R`, `S`, `D`, `T`, `Z`, ...).
    pub state: char,
    /// The kernel function it sleeps in (`/proc/PID/wchan`), empty if unknown.
    pub wchan: String,
    /// The system call it is blocked in (`/proc/PID/syscall`), when readable.
    pub syscall: Option<Syscall>,
    /// Its standard input is the pane's terminal.
    pub stdin_is_tty: bool,
    /// `/proc` hides its descriptors (and so its wait channel and system
    /// call): a set-user-id program of another user's.
    pub hidden: bool,
}

/// A blocked system call, classified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Syscall {
    /// A `read`-family call; `tty` when its file descriptor is the pane's
    /// terminal (or `/dev/tty`).
    Read {
        /// The descriptor read is the terminal.
        tty: bool,
    },
    /// `poll`, `select`, `epoll_wait` and their variants.
    Poll,
    /// Anything else.
    Other,
}

/// The terminal's mode (`tcgetattr` on the pane's tty).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TtyMode {
    /// `ECHO`: the terminal echoes what is typed.
    pub echo: bool,
    /// `ICANON`: input is read a line at a time.
    pub canonical: bool,
}

/// The interactive shell that leads the foreground group, if it does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LeaderShell {
    /// A shell with a line editor of its own (bash, zsh, fish): at its
    /// prompt it holds the terminal in raw mode.
    Editing,
    /// A shell without one (sh, dash): at its prompt it reads in line mode.
    Plain,
}

/// Everything the decision needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputFacts {
    /// The processes of the terminal's foreground group, leader first.
    pub group: Vec<ProcessFacts>,
    /// The group is one interactive shell with no child in it.
    pub lone_shell: Option<LeaderShell>,
    /// The shell is running a command for `run_command` (its start marker
    /// was seen, its end marker not yet): then a shell reading the terminal
    /// is in a `read` builtin, not at its prompt.
    pub shell_in_command: bool,
    /// The terminal's mode, when it could be read.
    pub mode: Option<TtyMode>,
    /// The pane shows the alternate screen (a full-screen program).
    pub alternate_screen: bool,
    /// How long the pane has printed nothing.
    pub quiet_for: Duration,
    /// How long it must have printed nothing; zero turns detection off.
    pub settle: Duration,
}

/// A program waiting for input, as the decision describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AwaitingInput {
    /// The name of the process that reads.
    pub program: String,
    /// Echo is off in line mode: a password prompt.
    pub secret: bool,
    /// The terminal reads a line at a time (`ICANON`).
    pub line_mode: bool,
    /// The pane shows the alternate screen.
    pub alternate_screen: bool,
    /// The prompt's line as the screen shows it; filled in by the engine
    /// (the decision leaves it empty).
    pub prompt: String,
}

/// How a process waits, from its system call (or, when that is not
/// readable, its wait channel).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Waiting {
    Busy,
    TtyRead,
    Poll,
    /// Asleep, in a wait `/proc` does not show.
    Hidden,
    Elsewhere,
}

/// Whether `process` sleeps waiting for keys from the terminal: in a read
/// of it, or in a `poll`/`select` with the terminal as its input. A process
/// with typed input still queued does not sleep there, so a shell found so
/// has taken everything typed to it.
pub fn waits_for_keys(process: &ProcessFacts) -> bool {
    matches!(waiting(process), Waiting::TtyRead | Waiting::Poll)
}

/// Decides whether the pane's foreground program waits for input.
pub fn decide(facts: &InputFacts) -> Option<AwaitingInput> {
    if facts.settle.is_zero() || facts.quiet_for < facts.settle {
        return None;
    }
    let mode = facts.mode?;
    let waits: Vec<Waiting> = facts.group.iter().map(waiting).collect();
    if waits.is_empty() || waits.contains(&Waiting::Busy) {
        return None;
    }
    let password_mode = mode.canonical && !mode.echo;
    let reader = facts.group.iter().zip(&waits).find(|(_, w)| match w {
        Waiting::TtyRead => true,
        Waiting::Poll => !mode.canonical,
        Waiting::Hidden => password_mode,
        _ => false,
    })?;
    if at_shell_prompt(facts, mode) {
        return None;
    }
    Some(AwaitingInput {
        program: reader.0.name.clone(),
        secret: password_mode && matches!(reader.1, Waiting::TtyRead | Waiting::Hidden),
        line_mode: mode.canonical,
        alternate_screen: facts.alternate_screen,
        prompt: String::new(),
    })
}

/// An interactive shell alone in the foreground, not running a command,
/// in the mode it keeps at its prompt.
fn at_shell_prompt(facts: &InputFacts, mode: TtyMode) -> bool {
    match (facts.lone_shell, facts.shell_in_command) {
        (None, _) => false,
        // A shell reading while it runs a command is in a `read` builtin,
        // also one that edits its line in raw mode (fish's `read`, bash's
        // `read -e`).
        (Some(_), true) => false,
        // bash, zsh and fish read their prompt in raw mode; in line mode
        // they are in a `read` builtin.
        (Some(LeaderShell::Editing), false) => !mode.canonical,
        // sh reads its prompt in line mode too: outside a command only a
        // hidden read (echo off) tells a `read` from the prompt.
        (Some(LeaderShell::Plain), false) => mode.echo || !mode.canonical,
    }
}

fn waiting(process: &ProcessFacts) -> Waiting {
    match process.state {
        'S' => {}
        // Stopped, traced, zombie: nobody reads.
        'T' | 't' | 'Z' | 'X' | 'x' => return Waiting::Elsewhere,
        _ => return Waiting::Busy,
    }
    match process.syscall {
        Some(Syscall::Read { tty: true }) => Waiting::TtyRead,
        Some(Syscall::Poll) if process.stdin_is_tty => Waiting::Poll,
        Some(_) => Waiting::Elsewhere,
        None if process.hidden => Waiting::Hidden,
        None => waiting_by_wchan(process),
    }
}

/// Without the system call (`/proc/PID/syscall` needs ptrace rights), the
/// wait channel is the best guess: `wait_woken` is where a terminal read
/// sleeps on this kernel (sockets sleep there too, hence the check that
/// standard input is the terminal).
fn waiting_by_wchan(process: &ProcessFacts) -> Waiting {
    let wchan = process.wchan.as_str();
    if !process.stdin_is_tty {
        return Waiting::Elsewhere;
    }
    if wchan == "wait_woken" || wchan.starts_with("n_tty_read") {
        Waiting::TtyRead
    } else if is_poll_wchan(wchan) {
        Waiting::Poll
    } else {
        Waiting::Elsewhere
    }
}

fn is_poll_wchan(wchan: &str) -> bool {
    [
        "poll_schedule_timeout",
        "do_select",
        "do_sys_poll",
        "ep_poll",
        "do_epoll_wait",
    ]
    .iter()
    .any(|name| wchan.starts_with(name))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const SETTLE: Duration = Duration::from_millis(300);

    fn process(name: &str, state: char, wchan: &str, syscall: Option<Syscall>) -> ProcessFacts {
        ProcessFacts {
            name: name.into(),
            state,
            wchan: wchan.into(),
            syscall,
            stdin_is_tty: true,
            hidden: false,
        }
    }

    fn tty_read(name: &str) -> ProcessFacts {
        process(name, 'S', "wait_woken", Some(Syscall::Read { tty: true }))
    }

    fn poller(name: &str) -> ProcessFacts {
        process(
            name,
            'S',
            "poll_schedule_timeout.constprop.0",
            Some(Syscall::Poll),
        )
    }

    const COOKED: TtyMode = TtyMode {
        echo: true,
        canonical: true,
    };
    const HIDDEN: TtyMode = TtyMode {
        echo: false,
        canonical: true,
    };
    const RAW: TtyMode = TtyMode {
        echo: false,
        canonical: false,
    };

    fn facts(group: Vec<ProcessFacts>, mode: TtyMode) -> InputFacts {
        InputFacts {
            group,
            lone_shell: None,
            shell_in_command: false,
            mode: Some(mode),
            alternate_screen: false,
            quiet_for: SETTLE,
            settle: SETTLE,
        }
    }

    fn bash_alone(process: ProcessFacts, mode: TtyMode) -> InputFacts {
        InputFacts {
            lone_shell: Some(LeaderShell::Editing),
            ..facts(vec![process], mode)
        }
    }

    // The facts below were recorded on Linux 6.18 (x86_64) in tmux panes.

    #[test]
    fn read_builtins_wait_for_a_line() {
        let read_p = decide(&bash_alone(tty_read("bash"), COOKED)).expect("read -p waits");
        assert!(read_p.line_mode && !read_p.secret);
        let read_s = decide(&bash_alone(tty_read("bash"), HIDDEN)).expect("read -s waits");
        assert!(read_s.secret && read_s.line_mode);
        assert_eq!(read_s.program, "bash");
    }

    #[test]
    fn a_shell_at_its_prompt_does_not_wait_for_input() {
        let prompt = process(
            "bash",
            'S',
            "poll_schedule_timeout.constprop.0",
            Some(Syscall::Poll),
        );
        assert_eq!(decide(&bash_alone(prompt.clone(), RAW)), None);
        let dash = InputFacts {
            lone_shell: Some(LeaderShell::Plain),
            ..facts(vec![tty_read("dash")], COOKED)
        };
        assert_eq!(decide(&dash), None);
        // The same dash running run_command's `read` does wait.
        let reading = InputFacts {
            shell_in_command: true,
            ..dash
        };
        assert!(decide(&reading).is_some());
    }

    #[test]
    fn an_editing_shell_reading_in_a_command_waits_for_input() {
        // fish's `read` and bash's `read -e` edit their line in raw mode,
        // as the shell does at its prompt; only the command tells them apart.
        let fish = bash_alone(poller("fish"), RAW);
        assert_eq!(decide(&fish), None);
        let reading = InputFacts {
            shell_in_command: true,
            ..fish
        };
        let found = decide(&reading).expect("fish's read waits");
        assert!(!found.line_mode && !found.secret);
        assert_eq!(found.program, "fish");
        let read_e = InputFacts {
            shell_in_command: true,
            ..bash_alone(tty_read("bash"), RAW)
        };
        assert!(decide(&read_e).is_some());
    }

    #[test]
    fn line_readers_and_password_prompts() {
        let cat = decide(&facts(vec![tty_read("cat")], COOKED)).expect("cat waits");
        assert!(!cat.secret && cat.line_mode);
        let getpass = decide(&facts(vec![tty_read("python3")], HIDDEN)).expect("getpass waits");
        assert!(getpass.secret);
    }

    #[test]
    fn a_set_user_id_program_asking_for_a_password() {
        // su run by nobody, as nobody reads it: its state, a wait channel
        // of "0", no system call, no descriptors.
        let su = ProcessFacts {
            stdin_is_tty: false,
            hidden: true,
            ..process("su", 'S', "0", None)
        };
        let found = decide(&facts(vec![su.clone()], HIDDEN)).expect("su asks for a password");
        assert!(found.secret && found.line_mode);
        assert_eq!(found.program, "su");
        // Run from `sh -c`, with the shell waiting for it.
        let sh = process("sh", 'S', "do_wait", Some(Syscall::Other));
        assert!(decide(&facts(vec![sh, su.clone()], HIDDEN)).is_some());
        // `sudo sleep 5` (echo on), `sudo vim` (raw): a wait cannot be told
        // from work.
        assert_eq!(decide(&facts(vec![su.clone()], COOKED)), None);
        assert_eq!(decide(&facts(vec![su.clone()], RAW)), None);
        let running = ProcessFacts { state: 'R', ..su };
        assert_eq!(decide(&facts(vec![running], HIDDEN)), None);
    }

    #[test]
    fn programs_that_read_keys_themselves() {
        for name in ["python3", "vim", "node"] {
            let found = decide(&facts(vec![poller(name)], RAW)).expect("a REPL waits");
            assert!(!found.secret && !found.line_mode);
        }
        let node = process("node", 'S', "do_epoll_wait", Some(Syscall::Poll));
        assert!(decide(&facts(vec![node], RAW)).is_some());
        let less = InputFacts {
            alternate_screen: true,
            ..facts(vec![tty_read("less")], RAW)
        };
        let found = decide(&less).expect("less waits");
        assert!(found.alternate_screen && !found.secret);
    }

    #[test]
    fn programs_that_do_not_wait_for_input() {
        let sleep = process("sleep", 'S', "hrtimer_nanosleep", Some(Syscall::Other));
        assert_eq!(decide(&facts(vec![sleep.clone()], COOKED)), None);
        let busy = process("bash", 'R', "0", None);
        assert_eq!(decide(&facts(vec![busy], COOKED)), None);
        // tail -f polls in line mode.
        assert_eq!(decide(&facts(vec![poller("tail")], COOKED)), None);
        let pipe_reader = ProcessFacts {
            stdin_is_tty: false,
            ..process(
                "cat",
                'S',
                "anon_pipe_read",
                Some(Syscall::Read { tty: false }),
            )
        };
        assert_eq!(decide(&facts(vec![sleep, pipe_reader], COOKED)), None);
    }

    #[test]
    fn one_busy_member_means_not_waiting() {
        let busy = process("grep", 'R', "0", None);
        assert_eq!(decide(&facts(vec![tty_read("cat"), busy], COOKED)), None);
    }

    #[test]
    fn the_wait_channel_stands_in_for_an_unreadable_syscall() {
        let read = process("cat", 'S', "wait_woken", None);
        assert!(decide(&facts(vec![read.clone()], COOKED)).is_some());
        let socket = ProcessFacts {
            stdin_is_tty: false,
            ..read
        };
        assert_eq!(decide(&facts(vec![socket], COOKED)), None);
    }

    #[test]
    fn settle_time_and_unknown_mode() {
        let mut early = facts(vec![tty_read("cat")], COOKED);
        early.quiet_for = SETTLE / 2;
        assert_eq!(decide(&early), None);
        let mut off = facts(vec![tty_read("cat")], COOKED);
        off.settle = Duration::ZERO;
        assert_eq!(decide(&off), None);
        let mut unknown = facts(vec![tty_read("cat")], COOKED);
        unknown.mode = None;
        assert_eq!(decide(&unknown), None);
    }

    fn any_process() -> impl Strategy<Value = ProcessFacts> {
        let state = prop::sample::select(vec!['R', 'S', 'D', 'T', 'Z']);
        let wchan = prop::sample::select(vec![
            "wait_woken",
            "poll_schedule_timeout.constprop.0",
            "hrtimer_nanosleep",
            "anon_pipe_read",
            "0",
        ]);
        let syscall = prop::option::of(prop_oneof![
            any::<bool>().prop_map(|tty| Syscall::Read { tty }),
            Just(Syscall::Poll),
            Just(Syscall::Other),
        ]);
        (state, wchan, syscall, any::<bool>(), any::<bool>()).prop_map(
            |(state, wchan, syscall, stdin_is_tty, hidden)| ProcessFacts {
                name: "p".into(),
                state,
                wchan: wchan.into(),
                syscall,
                stdin_is_tty,
                hidden,
            },
        )
    }

    fn any_facts() -> impl Strategy<Value = InputFacts> {
        let mode = (any::<bool>(), any::<bool>())
            .prop_map(|(echo, canonical)| TtyMode { echo, canonical });
        let shell = prop::option::of(prop_oneof![
            Just(LeaderShell::Editing),
            Just(LeaderShell::Plain)
        ]);
        (
            prop::collection::vec(any_process(), 0..4),
            shell,
            any::<bool>(),
            prop::option::of(mode),
            any::<bool>(),
            0u64..1000,
            0u64..1000,
        )
            .prop_map(
                |(group, lone_shell, shell_in_command, mode, alternate_screen, quiet, settle)| {
                    InputFacts {
                        group,
                        lone_shell,
                        shell_in_command,
                        mode,
                        alternate_screen,
                        quiet_for: Duration::from_millis(quiet),
                        settle: Duration::from_millis(settle),
                    }
                },
            )
    }

    proptest! {
        #[test]
        fn never_while_a_process_runs_or_before_the_settle_time(facts in any_facts()) {
            let running = facts.group.iter().any(|p| matches!(p.state, 'R' | 'D'));
            let early = facts.settle.is_zero() || facts.quiet_for < facts.settle;
            if running || early || facts.group.is_empty() {
                prop_assert_eq!(decide(&facts), None);
            }
        }

        #[test]
        fn secret_only_in_line_mode_without_echo(facts in any_facts()) {
            if let Some(found) = decide(&facts) {
                let mode = facts.mode.expect("a decision needs the mode");
                prop_assert_eq!(found.line_mode, mode.canonical);
                prop_assert!(!found.secret || (mode.canonical && !mode.echo));
            }
        }
    }
}
