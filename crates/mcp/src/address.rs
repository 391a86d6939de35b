//! Where a call points: the one place where targets, cursors and command ids
//! are read from a call's arguments (with the host they name), and written
//! into its results.
//!
//! The machine termpilot runs on is host `local`, and its ids are written
//! as tmux writes them (`%3`, `work:1.0`). Anything on another host carries
//! its name in front: `build/%3`, `build/work:1.0`, `build/c1.…`. A prefix
//! counts as a host only when it names a configured one (or `local`), so a
//! local session may still be called `pts/3`.

use std::fmt;
use std::sync::Arc;

use termpilot_tmux::{Cursor, Engine, PaneId};

use crate::error::{ToolError, ToolResult};
use crate::server::TermpilotServer;

/// A host as calls name it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub(crate) struct Host(Option<Arc<str>>);

impl Host {
    /// The machine termpilot runs on.
    pub(crate) fn local() -> Host {
        Host(None)
    }

    /// The host configured as `name` (`local` is the local host).
    pub(crate) fn named(name: &str) -> Host {
        if name == termpilot_tmux::LOCAL {
            Host(None)
        } else {
            Host(Some(name.into()))
        }
    }

    /// Its name, `local` for the local host.
    pub(crate) fn name(&self) -> &str {
        self.0.as_deref().unwrap_or(termpilot_tmux::LOCAL)
    }

    /// `id` as results write it: with the host in front, unless local.
    pub(crate) fn qualify(&self, id: impl fmt::Display) -> String {
        match &self.0 {
            None => id.to_string(),
            Some(name) => format!("{name}/{id}"),
        }
    }

    /// The host's engine, connecting to it on first use.
    pub(crate) async fn engine(&self, server: &TermpilotServer) -> ToolResult<Engine> {
        match &self.0 {
            None => Ok(server.engine.clone()),
            Some(name) => Ok(server.hosts.engine(name).await?),
        }
    }
}

/// Splits the host off a target, cursor or command id: `build/%3` is `%3`
/// on host `build` when `build` is configured; anything else is local.
pub(crate) fn split<'a>(server: &TermpilotServer, text: &'a str) -> (Host, &'a str) {
    if let Some((name, rest)) = text.split_once('/')
        && (name == termpilot_tmux::LOCAL || server.hosts.contains(name))
    {
        return (Host::named(name), rest);
    }
    (Host::local(), text)
}

/// A `host` argument: the host it names, which must be configured.
pub(crate) fn host_argument(server: &TermpilotServer, name: Option<&str>) -> ToolResult<Host> {
    match name {
        None => Ok(Host::local()),
        Some(name) if name == termpilot_tmux::LOCAL || server.hosts.contains(name) => {
            Ok(Host::named(name))
        }
        Some(name) => Err(ToolError::refused(format!(
            "host: no host is called {name:?}; the hosts are {}",
            server.hosts.names().join(", ")
        ))),
    }
}

/// A pane on a host, with that host's engine.
#[derive(Clone)]
pub(crate) struct Pane {
    pub(crate) host: Host,
    pub(crate) engine: Engine,
    pub(crate) id: PaneId,
}

impl fmt::Display for Pane {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.host.qualify(self.id))
    }
}

impl Pane {
    /// A cursor of this pane's host as results write it.
    pub(crate) fn cursor_text(&self, cursor: Cursor) -> String {
        self.host.qualify(cursor)
    }

    /// The cursor a `cursor` or `since` argument names, which must be of
    /// this pane's host.
    pub(crate) fn cursor(&self, server: &TermpilotServer, text: &str) -> ToolResult<Cursor> {
        let (host, rest) = split(server, text);
        if host != self.host {
            return Err(ToolError::refused(format!(
                "cursor {text} is of host {}, not of {self}'s host {}; use a cursor returned \
                 for {self}",
                host.name(),
                self.host.name()
            )));
        }
        rest.parse()
            .map_err(|e| ToolError::refused(format!("cursor: {e}")))
    }
}

/// A target on a host: the host, its engine and the target as that host's
/// tmux reads it.
pub(crate) struct Target<'a> {
    pub(crate) host: Host,
    pub(crate) engine: Engine,
    pub(crate) target: &'a str,
}

/// The host and engine a session, window or pane target names.
pub(crate) async fn target<'a>(server: &TermpilotServer, text: &'a str) -> ToolResult<Target<'a>> {
    let (host, target) = split(server, text);
    let engine = host.engine(server).await?;
    Ok(Target {
        host,
        engine,
        target,
    })
}

/// The pane a `pane` argument names, within the operator's scope (a pane
/// outside it gets the error of a pane that does not exist).
pub(crate) async fn pane(server: &TermpilotServer, text: &str) -> ToolResult<Pane> {
    let Target {
        host,
        engine,
        target,
    } = target(server, text).await?;
    let scope = &server.oversight.scope;
    let id = scope.resolve_pane(&engine, target).await?;
    Ok(Pane { host, engine, id })
}

/// A command id of a host's engine, as results write it.
pub(crate) fn command_id(host: &Host, id: &str) -> String {
    host.qualify(id)
}
