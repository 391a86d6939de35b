//! The commands of the model (`model.rs`), answered as tmux 3.3a answers
//! them: replies, errors with tmux's messages, and what each changes.

use super::line::{Cmd, expand};
use super::model::{Ctx, Effect, Exec, Input, Server, To};

/// The commands the model answers; a line naming any other fails to parse.
pub(crate) const KNOWN: &[&str] = &[
    "display-message",
    "list-sessions",
    "list-clients",
    "list-panes",
    "capture-pane",
    "send-keys",
    "set-buffer",
    "paste-buffer",
    "set-option",
    "kill-session",
    "kill-window",
    "kill-pane",
    "new-window",
    "split-window",
    "refresh-client",
    "wait-for",
    "kill-server",
    "if-shell",
];

impl Server {
    /// Runs one command from a control client attached to `session`.
    pub(crate) fn execute(&mut self, session: Option<u32>, cmd: &Cmd) -> Exec {
        let here = session.map(|s| self.session_ctx(s)).unwrap_or_default();
        match cmd.name.as_str() {
            "display-message" => self.display(cmd, here),
            "list-sessions" => self.list_sessions(cmd),
            "list-clients" => self.list_clients(cmd),
            "list-panes" => self.list_panes(cmd),
            "capture-pane" => self.capture(cmd),
            "send-keys" => self.send_keys(cmd),
            "set-buffer" => self.set_buffer(cmd),
            "paste-buffer" => self.paste_buffer(cmd),
            "set-option" => self.set_option(cmd),
            "kill-session" => self.kill_session(cmd),
            "kill-window" => self.kill_window(cmd),
            "kill-pane" => self.kill_pane(cmd),
            "new-window" => self.new_window_cmd(cmd),
            "split-window" => self.split_window(cmd),
            "refresh-client" => refresh_client(cmd),
            "wait-for" if cmd.has('S') => {
                let channel = cmd.args.first().cloned().unwrap_or_default();
                Exec::ok(Vec::new()).with(vec![Effect::Signal(channel)])
            }
            "kill-server" => Exec::ok(Vec::new()).with(vec![Effect::ServerGone]),
            "if-shell" if cmd.has('F') => self.if_format(cmd, here),
            name => Exec::error(format!("parse error: unknown command: {name}")),
        }
    }

    fn display(&self, cmd: &Cmd, here: Ctx) -> Exec {
        // tmux prints the message with empty fields when the target names
        // nothing (see `replies.tx`).
        let ctx = match cmd.opt('t') {
            Some(target) => self.resolve(target).unwrap_or_default(),
            None => here,
        };
        let format = cmd.args.first().map_or("", String::as_str);
        Exec::ok(vec![self.format(ctx, format)])
    }

    /// `if-shell -F COND CMD`, as the engine's guard before input uses
    /// it: a true condition runs `CMD`, which the fake knows only as a
    /// command that fails; a false one does nothing. A condition
    /// `#{!=:FORMAT,}` is true when FORMAT expands to text.
    fn if_format(&self, cmd: &Cmd, here: Ctx) -> Exec {
        let ctx = match cmd.opt('t') {
            Some(target) => self.resolve(target).unwrap_or_default(),
            None => here,
        };
        let condition = cmd.args.first().map_or("", String::as_str);
        let holds = match condition
            .strip_prefix("#{!=:")
            .and_then(|c| c.strip_suffix(",}"))
        {
            Some(inner) => !self.format(ctx, inner).is_empty(),
            None => !matches!(self.format(ctx, condition).as_str(), "" | "0"),
        };
        match (holds, cmd.args.get(1)) {
            (true, Some(command)) => Exec::error(format!("unknown command: {command}")),
            _ => Exec::ok(Vec::new()),
        }
    }

    fn list_sessions(&self, cmd: &Cmd) -> Exec {
        let format = cmd.opt('F').unwrap_or("#{session_name}");
        let lines = self
            .sessions
            .keys()
            .map(|&s| self.format(self.session_ctx(s), format))
            .collect();
        Exec::ok(lines)
    }

    fn list_clients(&self, cmd: &Cmd) -> Exec {
        let format = cmd.opt('F').unwrap_or("#{client_name}");
        let lines = self
            .clients
            .iter()
            .map(|(&conn, &session)| {
                let ctx = Ctx {
                    client: Some(conn as u32),
                    ..self.session_ctx(session)
                };
                self.format(ctx, format)
            })
            .collect();
        Exec::ok(lines)
    }

