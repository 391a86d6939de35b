//! Scopes: the sessions tools may see and touch (`--allow-session GLOB`).
//!
//! A target outside the scope gets the same not-found error as one that
//! names nothing, so the names of other sessions do not leak; listings leave
//! them out.

use termpilot_control::{PaneTarget, SessionTarget, Target, TargetKind, WindowTarget};
use termpilot_tmux::{Engine, Error, PaneId, PaneInfo, PaneScope};

use crate::address;
use crate::error::{ToolError, ToolResult};

/// Session name patterns; empty allows every session.
#[derive(Debug, Clone, Default)]
pub struct Scope {
    globs: Vec<String>,
}

impl Scope {
    /// A scope of the sessions whose names match one of `globs` (`*`, `?`
    /// and `[...]` as in a shell); no globs: every session.
    pub fn new(globs: Vec<String>) -> Scope {
        Scope { globs }
    }

    /// Whether every session is allowed.
    pub fn is_open(&self) -> bool {
        self.globs.is_empty()
    }

    /// Whether a session of this name is in scope.
    pub fn allows(&self, session: &str) -> bool {
        self.is_open() || self.globs.iter().any(|g| glob_match(g, session))
    }

    /// Refuses a target outside the scope with the engine's error for a
    /// target that names nothing. A session `kind` also covers where a new
    /// window goes (`work:5`, `$1:2`). Every form is resolved to its session
    /// first; a target that cannot be resolved is refused the same way, so
    /// the error never names another session.
    pub(crate) async fn check(
        &self,
        engine: &Engine,
        kind: TargetKind,
        target: &str,
    ) -> ToolResult<()> {
        if self.is_open() {
            return Ok(());
        }
        if let Some(error) = self.hidden_name(kind, target) {
            return Err(error.into());
        }
        match self.panes_of(engine, kind, target).await {
            Some(panes) if panes.iter().all(|p| self.allows(&p.session_name)) => Ok(()),
            _ => Err(Error::not_found(kind, target).into()),
        }
    }

    /// The panes a target names, resolved as the engine resolves it; `None`
    /// when it names nothing (or the server cannot be asked).
    async fn panes_of(
        &self,
        engine: &Engine,
        kind: TargetKind,
        target: &str,
    ) -> Option<Vec<PaneInfo>> {
        let scope = match kind {
            TargetKind::Pane => {
                let pane = address::any_pane(engine, target).await.ok()?;
                let all = engine.list_panes(&PaneScope::All).await.ok()?;
                let found: Vec<PaneInfo> = all.into_iter().filter(|p| p.id == pane).collect();
                return (!found.is_empty()).then_some(found);
            }
            TargetKind::Window => PaneScope::Window(address::window_target(target).ok()?),
            TargetKind::Session | TargetKind::NewWindow => {
                let slot = address::window_slot(target).ok()?.parsed;
                PaneScope::Session(slot.session.into())
            }
        };
        let panes = engine.list_panes(&scope).await.ok()?;
        (!panes.is_empty()).then_some(panes)
    }

    /// Resolves a pane target as the engine does, except that a pane outside
    /// the scope names nothing (the engine's not-found error).
    pub(crate) async fn resolve_pane(
        &self,
        engine: &Engine,
        target: &Target<PaneTarget>,
    ) -> Result<PaneId, Error> {
        if let Some(error) = self.hidden_session(pane_session(&target.parsed)) {
            return Err(error);
        }
        let pane = engine.resolve_pane(&target.parsed).await?;
        if self.is_open() {
            return Ok(pane);
        }
        let panes = engine.list_panes(&PaneScope::All).await?;
        match panes.iter().find(|p| p.id == pane) {
            Some(info) if !self.allows(&info.session_name) => {
                Err(Error::not_found(TargetKind::Pane, &target.text))
            }
            _ => Ok(pane),
        }
    }

    /// The engine's error for a session name that does not exist, when
    /// `target` (of this kind) names an out-of-scope session by name.
    fn hidden_name(&self, kind: TargetKind, target: &str) -> Option<Error> {
        let session = match kind {
            TargetKind::Pane => pane_session(&address::pane_target(target).ok()?.parsed)?.clone(),
            TargetKind::Window => match address::window_target(target).ok()?.parsed {
                WindowTarget::In { session, .. } => session,
                WindowTarget::Id(_) => return None,
            },
            TargetKind::Session | TargetKind::NewWindow => {
                address::window_slot(target).ok()?.parsed.session
            }
        };
        self.hidden_session(Some(&session))
    }

    /// The engine's error for a session name that does not exist, when
    /// `session` names an out-of-scope session by name.
    fn hidden_session(&self, session: Option<&SessionTarget>) -> Option<Error> {
        if self.is_open() {
            return None;
        }
        let Some(SessionTarget::Name(name)) = session else {
            return None;
        };
        (!self.allows(name.as_str())).then(|| Error::not_found(TargetKind::Session, name.as_str()))
    }

