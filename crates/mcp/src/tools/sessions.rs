//! Listing sessions and panes.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use termpilot_tmux::{PaneInfo, PaneScope, SessionInfo};

use crate::address::{self, Host};
use crate::catalog::{Effect, Outcome, Tool};
use crate::error::{ToolError, ToolResult};
use crate::server::{CallContext, Done, TermpilotServer};
use crate::toolset::Toolset;

/// `list_sessions`.
pub(crate) struct ListSessions;

/// Arguments of `list_sessions`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListSessionsParams {
    /// Only this host (default: all).
    #[schemars(length(min = 1, max = 64))]
    pub host: Option<String>,
}

/// Result of `list_sessions`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionList {
    /// The sessions of the tmux servers.
    pub sessions: Vec<SessionEntry>,
    /// Hosts that could not be reached, and why.
    pub unreachable: Vec<UnreachableHost>,
}

/// A host that could not be reached.
#[derive(Debug, Serialize, JsonSchema)]
pub struct UnreachableHost {
    /// The host's name.
    pub host: String,
    /// Why (ssh's own message for an ssh host).
    pub error: String,
}

// The engine's row, after its host and its id as calls write it.
/// One session.
#[derive(Debug, Serialize, JsonSchema)]
pub struct SessionEntry {
    /// "local" or a --host name.
    pub host: String,
    /// Session id, e.g. "$0" ("build/$0" on host build).
    pub id: String,
    /// The rest of the engine's row, its fields described there.
    #[serde(flatten)]
    pub session: SessionInfo,
}

impl SessionEntry {
    fn new(host: &Host, session: SessionInfo) -> Self {
        SessionEntry {
            host: host.name().to_owned(),
            id: host.qualify(session.id),
            session,
        }
    }
}

impl Tool for ListSessions {
    const NAME: &'static str = "list_sessions";
    const TITLE: &'static str = "List tmux sessions";
    const DESCRIPTION: &'static str =
        "List tmux sessions with their window count and attached clients.";
    const TOOLSET: Toolset = Toolset::ReadOnly;
    const EFFECT: Effect = Effect::Reads;
    type Params = ListSessionsParams;
    type Output = SessionList;

    async fn call(
        server: &TermpilotServer,
        params: ListSessionsParams,
        _: &CallContext,
    ) -> Outcome {
        let mut sessions = Vec::new();
        let mut unreachable = Vec::new();
        let listings = every_host(server, params.host.as_deref(), |engine| async move {
            engine.list_sessions().await
        });
        for (host, listed) in listings.await? {
            match listed {
                Ok(listed) => sessions.extend(
                    listed
                        .into_iter()
                        .filter(|s| server.oversight.scope.allows(&s.name))
                        .map(|s| SessionEntry::new(&host, s)),
                ),
                Err(error) => unreachable.push(UnreachableHost {
                    host: host.name().to_owned(),
                    error,
                }),
            }
        }
        let mut text = sessions
            .iter()
            .map(|s| {
                let session = &s.session;
                format!(
                    "{} {} ({} windows, {} attached)",
                    s.id, session.name, session.windows, session.attached
                )
            })
            .collect::<Vec<_>>();
        text.extend(unreachable_lines(&unreachable));
        let list = SessionList {
            sessions,
            unreachable,
        };
        Done::new(&list, text.join("\n"))
    }
}

/// `list_panes`.
pub(crate) struct ListPanes;

/// Arguments of `list_panes`.
#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListPanesParams {
    /// Only this host (default: all, or that of `session`/`window`).
    #[schemars(length(min = 1, max = 64))]
    pub host: Option<String>,
    /// Only this session's panes (exact name or id).
    #[schemars(length(min = 1, max = 256))]
    pub session: Option<String>,
    /// Only this window's panes ("work:1" or id "@3").
    #[schemars(length(min = 1, max = 256))]
    pub window: Option<String>,
}

/// Result of `list_panes`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PaneList {
    /// The panes, in host, session, window and pane order.
    pub panes: Vec<PaneEntry>,
    /// Hosts that could not be reached, and why.
    pub unreachable: Vec<UnreachableHost>,
}

// The engine's row, after its host and its ids as calls write them.
/// One pane.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PaneEntry {
    /// "local" or a --host name.
    pub host: String,
    /// Pane id, e.g. "%3" ("build/%3" on host build): the stable way to address the pane.
    pub id: String,
    /// Session id.
    pub session: String,
    /// Window id, e.g. "@1".
    pub window: String,
    /// Active pane of the active window.
    pub active: bool,
    /// The rest of the engine's row, its fields described there.
    #[serde(flatten)]
    pub pane: PaneInfo,
}

impl PaneEntry {
    fn new(host: &Host, pane: PaneInfo) -> Self {
        PaneEntry {
            host: host.name().to_owned(),
            id: host.qualify(pane.id),
            session: host.qualify(pane.session),
            window: host.qualify(pane.window),
            active: pane.active(),
            pane,
        }
    }
}

