//! One handler per tool: arguments in, engine call, result out.

use std::collections::BTreeMap;

use serde_json::Value;
use termpilot_tmux::{
    Input, NewSession, NewWindow, PaneId, PaneScope, Scrollback, Split, SplitDirection,
    hide_wrappers,
};

use crate::params::*;
use crate::results::*;
use crate::server::{CallContext, Done, TermpilotServer};
use crate::validate::parse;
use crate::{batches, waits};

type Outcome = Result<Done, String>;

/// Runs the named tool with already schema-checked arguments.
pub(crate) async fn dispatch(
    server: &TermpilotServer,
    name: &str,
    arguments: Value,
    call: &CallContext,
) -> Outcome {
    match name {
        "capture_since" => capture_since(server, parse(name, arguments)?).await,
        "send_keys_batch" => batches::send_keys_batch(server, parse(name, arguments)?, call).await,
        "run_batch" => batches::run_batch(server, parse(name, arguments)?, call).await,
        "read_output" => read_output(server, parse(name, arguments)?),
        "wait_for_text" => waits::wait_for_text(server, parse(name, arguments)?, call).await,
        "wait_for_idle" => waits::wait_for_idle(server, parse(name, arguments)?, call).await,
        "wait_for_channel" => waits::wait_for_channel(server, parse(name, arguments)?, call).await,
        "signal_channel" => waits::signal_channel(server, parse(name, arguments)?).await,
        "run_command" => waits::run_command(server, parse(name, arguments)?, call).await,
        "wait_for_command" => waits::wait_for_command(server, parse(name, arguments)?, call).await,
        "list_sessions" => list_sessions(server).await,
        "list_panes" => list_panes(server, parse(name, arguments)?).await,
        "capture_pane" => capture_pane(server, parse(name, arguments)?).await,
        "send_keys" => send_keys(server, parse(name, arguments)?).await,
        "paste_text" => paste_text(server, parse(name, arguments)?).await,
        "type_secret" => crate::secrets::type_secret(server, parse(name, arguments)?).await,
        "create_session" => create_session(server, parse(name, arguments)?).await,
        "create_window" => create_window(server, parse(name, arguments)?).await,
        "split_pane" => split_pane(server, parse(name, arguments)?).await,
        "kill_session" => {
            let params: KillSessionParams = parse(name, arguments)?;
            killed(server.engine.kill_session(&params.session).await)
        }
        "kill_window" => {
            let params: KillWindowParams = parse(name, arguments)?;
            killed(server.engine.kill_window(&params.window).await)
        }
        "kill_pane" => {
            let params: KillPaneParams = parse(name, arguments)?;
            killed(server.engine.kill_pane(&params.pane).await)
        }
        other => Err(format!("tool {other} has no handler")),
    }
}

pub(crate) fn engine_error(error: termpilot_tmux::Error) -> String {
    error.to_string()
}

