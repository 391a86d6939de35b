//! Control-mode transcripts: recorded from a real tmux by
//! `fixtures/record.py`, or written by hand for faults, and played back to
//! a control client as the far end of its pipe.
//!
//! A transcript is one line per step (see `record.py` for how they are
//! made):
//!
//! ```text
//! # comment            $ ARGS   the arguments tmux was started with
//! > LINE               the client must write exactly LINE next
//! >* NAME              the client must write a line running the command NAME
//! < LINE               tmux writes LINE
//! ~ MS                 MS milliseconds pass (tokio time: pause it)
//! ! COMMAND            a command run outside this client (a comment here)
//! .                    tmux closes the connection
//! ```
//!
//! When the client writes a line, the player checks it against the next `>`
//! step, then writes every `<` line up to the `>` step after it. So output
//! that tmux sent between two replies reaches the client before it could
//! have sent its next command, as with tmux (whose ordering is strict), and
//! a client can write several lines before the first answer (pipelining).

use std::time::Duration;

/// One step of a transcript.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Step {
    /// The client writes exactly this line.
    Expect(Vec<u8>),
    /// The client writes a line whose command is this one.
    ExpectCommand(String),
    /// tmux writes this line.
    Send(Vec<u8>),
    /// Time passes.
    Wait(Duration),
    /// tmux closes the connection.
    Close,
    /// The transcript is over: lines the client writes are only logged.
    Listen,
}

/// A parsed transcript.
#[derive(Debug, Clone, Default)]
pub(crate) struct Transcript {
    pub(crate) steps: Vec<Step>,
}

impl Transcript {
    /// Parses a transcript; panics on a line it cannot read (fixtures are
    /// part of the test).
    pub(crate) fn parse(text: &[u8]) -> Transcript {
        let mut steps = Vec::new();
        for line in text.split(|&b| b == b'\n') {
            // Scripts written in a test may be indented.
            let line = line.trim_ascii_start();
            let (marker, rest) = match line.iter().position(|&b| b == b' ') {
                Some(at) => (&line[..at], &line[at + 1..]),
                None => (line, &b""[..]),
            };
            let step = match marker {
                b"" | b"#" | b"$" | b"!" => continue,
                b">" => Step::Expect(rest.to_vec()),
                b">*" => Step::ExpectCommand(String::from_utf8_lossy(rest).into_owned()),
                b"<" => Step::Send(rest.to_vec()),
                b"~" => {
                    let ms: u64 = String::from_utf8_lossy(rest).trim().parse().expect("~ MS");
                    Step::Wait(Duration::from_millis(ms))
                }
                b"." => Step::Close,
                other => panic!(
                    "transcript line with marker {:?}",
                    String::from_utf8_lossy(other)
                ),
            };
            steps.push(step);
        }
        Transcript { steps }
    }

    /// The lines the client is expected to write, in order.
    pub(crate) fn client_lines(&self) -> Vec<Vec<u8>> {
        self.steps
            .iter()
            .filter_map(|step| match step {
                Step::Expect(line) => Some(line.clone()),
                _ => None,
            })
            .collect()
    }

    /// Expects each line by its command only (`>*`), for a transcript
    /// played to the engine, whose arguments are its own business; an
    /// empty line (detach) stays exact.
    pub(crate) fn loose(mut self) -> Transcript {
        for step in &mut self.steps {
            if let Step::Expect(line) = step
                && !line.is_empty()
            {
                let name = line.split(|&b| b == b' ').next().unwrap_or_default();
                *step = Step::ExpectCommand(String::from_utf8_lossy(name).into_owned());
            }
        }
        self
    }
}

/// Whether a line the client wrote is the one the step expects; `None`
/// when the step expects no line.
pub(crate) fn matches(step: &Step, line: &[u8]) -> Option<bool> {
    match step {
        Step::Expect(expected) => Some(expected == line),
        Step::ExpectCommand(name) => {
            let first = line.split(|&b| b == b' ').next().unwrap_or_default();
            Some(first == name.as_bytes())
        }
        _ => None,
    }
}

/// The recorded transcripts.
pub(crate) mod fixtures {
    /// Replies, an error, a failing line, an empty reply, guard look-alikes.
    pub(crate) const REPLIES: &[u8] = include_bytes!("../fixtures/replies.tx");
    /// A pane paused and continued.
    pub(crate) const PAUSE: &[u8] = include_bytes!("../fixtures/pause.tx");
    /// The server killed by another client.
    pub(crate) const KILL_SERVER: &[u8] = include_bytes!("../fixtures/kill_server.tx");
    /// The client's own session killed while another lives.
    pub(crate) const SESSION_KILLED: &[u8] = include_bytes!("../fixtures/session_killed.tx");
    /// The engine attaching to an existing session.
    pub(crate) const ATTACH: &[u8] = include_bytes!("../fixtures/attach.tx");
}
