//! The input gate: every byte the engine types into a pane, and every
//! command and environment a new pane starts with, passes here.
//!
//! The gate keeps, per pane, the line typed since the last submission
//! ([`Line`]), fed with the bytes the terminal receives (text, key names,
//! hex keys and pastes all become bytes first: [`input_bytes`],
//! [`paste_bytes`]). A call's input is judged by the lines it would submit
//! (a carriage return or a newline) and the line it would leave typed, each
//! as the pieces typed over earlier calls add up to.
//!
//! Who judges is the caller's business: a tool call runs inside
//! [`Permit::scope`], whose judge says which lines need the person's
//! approval and which panes the person approved for this call. Input that
//! would submit or leave a matching line on a pane not approved is refused
//! before anything is sent, so the question asked before the call (built
//! with [`Engine::preview_input`]) and what is typed can never disagree. A
//! new pane's `command` and environment are judged whole. Outside a permit
//! (the engine used as a library) lines are only tracked.

mod line;

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Arc, Mutex};

use termpilot_control::PaneId;

use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::ops::Input;

pub use line::Line;

/// Says whether a line needs the person's approval.
pub type Judge = Arc<dyn Fn(&str) -> bool + Send + Sync>;

/// What one tool call may type: the judge, and what the person approved.
#[derive(Clone)]
pub struct Permit {
    judge: Judge,
    approved: Arc<Approved>,
}

/// What the person approved for one call.
#[derive(Debug, Default)]
struct Approved {
    /// Panes (by engine and id) that may get matching input.
    panes: Vec<(usize, PaneId)>,
    /// New panes may start with matching commands or environments.
    spawns: bool,
}

tokio::task_local! {
    static PERMIT: Permit;
}

impl Permit {
    /// A permit judging lines with `judge`, with nothing approved.
    pub fn new(judge: Judge) -> Permit {
        Permit {
            judge,
            approved: Arc::default(),
        }
    }

    /// The same judge, with matching input approved for these panes and, if
    /// `spawns`, for new panes' commands.
    pub fn approving(&self, panes: &[(&Engine, PaneId)], spawns: bool) -> Permit {
        let panes = panes
            .iter()
            .map(|(engine, pane)| (engine.gate_id(), *pane))
            .collect();
        Permit {
            judge: self.judge.clone(),
            approved: Arc::new(Approved { panes, spawns }),
        }
    }

    /// Whether `line` needs the person's approval.
    pub fn needs_approval(&self, line: &str) -> bool {
        (self.judge)(line)
    }

    /// Runs `future` (a tool call) under this permit: the engine's typing in
    /// it is judged by it.
    pub async fn scope<F: Future>(self, future: F) -> F::Output {
        PERMIT.scope(self, future).await
    }

    fn current() -> Option<Permit> {
        PERMIT.try_with(Permit::clone).ok()
    }

    fn allows(&self, engine: usize, pane: PaneId) -> bool {
        self.approved.panes.contains(&(engine, pane))
    }
}

impl std::fmt::Debug for Permit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Permit")
            .field("approved", &self.approved)
            .finish_non_exhaustive()
    }
}

/// A line a call's input would submit, or leave typed, on a pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judged {
    /// The pane.
    pub pane: PaneId,
    /// Its readings (see [`Line::readings`]); the first is the edited line.
    pub readings: Vec<String>,
    /// Submitted (a carriage return or newline ends it), or left typed.
    pub submitted: bool,
}

/// A pane's line, and the readings of it the person approved.
#[derive(Debug, Clone, Default)]
pub(crate) struct PaneLine {
    line: Line,
    /// Readings of the line as it stood after an approved call: typing on
    /// without changing it (or submitting it) asks nothing more.
    approved: Vec<String>,
}