async fn list_sessions(server: &TermpilotServer) -> Outcome {
    let mut sessions = server.engine.list_sessions().await.map_err(engine_error)?;
    sessions.retain(|s| server.oversight.scope.allows(&s.name));
    let text = sessions
        .iter()
        .map(|s| {
            format!(
                "{} {} ({} windows, {} attached)",
                s.id, s.name, s.windows, s.attached
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    let list = SessionList {
        sessions: sessions.into_iter().map(Into::into).collect(),
    };
    Done::new(&list, text)
}

async fn list_panes(server: &TermpilotServer, params: ListPanesParams) -> Outcome {
    let scope = match (params.window, params.session) {
        (Some(window), _) => PaneScope::Window(window),
        (None, Some(session)) => PaneScope::Session(session),
        (None, None) => PaneScope::All,
    };
    let mut panes = server
        .engine
        .list_panes(&scope)
        .await
        .map_err(engine_error)?;
    panes.retain(|p| server.oversight.scope.allows(&p.session_name));
    let text = panes
        .iter()
        .map(|p| {
            format!(
                "{} {}:{}.{} {}x{} {} {}{}{}",
                p.id,
                p.session_name,
                p.window_index,
                p.index,
                p.width,
                p.height,
                p.current_command,
                p.cwd,
                if p.active { " (active)" } else { "" },
                if p.dead { " (dead)" } else { "" },
            )
        })
        .collect::<Vec<_>>()
        .join("\n");
    let list = PaneList {
        panes: panes.into_iter().map(Into::into).collect(),
    };
    Done::new(&list, text)
}

pub(crate) async fn pane(server: &TermpilotServer, target: &str) -> Result<PaneId, String> {
    let scope = &server.oversight.scope;
    scope
        .resolve_pane(&server.engine, target)
        .await
        .map_err(engine_error)
}

async fn send_keys(server: &TermpilotServer, params: SendKeysParams) -> Outcome {
    let input = checked_input(&params, "")?;
    let pane = pane(server, &params.pane).await?;
    let cursor = server
        .engine
        .send_input(pane, &input)
        .await
        .map_err(engine_error)?;
    sent(server, pane, cursor)
}

/// The keystrokes of send_keys arguments, checked; errors name the field
/// after `prefix` (e.g. "operations[3].").
pub(crate) fn checked_input(params: &SendKeysParams, prefix: &str) -> Result<Input, String> {
    let keys = validate_keys(params.keys.as_deref().unwrap_or_default(), prefix)?;
    let text = params.text.clone().filter(|t| !t.is_empty());
    if let Some(text) = &text {
        refuse_nul(&format!("{prefix}text"), text)?;
    }
    let enter = params.enter.unwrap_or(text.is_some());
    if text.is_none() && keys.is_empty() && !enter {
        let at = prefix.trim_end_matches('.');
        let at = if at.is_empty() {
            String::new()
        } else {
            format!("{at}: ")
        };
        return Err(format!(
            "{at}nothing to send: give `text`, `keys`, or `enter: true`"
        ));
    }
    Ok(Input { text, keys, enter })
}

pub(crate) async fn paste_text(server: &TermpilotServer, params: PasteTextParams) -> Outcome {
    refuse_nul("text", &params.text)?;
    let pane = pane(server, &params.pane).await?;
    let cursor = server
        .engine
        .paste(pane, &params.text, params.bracketed, params.enter)
        .await
        .map_err(engine_error)?;
    sent(server, pane, cursor)
}

pub(crate) fn sent(server: &TermpilotServer, pane: PaneId, cursor: u64) -> Outcome {
    let entry = SentEntry {
        pane: pane.to_string(),
        cursor: server.cursor(pane, cursor),
    };
    let text = format!("sent to {}; cursor {}", entry.pane, entry.cursor);
    Done::new(&entry, text)
}

/// Checks every key name, naming the first bad one by its index.
fn validate_keys(keys: &[KeyName], prefix: &str) -> Result<Vec<String>, String> {
    keys.iter()
        .enumerate()
        .map(|(i, KeyName(name))| match termpilot_keys::parse_key(name) {
            Ok(_) => Ok(name.clone()),
            Err(e) => Err(format!(
                "{prefix}keys[{i}]: {e}; to type text literally, use `text` instead of `keys`"
            )),
        })
        .collect()
}

pub(crate) fn refuse_nul(field: &str, text: &str) -> Result<(), String> {
    if text.contains('\0') {
        return Err(format!(
            "{field} contains a NUL character, which tmux cannot carry in text; \
             send it as a key instead: keys: [\"C-@\"]"
        ));
    }
    Ok(())
}

pub(crate) async fn capture_pane(server: &TermpilotServer, params: CapturePaneParams) -> Outcome {
    let pane = pane(server, &params.pane).await?;
    let scrollback = match params.scrollback {
        None => Scrollback::None,
        Some(ScrollbackArg::Lines(0)) => Scrollback::None,
        Some(ScrollbackArg::Lines(n)) => Scrollback::Lines(n),
        Some(ScrollbackArg::All(_)) => Scrollback::All,
    };
    let capture = server
        .engine
        .capture(pane, scrollback)
        .await
        .map_err(engine_error)?;
    let budget = server.budget(params.max_tokens, None);
    // Asked for more history than tmux holds, and tmux's history is full:
    // lines above it are gone from the pane, which the text says first.
    let reaches_top = match scrollback {
        Scrollback::None => false,
        Scrollback::Lines(n) => u64::from(n) > capture.history_size,
        Scrollback::All => true,
    };
    let history_truncated = reaches_top && capture.history_full();
    let mut screen = capture.lines.join("\n");
    if history_truncated {
        screen = format!(
            "[tmux's history of this pane is full ({} lines): earlier lines may be gone; \
             capture_since from an earlier cursor reads them while the journal holds them]\n{screen}",
            capture.history_limit
        );
    }
    let rendered = server.fit_text(&hide_wrappers(&screen), &budget)?;
    let entry = CaptureEntry {
        pane: pane.to_string(),
        text: rendered.text.clone(),
        truncated: rendered.truncated,
        total_lines: rendered.total_lines,
        omitted_lines: rendered.omitted_lines,
        omitted_bytes: rendered.omitted_bytes,
        output_id: rendered.output_id.clone(),
        cursor: server.cursor(pane, capture.cursor),
        alternate_screen: capture.alternate_screen,
        in_mode: capture.in_mode,
        history_size: capture.history_size,
        history_truncated,
    };
    let mut notes = Vec::new();
    if capture.alternate_screen {
        notes.push("full-screen program on the alternate screen");
    }
    if capture.in_mode {
        notes.push("pane in copy mode");
    }
    let header = if notes.is_empty() {
        String::new()
    } else {
        format!("[{}]\n", notes.join("; "))
    };
    Done::new(&entry, format!("{header}{}", rendered.text))
}

fn env_pairs(env: Option<BTreeMap<String, String>>) -> Result<Vec<(String, String)>, String> {
    let env = env.unwrap_or_default();
    if env.len() > MAX_ENV {
        return Err(format!(
            "env: at most {MAX_ENV} variables, got {}",
            env.len()
        ));
    }
    for (key, value) in &env {
        let valid = !key.is_empty()
            && !key.starts_with(|c: char| c.is_ascii_digit())
            && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid {
            return Err(format!(
                "env: {key:?} is not a valid variable name (letters, digits and _, not starting with a digit)"
            ));
        }
        refuse_nul("env value", value)?;
    }
    Ok(env.into_iter().collect())
}

async fn create_session(server: &TermpilotServer, params: CreateSessionParams) -> Outcome {
    let options = NewSession {
        name: params.name,
        command: params.command,
        cwd: params.cwd,
        env: env_pairs(params.env)?,
        width: params.width,
        height: params.height,
    };
    created(server.engine.create_session(&options).await)
}

async fn create_window(server: &TermpilotServer, params: CreateWindowParams) -> Outcome {
    let options = NewWindow {
        target: params.session,
        name: params.name,
        command: params.command,
        cwd: params.cwd,
        env: env_pairs(params.env)?,
    };
    created(server.engine.create_window(&options).await)
}

async fn split_pane(server: &TermpilotServer, params: SplitPaneParams) -> Outcome {
    let options = Split {
        target: params.pane,
        direction: match params.direction {
            Direction::Right => SplitDirection::Right,
            Direction::Left => SplitDirection::Left,
            Direction::Below => SplitDirection::Below,
            Direction::Above => SplitDirection::Above,
        },
        size: params.size,
        command: params.command,
        cwd: params.cwd,
        env: env_pairs(params.env)?,
    };
    created(server.engine.split_pane(&options).await)
}

fn created(result: termpilot_tmux::Result<termpilot_tmux::Created>) -> Outcome {
    let entry = CreatedEntry::from(result.map_err(engine_error)?);
    let text = format!(
        "created pane {} in window {} ({}:{}) of session {} ({})",
        entry.pane,
        entry.window,
        entry.session_name,
        entry.window_index,
        entry.session,
        entry.session_name
    );
    Done::new(&entry, text)
}

fn killed(result: termpilot_tmux::Result<termpilot_tmux::Killed>) -> Outcome {
    let entry = KilledEntry::from(result.map_err(engine_error)?);
    let text = format!(
        "killed {} pane(s) [{}]{}",
        entry.panes.len(),
        entry.panes.join(", "),
        if entry.windows.is_empty() {
            String::new()
        } else {
            format!(" and window(s) [{}]", entry.windows.join(", "))
        }
    );
    Done::new(&entry, text)
}

/// Parses a cursor and checks it belongs to `pane` on the current server.
pub(crate) fn cursor_offset(
    server: &TermpilotServer,
    pane: PaneId,
    text: &str,
) -> Result<u64, String> {
    let cursor: termpilot_journal::Cursor = text.parse().map_err(|e| format!("cursor: {e}"))?;
    if cursor.pane != pane.0 {
        return Err(format!(
            "cursor {text} belongs to pane %{}, not {pane}; use a cursor returned for {pane}",
            cursor.pane
        ));
    }
    if cursor.epoch != server.engine.epoch() {
        return Err(format!(
            "cursor {text} is from an earlier tmux server (it restarted since); \
             take a new cursor with capture_pane"
        ));
    }
    Ok(cursor.offset)
}

pub(crate) async fn capture_since(server: &TermpilotServer, params: CaptureSinceParams) -> Outcome {
    let pane = pane(server, &params.pane).await?;
    let from = cursor_offset(server, pane, &params.cursor)?;
    let end = server.engine.sync_pane(pane).await.map_err(engine_error)?;
    let (bytes, lost) = server.engine.read_journal(pane, |journal| {
        let read = journal.read_from(from);
        (read.bytes.into_owned(), read.lost)
    });
    let budget = server.budget(params.max_tokens, None);
    let text = termpilot_journal::clean_text(&bytes);
    let fitted = server.fit_text(&hide_wrappers(&text), &budget)?;
    let entry = SinceEntry {
        pane: pane.to_string(),
        text: fitted.text.clone(),
        truncated: fitted.truncated,
        total_lines: fitted.total_lines,
        omitted_lines: fitted.omitted_lines,
        omitted_bytes: fitted.omitted_bytes,
        output_id: fitted.output_id.clone(),
        lost_bytes: lost,
        cursor: server.cursor(pane, end.max(from)),
    };
    let lost_note = if lost > 0 {
        format!("[{lost} bytes of output after the cursor were lost: the journal dropped them]\n")
    } else {
        String::new()
    };
    Done::new(
        &entry,
        format!("{lost_note}{}\n[cursor {}]", fitted.text, entry.cursor),
    )
}

fn read_output(server: &TermpilotServer, params: ReadOutputParams) -> Outcome {
    let grep = match &params.grep {
        Some(source) => {
            Some(regex::Regex::new(source).map_err(|e| format!("grep: invalid regex: {e}"))?)
        }
        None => None,
    };
    let page = {
        let store = server.store.lock().unwrap_or_else(|e| e.into_inner());
        store
            .page(
                &params.output_id,
                params.offset.unwrap_or(0),
                params.limit.unwrap_or(200),
                grep.as_ref(),
            )
            .map_err(|e| e.to_string())?
    };
    let budget = server.budget(params.max_tokens, None);
    let rendered = termpilot_render::render(&page.text(), &budget, None);
    let entry = PageEntry {
        output_id: params.output_id.clone(),
        text: rendered.text.clone(),
        first_line: page.first_line,
        lines: page.lines.len(),
        total_lines: page.total_lines,
        remaining_lines: page.remaining_lines,
        next_offset: page.next_offset,
        matching_lines: page.matching_lines,
    };
    Done::new(&entry, format!("{}\n{}", page.header(), rendered.text))
}
