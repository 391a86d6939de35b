//! The screen with its colours: `capture-pane -e`, for pictures of a pane.

use termpilot_control::{Command, PaneId};

use crate::cursor::Cursor;
use crate::engine::Engine;
use crate::error::Result;
use crate::format::tmux_format;

/// A pane's visible screen as tmux holds it: each row with the escape
/// sequences that set its colours and attributes, and where the cursor is.
#[derive(Debug, Clone)]
pub struct StyledCapture {
    /// The pane.
    pub pane: PaneId,
    /// `capture-pane -p -e -J` output: one line per line of text (wrapped
    /// rows joined, trailing spaces kept), colours as SGR sequences that
    /// carry over from line to line. `run_command`'s wrappers are still in it.
    pub lines: Vec<u8>,
    /// The pane's width in cells.
    pub width: u16,
    /// The pane's height in cells.
    pub height: u16,
    /// The cursor's column.
    pub cursor_x: u16,
    /// The cursor's row.
    pub cursor_y: u16,
    /// Whether the program shows the cursor.
    pub cursor_visible: bool,
    /// The pane's output position when the capture was taken.
    pub cursor: Cursor,
    /// Whether a full-screen program is on the alternate screen.
    pub alternate_screen: bool,
    /// Whether the pane is in copy mode or another mode.
    pub in_mode: bool,
    /// Lines of history the pane holds above the screen.
    pub history_size: u64,
    /// The most lines of history tmux keeps for the pane.
    pub history_limit: u64,
    /// The exit status of the pane's program, when it has ended (and the
    /// pane stays, as with `remain-on-exit`).
    pub exit_status: Option<i32>,
}

tmux_format! {
    /// The geometry and screen facts reported with a styled capture.
    struct StyledFacts {
        width: u16 = "pane_width",
        height: u16 = "pane_height",
        cursor_x: u16 = "cursor_x",
        cursor_y: u16 = "cursor_y",
        cursor_visible: bool = "cursor_flag",
        alternate_screen: bool = "alternate_on",
        in_mode: bool = "pane_in_mode",
        history_size: Option<u64> = "history_size",
        history_limit: Option<u64> = "history_limit",
        dead: bool = "pane_dead",
        dead_status: Option<i64> = "pane_dead_status",
    }
}

impl Engine {
    /// The visible screen of `pane` with its colours and the cursor, read
    /// in one write with the pane's geometry (so that the two agree).
    pub async fn capture_styled(&self, pane: PaneId) -> Result<StyledCapture> {
        let target = pane.to_string();
        let capture = Command::new("capture-pane")
            .flag("-p")
            .flag("-e")
            .flag("-J")
            .opt("-t", &target);
        let facts = Command::new("display-message")
            .flag("-p")
            .opt("-t", &target)
            .arg(StyledFacts::FORMAT);
        let (body, facts, cursor) = self.capture_with_facts(pane, capture, facts).await?;
        let facts = StyledFacts::parse_first("display-message", &facts)?;
        self.shared
            .panes
            .learn_size(pane, facts.width, facts.height);
        Ok(StyledCapture {
            pane,
            lines: body.lines.join(&b'\n'),
            width: facts.width,
            height: facts.height,
            cursor_x: facts.cursor_x,
            cursor_y: facts.cursor_y,
            cursor_visible: facts.cursor_visible,
            cursor: self.cursor(pane, cursor),
            alternate_screen: facts.alternate_screen,
            in_mode: facts.in_mode,
            history_size: facts.history_size.unwrap_or_default(),
            history_limit: facts.history_limit.unwrap_or_default(),
            exit_status: facts
                .dead
                .then(|| facts.dead_status.and_then(|s| i32::try_from(s).ok()))
                .flatten(),
        })
    }
}
