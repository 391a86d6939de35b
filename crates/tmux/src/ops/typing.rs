//! Typing into panes: keystrokes and pastes, and the tmux commands they become.

use termpilot_control::{Command, PaneId};
use termpilot_keys::Key;

use crate::client::{Group, GroupReplies};
use crate::cursor::Cursor;
use crate::engine::{Engine, call, not_found_pane, ok_reply};
use crate::error::{Error, Result};

/// Keystrokes for one pane.
#[derive(Debug, Clone, Default)]
pub struct Input {
    /// Literal text, sent byte for byte.
    pub text: Option<String>,
    /// Keys pressed after the text.
    pub keys: Vec<Key>,
    /// Press Enter last.
    pub enter: bool,
}

/// How long input waits for its reply on the pane's own client before it
/// takes the cursor from before it was sent (see `Engine::run_for_pane`).
const INPUT_REPLY_WAIT: std::time::Duration = std::time::Duration::from_millis(100);

impl Engine {
    /// Types into a pane: literal text, then keys, then Enter. Returns the
    /// pane's cursor from before the input.
    pub async fn send_input(&self, pane: PaneId, input: &Input) -> Result<Cursor> {
        let (cursor, _) = self.send_input_then(pane, input, None).await?;
        Ok(cursor)
    }

    /// [`Engine::send_input`], with `then` run right after the input on the
    /// same client (see [`Engine::type_unless_held_then`]).
    pub(crate) async fn send_input_then(
        &self,
        pane: PaneId,
        input: &Input,
        then: Option<Group>,
    ) -> Result<(Cursor, Option<GroupReplies>)> {
        self.refuse_own_pane(pane, "type into")?;
        let bytes = crate::gate::input_bytes(input);
        let commands = input_commands(pane, input);
        let (cursor, then) = (self.type_unless_held_then(pane, &bytes, commands, then)).await?;
        if let Some(text) = &input.text {
            self.shared.panes.record_typed(pane, cursor, text);
        }
        Ok((self.cursor(pane, cursor), then))
    }

    /// Pastes text into a pane through a tmux buffer, bracketed when the
    /// program asked for bracketed paste and `bracketed` is set. Returns the
    /// cursor from before the paste.
    pub async fn paste(
        &self,
        pane: PaneId,
        text: &str,
        bracketed: bool,
        enter: bool,
    ) -> Result<Cursor> {
        self.refuse_own_pane(pane, "paste into")?;
        let buffer = self.buffer_name();
        let commands = paste_commands(pane, &buffer, text, bracketed, enter)?;
        let bytes = crate::gate::paste_bytes(text, enter);
        let cursor = self.type_unless_held(pane, &bytes, commands).await?;
        self.shared.panes.record_typed(pane, cursor, text);
        Ok(self.cursor(pane, cursor))
    }

    /// A paste buffer name no other paste uses.
    pub(crate) fn buffer_name(&self) -> String {
        format!("termpilot-{}", self.shared.next_client_id().0)
    }

    /// Runs commands about one pane on the client that carries its output,
    /// in one write; returns the cursor taken at the first reply.
    ///
    /// tmux runs a command as soon as it reads it, but writes the reply
    /// after all output it queued for the client before: while the client
    /// is behind, the reply (and the exact cursor) can be seconds away. Then
    /// the commands run on the quiet client, or the reply is given up after
    /// [`INPUT_REPLY_WAIT`], and the cursor is the end of the output read
    /// before they were sent: no later than the input, so a wait from it
    /// misses nothing the input caused (it may see output from just before).
    pub(crate) async fn run_for_pane(&self, pane: PaneId, commands: Vec<Command>) -> Result<u64> {
        self.forget_ready(pane);
        let client = self.client_for_pane(pane).await?;
        let before = self.journal_end(pane);
        let target = pane.to_string();
        if client.is_behind()
            && let Ok(quiet) = self.quiet().await
        {
            let calls = (commands.into_iter())
                .map(|command| call(command, None))
                .collect::<Result<Vec<_>>>()?;
            for answer in quiet.call_many(calls).await {
                ok_reply(answer?).map_err(|e| not_found_pane(e, &target))?;
            }
            return Ok(before);
        }
        let mut calls = Vec::with_capacity(commands.len());
        for (i, command) in commands.into_iter().enumerate() {
            calls.push(call(command, (i == 0).then_some(pane))?);
        }
        let replies = client.send_many(calls).await.answers();
        let Ok(answers) = tokio::time::timeout(INPUT_REPLY_WAIT, replies).await else {
            return Ok(before);
        };
        let mut cursor = None;
        for answer in answers {
            let answer = answer?;
            cursor = cursor.or(answer.cursor);
            ok_reply(answer).map_err(|e| not_found_pane(e, &target))?;
        }
        Ok(cursor.unwrap_or(before))
    }
}