    fn list_panes(&self, cmd: &Cmd) -> Exec {
        let format = cmd.opt('F').unwrap_or("#{pane_id}");
        let panes: Vec<u32> = if cmd.has('a') {
            self.panes.keys().copied().collect()
        } else {
            let Some(ctx) = self.resolve(cmd.target()) else {
                let kind = if cmd.has('s') { "session" } else { "window" };
                return Exec::error(format!("can't find {kind}: {}", cmd.target()));
            };
            self.panes
                .values()
                .filter(|p| match cmd.has('s') {
                    true => self.windows[&p.window].session == ctx.session.unwrap_or(u32::MAX),
                    false => Some(p.window) == ctx.window,
                })
                .map(|p| p.id)
                .collect()
        };
        let lines = panes
            .into_iter()
            .map(|p| self.format(self.pane_ctx(p), format))
            .collect();
        Exec::ok(lines)
    }

    fn pane_of(&self, cmd: &Cmd) -> Result<u32, Exec> {
        self.resolve(cmd.target())
            .and_then(|ctx| ctx.pane)
            .ok_or_else(|| Exec::error(format!("can't find pane: {}", cmd.target())))
    }

    fn capture(&self, cmd: &Cmd) -> Exec {
        let pane = match self.pane_of(cmd) {
            Ok(pane) => &self.panes[&pane],
            Err(error) => return error,
        };
        let mut lines: Vec<String> = match cmd.opt('S') {
            Some("-") => pane.history.clone(),
            Some(start) => match start.parse::<i64>() {
                Ok(n) if n < 0 => {
                    let keep = (n.unsigned_abs() as usize).min(pane.history.len());
                    pane.history[pane.history.len() - keep..].to_vec()
                }
                _ => Vec::new(),
            },
            None => Vec::new(),
        };
        lines.extend(pane.screen.iter().cloned());
        if cmd.opt('E') == Some("0") {
            lines.truncate(pane.history.len().min(lines.len()) + 1);
        }
        Exec::ok(lines)
    }

    fn send_keys(&mut self, cmd: &Cmd) -> Exec {
        let pane = match self.pane_of(cmd) {
            Ok(pane) => pane,
            Err(error) => return error,
        };
        let input = match cmd.has('l') {
            true => Input::Text(cmd.args.join(" ")),
            false => Input::Keys(cmd.args.clone()),
        };
        self.give(pane, input)
    }

    /// Records input to a pane and lets its program answer.
    fn give(&mut self, pane: u32, input: Input) -> Exec {
        let entry = self.panes.get_mut(&pane).expect("pane exists");
        let printed = entry.program.as_mut().map(|program| program(&input));
        entry.inputs.push(input);
        let effects = printed
            .filter(|bytes| !bytes.is_empty())
            .map(|bytes| Effect::Output(pane, bytes));
        Exec::ok(Vec::new()).with(effects.into_iter().collect())
    }

    fn set_buffer(&mut self, cmd: &Cmd) -> Exec {
        let name = cmd.opt('b').unwrap_or("buffer0").to_owned();
        self.buffers.insert(name, cmd.args.join(" "));
        Exec::ok(Vec::new())
    }

    fn paste_buffer(&mut self, cmd: &Cmd) -> Exec {
        let pane = match self.pane_of(cmd) {
            Ok(pane) => pane,
            Err(error) => return error,
        };
        let name = cmd.opt('b').unwrap_or("buffer0");
        let Some(text) = self.buffers.get(name).cloned() else {
            return Exec::error(format!("no buffer {name}"));
        };
        if cmd.has('d') {
            self.buffers.remove(name);
        }
        let bracketed = cmd.has('p');
        self.give(pane, Input::Paste { text, bracketed })
    }

    fn set_option(&mut self, cmd: &Cmd) -> Exec {
        let name = cmd.args.first().cloned().unwrap_or_default();
        let value = cmd.args.get(1).cloned();
        if cmd.has('g') {
            match value {
                Some(value) => self.global.insert(name, value),
                None => self.global.remove(&name),
            };
            return Exec::ok(Vec::new());
        }
        let pane = match self.pane_of(cmd) {
            Ok(pane) => pane,
            Err(error) => return error,
        };
        let options = &mut self.panes.get_mut(&pane).expect("pane exists").options;
        match (cmd.has('u'), value) {
            (false, Some(value)) => options.insert(name, value),
            _ => options.remove(&name),
        };
        Exec::ok(Vec::new())
    }

    fn kill_session(&mut self, cmd: &Cmd) -> Exec {
        match self.resolve(cmd.target()).and_then(|ctx| ctx.session) {
            Some(session) => Exec::ok(Vec::new()).with(self.remove_session(session)),
            None => Exec::error(format!("can't find session: {}", cmd.target())),
        }
    }

    fn kill_window(&mut self, cmd: &Cmd) -> Exec {
        match self.resolve(cmd.target()).and_then(|ctx| ctx.window) {
            Some(window) => Exec::ok(Vec::new()).with(self.remove_window(window)),
            None => Exec::error(format!("can't find window: {}", cmd.target())),
        }
    }

    fn kill_pane(&mut self, cmd: &Cmd) -> Exec {
        match self.pane_of(cmd) {
            Ok(pane) => Exec::ok(Vec::new()).with(self.remove_pane(pane)),
            Err(error) => error,
        }
    }