impl PaneLine {
    /// Feeds `bytes`; the lines they submit, and the line they leave with
    /// only its readings the person has not approved yet. Approving a line
    /// left typed does not approve submitting it: that is asked again.
    fn feed(&mut self, pane: PaneId, bytes: &[u8]) -> Vec<Judged> {
        let mut out = Vec::new();
        for readings in self.line.feed(bytes) {
            out.push(Judged {
                pane,
                readings,
                submitted: true,
            });
            self.approved.clear();
        }
        let mut readings = self.line.readings();
        readings.retain(|r| !self.approved.contains(r));
        out.push(Judged {
            pane,
            readings,
            submitted: false,
        });
        out.retain(|judged| !judged.readings.is_empty());
        out
    }
}

/// The lines of an engine's panes. A std `Mutex`: held to feed bytes into a
/// copy or to store it, never across an `.await`.
#[derive(Debug, Default)]
pub(crate) struct Gate {
    lines: Mutex<HashMap<PaneId, PaneLine>>,
}

impl Gate {
    /// The line typed on `pane` so far.
    pub(crate) fn pane_line(&self, pane: PaneId) -> PaneLine {
        self.lines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&pane)
            .cloned()
            .unwrap_or_default()
    }

    /// Puts back `pane`'s line as it was before input that passed was not
    /// typed after all.
    pub(crate) fn put_back(&self, pane: PaneId, line: PaneLine) {
        self.lines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(pane, line);
    }

    /// Forgets a pane's line (the pane is gone).
    pub(crate) fn forget(&self, pane: PaneId) {
        self.lines
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&pane);
    }

    /// What `inputs`, typed in order, would submit on each pane and leave
    /// typed on it after the last, without typing anything.
    fn preview(&self, inputs: &[(PaneId, Vec<u8>)]) -> Vec<Judged> {
        let mut lines: HashMap<PaneId, PaneLine> = HashMap::new();
        let mut out = Vec::new();
        for (pane, bytes) in inputs {
            let line = lines.entry(*pane).or_insert_with(|| self.pane_line(*pane));
            let mut judged = line.feed(*pane, bytes);
            let left = judged.pop_if(|j| !j.submitted);
            out.extend(judged);
            // Only the line left after the pane's last input is asked about.
            out.retain(|j| j.submitted || j.pane != *pane);
            out.extend(left);
        }
        out
    }

    /// Lets `bytes` through to `pane` of engine `engine` when the permit of
    /// the call (if any) allows what they submit and leave typed, and
    /// records them; refuses them otherwise, recording nothing.
    fn pass(&self, engine: usize, pane: PaneId, bytes: &[u8]) -> Result<()> {
        let mut lines = self.lines.lock().unwrap_or_else(|e| e.into_inner());
        let mut line = lines.get(&pane).cloned().unwrap_or_default();
        let judged = line.feed(pane, bytes);
        let permit = Permit::current();
        if let Some(permit) = &permit
            && !permit.allows(engine, pane)
            && judged
                .iter()
                .flat_map(|j| &j.readings)
                .any(|r| permit.needs_approval(r))
        {
            return Err(unapproved(pane));
        }
        if permit.is_some_and(|p| p.allows(engine, pane)) {
            line.approved = line.line.readings();
        }
        lines.insert(pane, line);
        Ok(())
    }
}

fn unapproved(pane: PaneId) -> Error {
    Error::InvalidArgument(format!(
        "refused: this input would type a line into {pane} that matches a --confirm pattern, \
         and the person has not approved it for this call; nothing was typed"
    ))
}

/// The bytes the terminal receives for [`Input`]: the text, the keys, then
/// Enter.
pub fn input_bytes(input: &Input) -> Vec<u8> {
    let mut bytes = input.text.clone().unwrap_or_default().into_bytes();
    for key in &input.keys {
        key.write_bytes(&mut bytes);
    }
    if input.enter {
        bytes.push(b'\r');
    }
    bytes
}