/// The tmux commands that type `input` into `pane`.
pub(crate) fn input_commands(pane: PaneId, input: &Input) -> Vec<Command> {
    let target = pane.to_string();
    let mut commands = Vec::new();
    if let Some(text) = input.text.as_deref().filter(|t| !t.is_empty()) {
        commands.push(
            Command::new("send-keys")
                .flag("-l")
                .opt("-t", &target)
                .end_of_flags()
                .arg(text),
        );
    }
    if !input.keys.is_empty() {
        let mut command = Command::new("send-keys").opt("-t", &target).end_of_flags();
        for key in &input.keys {
            command = command.arg(key.tmux_name());
        }
        commands.push(command);
    }
    if input.enter {
        commands.push(Command::new("send-keys").opt("-t", &target).arg("Enter"));
    }
    commands
}

/// The tmux commands that paste `text` into `pane` through `buffer`.
///
/// A bracketed paste refuses text holding a bracketed-paste delimiter: an
/// end-of-paste sequence (`ESC[201~`) would end the paste early and the
/// program would take the rest as typed keys (a shell runs each line), and
/// a start-of-paste sequence (`ESC[200~`) has no place inside a paste either.
pub(crate) fn paste_commands(
    pane: PaneId,
    buffer: &str,
    text: &str,
    bracketed: bool,
    enter: bool,
) -> Result<Vec<Command>> {
    if bracketed {
        refuse_paste_delimiters(text)?;
    }
    let target = pane.to_string();
    let mut paste = Command::new("paste-buffer")
        .flag("-d")
        .flag("-r")
        .opt("-b", buffer)
        .opt("-t", &target);
    if bracketed {
        paste = paste.flag("-p");
    }
    let mut commands = vec![
        Command::new("set-buffer")
            .opt("-b", buffer)
            .end_of_flags()
            .arg(text),
        paste,
    ];
    if enter {
        commands.push(Command::new("send-keys").opt("-t", &target).arg("Enter"));
    }
    Ok(commands)
}

/// Refuses text that holds `ESC[200~` or `ESC[201~`.
fn refuse_paste_delimiters(text: &str) -> Result<()> {
    for (sequence, what) in [("\x1b[201~", "end"), ("\x1b[200~", "start")] {
        if let Some(at) = text.find(sequence) {
            return Err(Error::InvalidArgument(format!(
                "text contains ESC[{}~ (the {what}-of-paste sequence) at byte {at}: a bracketed \
                 paste cannot carry it, since it would let the rest of the text out of the paste \
                 as typed keys; remove it (or paste with bracketed: false, where every line is \
                 typed as keys anyway)",
                &sequence[2..5],
            )));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_sent_by_their_tmux_names() {
        let pane = PaneId(3);
        let input = Input {
            text: Some("ls".into()),
            keys: vec!["^c".parse().unwrap(), "pgup".parse().unwrap()],
            enter: true,
        };
        let lines: Vec<String> = input_commands(pane, &input)
            .iter()
            .map(|command| String::from_utf8_lossy(&command.clone().build().unwrap()).into_owned())
            .collect();
        assert_eq!(lines.len(), 3, "{lines:?}");
        // `^c` and `pgup` go to tmux by their canonical names.
        assert!(lines[1].contains(r#""C\-c" "PageUp""#), "{lines:?}");
    }
}