    /// Removes a pane, its window when it was the last, and so on up.
    pub(crate) fn remove_pane(&mut self, pane: u32) -> Vec<Effect> {
        let Some(entry) = self.panes.remove(&pane) else {
            return Vec::new();
        };
        let window = self.windows.get_mut(&entry.window).expect("window exists");
        window.panes.retain(|&p| p != pane);
        if window.panes.is_empty() {
            let id = window.id;
            return self.remove_window(id);
        }
        let line = format!(
            "%layout-change @{} 0000,80x24,0,0,{} 0000,80x24,0,0,{} *",
            window.id, window.panes[0], window.panes[0]
        );
        vec![Effect::Notify(To::Attached(window.session), line)]
    }

    fn remove_window(&mut self, window: u32) -> Vec<Effect> {
        let Some(entry) = self.windows.remove(&window) else {
            return Vec::new();
        };
        for pane in &entry.panes {
            self.panes.remove(pane);
        }
        let session = self
            .sessions
            .get_mut(&entry.session)
            .expect("session exists");
        session.windows.retain(|&w| w != window);
        if session.windows.is_empty() {
            let id = session.id;
            return self.remove_session(id);
        }
        // tmux 3.3a unlinks a killed window before closing it, so even the
        // clients of its own session hear of an unlinked window.
        vec![Effect::Notify(
            To::All,
            format!("%unlinked-window-close @{window}"),
        )]
    }

    pub(crate) fn remove_session(&mut self, session: u32) -> Vec<Effect> {
        let Some(entry) = self.sessions.remove(&session) else {
            return Vec::new();
        };
        for window in entry.windows {
            if let Some(window) = self.windows.remove(&window) {
                for pane in window.panes {
                    self.panes.remove(&pane);
                }
            }
        }
        self.people.retain(|&s| s != session);
        let mut effects = vec![
            Effect::Notify(To::All, "%sessions-changed".into()),
            Effect::SessionGone(session),
        ];
        if self.sessions.is_empty() {
            effects.push(Effect::ServerGone);
        }
        effects
    }

    fn new_window_cmd(&mut self, cmd: &Cmd) -> Exec {
        let (session, index) = match cmd.target().split_once(':') {
            Some((session, index)) => (session, index.parse().ok()),
            None => (cmd.target(), None),
        };
        let Some(session) = self.resolve(&format!("{session}:")).and_then(|c| c.session) else {
            return Exec::error(format!("can't find session: {session}"));
        };
        if let Some(index) = index
            && self.session_windows(session).any(|w| w.index == index)
        {
            return Exec::error(format!("index {index} in use"));
        }
        let name = cmd.opt('n').map(|n| expand(n, &|_| String::new()));
        let window = self.new_window(session, index, name.as_deref(), (80, 24));
        let ctx = self.window_ctx(window);
        let line = self.format(
            ctx,
            cmd.opt('F')
                .unwrap_or("#{session_name}:#{window_index}.#{pane_index}"),
        );
        Exec::ok(vec![line]).with(vec![Effect::Notify(
            To::Attached(session),
            format!("%window-add @{window}"),
        )])
    }

    fn split_window(&mut self, cmd: &Cmd) -> Exec {
        let pane = match self.pane_of(cmd) {
            Ok(pane) => pane,
            Err(error) => return error,
        };
        let window = self.panes[&pane].window;
        let new = self.new_pane(window, (40, 24));
        let ctx = self.pane_ctx(new);
        let line = self.format(ctx, cmd.opt('F').unwrap_or("#{pane_id}"));
        let session = self.windows[&window].session;
        let layout = format!("%layout-change @{window} 0000,80x24,0,0 0000,80x24,0,0 *");
        Exec::ok(vec![line]).with(vec![Effect::Notify(To::Attached(session), layout)])
    }
}

/// `refresh-client`: flow control of a pane (`-A %N:continue`); other
/// forms are accepted and do nothing.
fn refresh_client(cmd: &Cmd) -> Exec {
    let Some(spec) = cmd.opt('A') else {
        return Exec::ok(Vec::new());
    };
    let Some((pane, action)) = spec.split_once(':') else {
        return Exec::error(format!("bad pane flag: {spec}"));
    };
    let Some(id) = pane.strip_prefix('%').and_then(|p| p.parse().ok()) else {
        return Exec::error(format!("unknown pane: {pane}"));
    };
    let paused = match action {
        "pause" => true,
        "continue" | "on" => false,
        _ => return Exec::error(format!("bad pane flag: {spec}")),
    };
    let word = if paused { "pause" } else { "continue" };
    let mut exec = Exec::ok(Vec::new()).with(vec![Effect::Flow { pane: id, paused }]);
    // tmux writes the flow notification inside the command's own reply
    // (see `pause.tx`).
    exec.inside.push(format!("%{word} %{id}").into_bytes());
    exec
}