    /// Refuses to create a session whose name is outside the scope.
    pub(crate) fn check_new_session(&self, name: Option<&str>) -> ToolResult<()> {
        match name {
            _ if self.is_open() => Ok(()),
            Some(name) if self.allows(name) => Ok(()),
            Some(name) => Err(ToolError::refused(format!(
                "session name '{name}' is outside the sessions this server may touch ({})",
                self.globs.join(", ")
            ))),
            None => Err(ToolError::refused(format!(
                "give the session a `name` matching {}: this server may only touch those sessions",
                self.globs.join(", ")
            ))),
        }
    }
}

/// The session a pane target names by name, if it does.
fn pane_session(target: &PaneTarget) -> Option<&SessionTarget> {
    match target {
        PaneTarget::In { session, .. } => Some(session),
        PaneTarget::Id(_) => None,
    }
}

/// Shell-style matching of a whole name: `*` any run of characters, `?` one
/// character, `[abc]`, `[a-z]` and `[!abc]` one of a set.
pub fn glob_match(glob: &str, name: &str) -> bool {
    let glob: Vec<char> = glob.chars().collect();
    let name: Vec<char> = name.chars().collect();
    matches(&glob, &name)
}

fn matches(glob: &[char], name: &[char]) -> bool {
    let (mut g, mut n) = (0, 0);
    // Where the last `*` was, and the name position it has swallowed up to.
    let mut star: Option<(usize, usize)> = None;
    while n < name.len() {
        let step = match glob.get(g) {
            Some('*') => {
                star = Some((g, n));
                g += 1;
                continue;
            }
            Some('?') => Some(g + 1),
            Some('[') => class(glob, g, name[n]),
            Some(c) if *c == name[n] => Some(g + 1),
            _ => None,
        };
        match (step, star) {
            (Some(next), _) => {
                g = next;
                n += 1;
            }
            (None, Some((at, swallowed))) => {
                g = at + 1;
                n = swallowed + 1;
                star = Some((at, swallowed + 1));
            }
            (None, None) => return false,
        }
    }
    glob[g..].iter().all(|c| *c == '*')
}

/// Matches `c` against the class starting at `glob[at] == '['`: the index
/// after the class when it matches. An unclosed `[` is a literal.
fn class(glob: &[char], at: usize, c: char) -> Option<usize> {
    let mut i = at + 1;
    let negated = matches!(glob.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let start = i;
    let mut found = false;
    while let Some(&g) = glob.get(i) {
        if g == ']' && i > start {
            return (found != negated).then_some(i + 1);
        }
        if glob.get(i + 1) == Some(&'-') && glob.get(i + 2).is_some_and(|e| *e != ']') {
            found |= (g..=glob[i + 2]).contains(&c);
            i += 3;
        } else {
            found |= g == c;
            i += 1;
        }
    }
    // No closing bracket: the `[` stands for itself.
    (c == '[').then_some(at + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_names() {
        assert!(glob_match("agent-*", "agent-1"));
        assert!(glob_match("agent-*", "agent-"));
        assert!(!glob_match("agent-*", "my-agent-1"));
        assert!(glob_match("*", ""));
        assert!(glob_match("a?c", "abc"));
        assert!(!glob_match("a?c", "ac"));
        assert!(glob_match("w[0-9]", "w7"));
        assert!(!glob_match("w[!0-9]", "w7"));
        assert!(glob_match("w[!0-9]", "wx"));
        assert!(glob_match("*-*-end", "a-b-c-end"));
        assert!(!glob_match("*-*-end", "a-end"));
        assert!(glob_match("a[b", "a[b"));
        assert!(!glob_match("work", "work2"));
    }

    #[test]
    fn an_empty_scope_allows_everything() {
        let scope = Scope::default();
        assert!(scope.allows("anything"));
        assert!(scope.check_new_session(None).is_ok());
    }

    #[test]
    fn new_sessions_need_a_matching_name() {
        let scope = Scope::new(vec!["agent-*".to_owned()]);
        assert!(scope.check_new_session(Some("agent-1")).is_ok());
        assert!(scope.check_new_session(Some("mine")).is_err());
        assert!(scope.check_new_session(None).is_err());
    }

    #[test]
    fn a_target_naming_an_outside_session_reads_as_a_missing_session() {
        let scope = Scope::new(vec!["agent-*".to_owned()]);
        let hidden = |kind, target| scope.hidden_name(kind, target).map(|e| e.to_string());
        let missing = "session private not found; call list_sessions to see the sessions";
        assert_eq!(
            hidden(TargetKind::Pane, "private:0.0").as_deref(),
            Some(missing)
        );
        assert_eq!(
            hidden(TargetKind::Window, "private:1").as_deref(),
            Some(missing)
        );
        assert_eq!(
            hidden(TargetKind::Session, "private").as_deref(),
            Some(missing)
        );
        // Where a new window goes names its session too.
        assert_eq!(
            hidden(TargetKind::Session, "private:7").as_deref(),
            Some(missing)
        );
        assert_eq!(hidden(TargetKind::Pane, "agent-1:0.0"), None);
        // Ids are checked against the pane list instead.
        assert_eq!(hidden(TargetKind::Pane, "%3"), None);
        assert_eq!(
            Scope::default()
                .hidden_name(TargetKind::Pane, "private:0.0")
                .map(|_| ()),
            None
        );
    }
}