/// The bytes a paste of `text` delivers (the paste markers aside), then
/// Enter. Every newline in it counts as a submission: a program without
/// bracketed paste takes each as Enter.
pub fn paste_bytes(text: &str, enter: bool) -> Vec<u8> {
    let mut bytes = text.as_bytes().to_vec();
    if enter {
        bytes.push(b'\r');
    }
    bytes
}

impl Engine {
    /// An identity of this engine's tmux server connection, for permits.
    fn gate_id(&self) -> usize {
        Arc::as_ptr(&self.shared) as usize
    }

    /// What `inputs` (bytes for panes, in the order they would be typed)
    /// would submit, and leave typed, on each pane, as the lines typed
    /// before them add up; readings the person approved already are left out.
    pub fn preview_input(&self, inputs: &[(PaneId, Vec<u8>)]) -> Vec<Judged> {
        self.shared.gate.preview(inputs)
    }

    /// Passes `bytes` for `pane` through the gate (see the module docs).
    pub(crate) fn gate_input(&self, pane: PaneId, bytes: &[u8]) -> Result<()> {
        self.shared.gate.pass(self.gate_id(), pane, bytes)
    }

    /// Passes a secret's keystrokes: the secret itself is neither judged nor
    /// kept (it stands as one unknown character in the line), the keys
    /// after it are.
    pub(crate) fn gate_secret(&self, pane: PaneId, input: &Input) -> Result<()> {
        let stand_in = Input {
            text: input.text.as_ref().map(|_| "\u{fffd}".to_owned()),
            ..input.clone()
        };
        self.gate_input(pane, &input_bytes(&stand_in))
    }