impl Tool for ListPanes {
    const NAME: &'static str = "list_panes";
    const TITLE: &'static str = "List panes";
    const DESCRIPTION: &'static str = "List panes (all, or a session's or window's): id, size, \
        cwd, foreground program, full-screen program or copy mode active.";
    const TOOLSET: Toolset = Toolset::ReadOnly;
    const EFFECT: Effect = Effect::Reads;
    type Params = ListPanesParams;
    type Output = PaneList;

    async fn call(server: &TermpilotServer, params: ListPanesParams, _: &CallContext) -> Outcome {
        // A session or window target names its host itself.
        let (named, scope) = match (params.window.as_deref(), params.session.as_deref()) {
            (Some(window), _) => {
                let (host, window) = address::locate(server, window).await?;
                (
                    Some(host),
                    PaneScope::Window(address::window_target(window)?),
                )
            }
            (None, Some(session)) => {
                let (host, session) = address::locate(server, session).await?;
                (
                    Some(host),
                    PaneScope::Session(address::session_target(session)?),
                )
            }
            (None, None) => (None, PaneScope::All),
        };
        let only = match (named, params.host.as_deref()) {
            (Some(host), Some(asked)) if host.name() != asked => {
                return Err(ToolError::refused(format!(
                    "host: '{asked}', but the target is on host {}",
                    host.name()
                )));
            }
            (Some(host), _) => Some(host.name().to_owned()),
            (None, asked) => asked.map(str::to_owned),
        };
        let scope = &scope;
        let mut panes = Vec::new();
        let mut unreachable = Vec::new();
        let listings = every_host(server, only.as_deref(), |engine| async move {
            engine.list_panes(scope).await
        });
        for (host, listed) in listings.await? {
            match listed {
                Ok(listed) => panes.extend(
                    listed
                        .into_iter()
                        .filter(|p| server.oversight.scope.allows(&p.session_name))
                        .map(|p| PaneEntry::new(&host, p)),
                ),
                Err(error) => unreachable.push(UnreachableHost {
                    host: host.name().to_owned(),
                    error,
                }),
            }
        }
        let mut text: Vec<String> = panes
            .iter()
            .map(|entry| {
                let p = &entry.pane;
                format!(
                    "{} {}:{}.{} {}x{} {} {}{}{}",
                    entry.id,
                    p.session_name,
                    p.window_index,
                    p.index,
                    p.width,
                    p.height,
                    p.current_command,
                    p.cwd,
                    if entry.active { " (active)" } else { "" },
                    if p.dead { " (dead)" } else { "" },
                )
            })
            .collect();
        text.extend(unreachable_lines(&unreachable));
        let list = PaneList { panes, unreachable };
        Done::new(&list, text.join("\n"))
    }
}

/// Runs `list` on every host (or only the one named), at once; a host
/// other than the local one that cannot be reached gives its error message
/// instead, and the others are listed all the same. An unknown host name is
/// refused.
async fn every_host<T, F, Fut>(
    server: &TermpilotServer,
    only: Option<&str>,
    list: F,
) -> ToolResult<Vec<(Host, Result<T, String>)>>
where
    F: Fn(termpilot_tmux::Engine) -> Fut,
    Fut: std::future::Future<Output = termpilot_tmux::Result<T>>,
{
    let hosts: Vec<Host> = match only {
        Some(name) => vec![address::host_argument(server, Some(name))?],
        None => server
            .hosts
            .names()
            .iter()
            .map(|n| Host::named(n))
            .collect(),
    };
    // Every host at once: each listing waits on its own connection.
    let listings = hosts.iter().map(|host| {
        let list = &list;
        async move {
            if only.is_none()
                && let Some(failed) = recent_failure(server, host)
            {
                return Err(ToolError::Failed(failed));
            }
            let listed = async { list(host.engine(server).await?).await }.await;
            if *host != Host::local() {
                server.hosts.note(host.name(), listed.as_ref().err());
            }
            listed.map_err(ToolError::from)
        }
    });
    let results = futures_util::future::join_all(listings).await;
    let mut out = Vec::with_capacity(hosts.len());
    for (host, result) in hosts.into_iter().zip(results) {
        match result {
            Ok(listed) => out.push((host, Ok(listed))),
            // The local server failing fails the call, as it always has;
            // another host is reported as unreachable.
            Err(error) if host == Host::local() => return Err(error),
            Err(error) => out.push((host, Err(error.to_string()))),
        }
    }
    Ok(out)
}

/// Why `host` could not be connected, when that happened lately: a listing
/// of every host reports it instead of waiting on the host again (up to its
/// connect timeout, on every call).
fn recent_failure(server: &TermpilotServer, host: &Host) -> Option<String> {
    let (error, ago) = server.hosts.recent_failure(host.name())?;
    Some(format!(
        "{error} ({} s ago; a call with host '{}' tries again at once)",
        ago.as_secs(),
        host.name()
    ))
}

/// The lines a listing's text ends with for hosts it could not reach.
fn unreachable_lines(unreachable: &[UnreachableHost]) -> impl Iterator<Item = String> + '_ {
    unreachable
        .iter()
        .map(|u| format!("host {} unreachable: {}", u.host, u.error))
}