    /// Judges a new pane's command and environment whole: refused when one
    /// needs approval the call does not have.
    pub(crate) fn gate_spawn(&self, command: Option<&str>, env: &[(String, String)]) -> Result<()> {
        let Some(permit) = Permit::current() else {
            return Ok(());
        };
        if permit.approved.spawns {
            return Ok(());
        }
        // As the caller's question judged them: the command, and each
        // variable as `KEY=value` and as its value.
        let assignments = env.iter().map(|(key, value)| format!("{key}={value}"));
        let values = env.iter().map(|(_, value)| value.clone());
        let mut texts = command
            .map(str::to_owned)
            .into_iter()
            .chain(assignments)
            .chain(values);
        if texts.any(|text| permit.needs_approval(&text)) {
            return Err(Error::InvalidArgument(
                "refused: the new pane's command or environment matches a --confirm pattern, \
                 and the person has not approved it for this call; nothing was started"
                    .to_owned(),
            ));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pane(n: u32) -> PaneId {
        PaneId(n)
    }

    fn lines(judged: &[Judged]) -> Vec<(u32, String, bool)> {
        judged
            .iter()
            .map(|j| (j.pane.0, j.readings[0].clone(), j.submitted))
            .collect()
    }

    #[test]
    fn a_preview_adds_up_inputs_and_keeps_only_the_last_line_left() {
        let gate = Gate::default();
        let inputs = vec![
            (pane(1), b"rm -".to_vec()),
            (pane(2), b"ls\r".to_vec()),
            (pane(1), b"rf x".to_vec()),
            (pane(1), b" y".to_vec()),
        ];
        assert_eq!(
            lines(&gate.preview(&inputs)),
            vec![(2, "ls".into(), true), (1, "rm -rf x y".into(), false)]
        );
        // Nothing was recorded.
        assert!(gate.preview(&[(pane(1), b"\r".to_vec())]).is_empty());
    }

    #[test]
    fn passing_records_the_line_for_later_calls() {
        let gate = Gate::default();
        gate.pass(0, pane(1), b"rm -").unwrap();
        let judged = gate.preview(&[(pane(1), b"rf x\r".to_vec())]);
        assert_eq!(lines(&judged), vec![(1, "rm -rf x".into(), true)]);
    }

    #[tokio::test]
    async fn a_permit_refuses_unapproved_matches_and_records_nothing() {
        let gate = Gate::default();
        let judge: Judge = Arc::new(|line: &str| line.contains("rm -rf"));
        let permit = Permit::new(judge);
        let refused = permit
            .clone()
            .scope(async {
                gate.pass(7, pane(1), b"rm -").unwrap();
                gate.pass(7, pane(1), b"rf x\r")
            })
            .await;
        assert!(refused.unwrap_err().to_string().contains("--confirm"));
        // The refused bytes were not recorded: the line is still "rm -".
        assert_eq!(
            lines(&gate.preview(&[(pane(1), Vec::new())])),
            vec![(1, "rm -".into(), false)]
        );
        let approved = Permit {
            approved: Arc::new(Approved {
                panes: vec![(7, pane(1))],
                spawns: false,
            }),
            ..permit.clone()
        };
        approved
            .scope(async { gate.pass(7, pane(1), b"rf x").unwrap() })
            .await;
        // The approved line asks nothing more while it stays as it is, but
        // submitting it is asked again.
        permit
            .clone()
            .scope(async { gate.pass(7, pane(1), b"\x05").unwrap() })
            .await;
        let submitted = permit.scope(async { gate.pass(7, pane(1), b"\r") }).await;
        assert!(submitted.is_err());
    }

    /// How one character is typed: as text, by its key name, or as a hex key.
    fn spelled(c: char, how: u8) -> Input {
        let name = match (how, c) {
            (0, _) => {
                return Input {
                    text: Some(c.to_string()),
                    ..Input::default()
                };
            }
            (1, ' ') => "Space".to_owned(),
            (1, c) => c.to_string(),
            (_, c) => format!("0x{:02x}", c as u32),
        };
        Input {
            keys: vec![termpilot_keys::parse_key(&name).expect("a key")],
            ..Input::default()
        }
    }

    proptest::proptest! {
        /// However a dangerous line is cut into calls, and however each
        /// character is spelled, one of the calls is refused before the line
        /// is submitted.
        #[test]
        fn any_split_of_a_dangerous_line_is_caught(
            before in "[a-z ;]{0,6}",
            after in "[a-z ]{0,6}",
            spellings in proptest::collection::vec(0u8..3, 40),
            cuts in proptest::collection::vec(proptest::bool::ANY, 40),
            submit in proptest::sample::select(vec!["Enter", "C-m", "C-j", "0x0d", "KPEnter"]),
        ) {
            let line = format!("{before}rm -rf x{after}");
            let gate = Gate::default();
            let judge: Judge = Arc::new(|line: &str| line.contains("rm -rf x"));
            let mut calls = vec![Vec::new()];
            for (i, c) in line.chars().enumerate() {
                calls.last_mut().expect("a call").push(spelled(c, spellings[i]));
                if cuts[i] {
                    calls.push(Vec::new());
                }
            }
            let enter = termpilot_keys::parse_key(submit).expect("a key");
            calls.last_mut().expect("a call").push(Input {
                keys: vec![enter],
                ..Input::default()
            });
            let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
            let refused = runtime.block_on(Permit::new(judge).scope(async {
                calls.iter().any(|inputs| {
                    let bytes: Vec<u8> = inputs.iter().flat_map(input_bytes).collect();
                    gate.pass(1, pane(1), &bytes).is_err()
                })
            }));
            proptest::prop_assert!(refused, "{line:?} went through");
        }
    }

    #[test]
    fn keys_become_the_bytes_the_terminal_gets() {
        let keys = [
            "r", "m", "Space", "-", "r", "f", "Space", "x", "C-m", "0x0d", "C-j",
        ];
        let input = Input {
            text: Some("a".into()),
            keys: keys
                .iter()
                .map(|k| termpilot_keys::parse_key(k).unwrap())
                .collect(),
            enter: true,
        };
        assert_eq!(input_bytes(&input), b"arm -rf x\r\r\n\r");
        assert_eq!(paste_bytes("a\nb", true), b"a\nb\r");
    }
}
