//! The line a pane's program holds, modelled from the bytes typed into it:
//! no I/O, no tmux.
//!
//! A terminal program that reads lines (a shell, a REPL, `cat`) gets bytes;
//! a carriage return or a newline submits what was typed since the last one.
//! [`Line`] follows the editing that line editors share (readline, zle,
//! fish, Python's REPL, the terminal's own line discipline): inserting at a
//! cursor, Backspace, Delete, cursor motion, `C-u`/`C-k`/`C-w` killing and
//! `C-y` yanking back, `C-c` abandoning the line. What it cannot know (Tab
//! completion, history recall, vi mode, a program's own key bindings) it
//! does not guess; so besides the edited line it keeps the *typed* reading,
//! every character inserted since the line was last empty whatever editing
//! followed, and both readings are judged: a line matches when either does.

/// What a program reading lines would hold: the edited line, and everything
/// typed into it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Line {
    /// The line as edited, with the cursor in it.
    chars: Vec<char>,
    cursor: usize,
    /// Every character inserted since the line was last empty.
    typed: String,
    /// The text last killed (`C-u`, `C-k`, `C-w`, `M-d`), which `C-y` inserts.
    killed: Vec<char>,
    /// An escape sequence begun and not yet ended (one call may end with
    /// `Escape` and the next begin with `[D`).
    escape: Option<Vec<u8>>,
    /// Bytes of a UTF-8 character begun and not yet ended.
    partial: Vec<u8>,
    /// The lines before this one that it continues (each ended in a
    /// backslash), joined.
    carry: String,
}

/// The length from which the edited line only grows at its end.
const LONG_LINE: usize = 16_384;

/// What one key or character does to the line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Edit {
    Insert(char),
    Submit,
    Abandon,
    DeleteBack,
    DeleteForward,
    Left,
    Right,
    Home,
    End,
    WordLeft,
    WordRight,
    KillToStart,
    KillToEnd,
    KillWordBack,
    KillWordForward,
    Yank,
    /// A key whose effect is not modelled (history, completion, ...).
    Unknown,
}

impl Line {
    /// A line with nothing typed.
    pub fn new() -> Line {
        Line::default()
    }

    /// Feeds bytes as the terminal receives them; returns the readings of
    /// every line they submit, in order (see [`Line::readings`]).
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<Vec<String>> {
        let mut submitted = Vec::new();
        for &byte in bytes {
            for edit in self.decode(byte) {
                if edit == Edit::Submit {
                    submitted.push(self.readings());
                    self.carry = self.continued();
                    self.clear();
                } else {
                    self.apply(edit);
                }
            }
        }
        submitted
    }

    /// The line's readings: the edited line and, when it differs, the typed
    /// one. Empty when nothing was typed.
    /// A line continued from the one before (see [`Line::continued`])
    /// reads as the two joined.
    pub fn readings(&self) -> Vec<String> {
        let edited: String = self.chars.iter().collect();
        let mut out = Vec::new();
        for reading in [edited, self.typed.clone()] {
            let whole = format!("{}{reading}", self.carry);
            if !reading.is_empty() && !out.contains(&whole) {
                out.push(whole);
            }
        }
        out
    }

    /// What the next line continues, once this one is submitted: a shell
    /// reads a line ending in a backslash and the next as one command line.
    fn continued(&self) -> String {
        let edited: String = self.chars.iter().collect();
        let trailing = edited.chars().rev().take_while(|c| *c == '\\').count();
        match trailing % 2 {
            1 => format!("{}{}", self.carry, &edited[..edited.len() - 1]),
            _ => String::new(),
        }
    }

    /// Forgets the line (it was submitted or abandoned); the kill buffer
    /// stays, as line editors keep it.
    fn clear(&mut self) {
        self.chars.clear();
        self.cursor = 0;
        self.typed.clear();
    }

    /// The edits one byte makes, once it completes a character or a key.
    fn decode(&mut self, byte: u8) -> Vec<Edit> {
        if let Some(mut sequence) = self.escape.take() {
            sequence.push(byte);
            return match escape_edit(&sequence) {
                Some(edit) => vec![edit],
                None => {
                    self.escape = Some(sequence);
                    Vec::new()
                }
            };
        }
        if !self.partial.is_empty() || byte >= 0x80 {
            self.partial.push(byte);
            return match std::str::from_utf8(&self.partial) {
                Ok(text) => {
                    let edits = text.chars().map(Edit::Insert).collect();
                    self.partial.clear();
                    edits
                }
                Err(e) if e.error_len().is_none() => Vec::new(),
                // Not UTF-8: the byte stands for an unknown character.
                Err(_) => {
                    self.partial.clear();
                    vec![Edit::Insert(char::REPLACEMENT_CHARACTER)]
                }
            };
        }
        vec![match byte {
            b'\r' | b'\n' => Edit::Submit,
            0x1b => {
                self.escape = Some(vec![byte]);
                return Vec::new();
            }
            // C-o runs the line in bash and zsh (operate-and-get-next).
            0x0f => Edit::Submit,
            0x03 => Edit::Abandon,
            0x7f | 0x08 => Edit::DeleteBack,
            0x04 => Edit::DeleteForward,
            0x01 => Edit::Home,
            0x05 => Edit::End,
            0x02 => Edit::Left,
            0x06 => Edit::Right,
            0x15 => Edit::KillToStart,
            0x0b => Edit::KillToEnd,
            0x17 => Edit::KillWordBack,
            0x19 => Edit::Yank,
            // Tab may complete anything; as a blank it still separates words.
            b'\t' => Edit::Insert('\t'),
            byte if byte < 0x20 => Edit::Unknown,
            byte => Edit::Insert(char::from(byte)),
        }]
    }

    fn apply(&mut self, edit: Edit) {
        self.edit(edit);
        // A line emptied by known editing holds nothing typed before.
        if self.chars.is_empty() && edit != Edit::Unknown {
            self.typed.clear();
        }
    }

    fn edit(&mut self, edit: Edit) {
        match edit {
            Edit::Insert(c) => {
                // Past this length an insert goes at the end, so that a huge
                // paste after a cursor move costs no more than one at the
                // end; the typed reading still holds it in order.
                if self.chars.len() >= LONG_LINE {
                    self.cursor = self.chars.len();
                }
                self.chars.insert(self.cursor, c);
                self.cursor += 1;
                self.typed.push(c);
            }
            Edit::Submit | Edit::Unknown => {}
            Edit::Abandon => {
                self.clear();
                self.carry.clear();
            }
            Edit::DeleteBack if self.cursor > 0 => {
                self.cursor -= 1;
                self.chars.remove(self.cursor);
            }
            Edit::DeleteForward if self.cursor < self.chars.len() => {
                self.chars.remove(self.cursor);
            }
            Edit::DeleteBack | Edit::DeleteForward => {}
            Edit::Left => self.cursor = self.cursor.saturating_sub(1),
            Edit::Right => self.cursor = (self.cursor + 1).min(self.chars.len()),
            Edit::Home => self.cursor = 0,
            Edit::End => self.cursor = self.chars.len(),
            Edit::WordLeft => self.cursor = self.word_start(),
            Edit::WordRight => self.cursor = self.word_end(),
            Edit::KillToStart => self.kill(0, self.cursor),
            Edit::KillToEnd => self.kill(self.cursor, self.chars.len()),
            Edit::KillWordBack => self.kill(self.word_start(), self.cursor),
            Edit::KillWordForward => self.kill(self.cursor, self.word_end()),
            Edit::Yank => {
                for c in self.killed.clone() {
                    self.edit(Edit::Insert(c));
                }
            }
        }
    }

    fn kill(&mut self, from: usize, to: usize) {
        if from < to {
            self.killed = self.chars.drain(from..to).collect();
            self.cursor = from;
        }
    }

    /// Where the word before the cursor starts (blanks before it skipped).
    fn word_start(&self) -> usize {
        let mut at = self.cursor;
        while at > 0 && self.chars[at - 1].is_whitespace() {
            at -= 1;
        }
        while at > 0 && !self.chars[at - 1].is_whitespace() {
            at -= 1;
        }
        at
    }

    /// Where the word after the cursor ends (blanks before it skipped).
    fn word_end(&self) -> usize {
        let mut at = self.cursor;
        let len = self.chars.len();
        while at < len && self.chars[at].is_whitespace() {
            at += 1;
        }
        while at < len && !self.chars[at].is_whitespace() {
            at += 1;
        }
        at
    }
}

/// The edit an escape sequence makes, once it is complete (`None` while it
/// is not). `ESC x` is Meta-x; `ESC [ ... final` and `ESC O x` are keys.
fn escape_edit(sequence: &[u8]) -> Option<Edit> {
    let body = &sequence[1..];
    match body {
        [] => None,
        [b'[' | b'O'] => None,
        [b'[', rest @ ..] => {
            let last = *rest.last()?;
            // Parameters and intermediates until a final byte.
            if !(0x40..=0x7e).contains(&last) {
                return None;
            }
            Some(csi_edit(rest))
        }
        [b'O', key] => Some(match key {
            b'D' => Edit::Left,
            b'C' => Edit::Right,
            b'H' => Edit::Home,
            b'F' => Edit::End,
            // The keypad's Enter in application mode.
            b'M' => Edit::Submit,
            _ => Edit::Unknown,
        }),
        [b'b' | b'B'] => Some(Edit::WordLeft),
        [b'f' | b'F'] => Some(Edit::WordRight),
        [b'd' | b'D'] => Some(Edit::KillWordForward),
        [0x7f | 0x08] => Some(Edit::KillWordBack),
        // Meta-Enter: readline submits the line as Enter does.
        [b'\r' | b'\n'] => Some(Edit::Submit),
        _ => Some(Edit::Unknown),
    }
}

/// The edit of a CSI sequence (`ESC [` stripped).
fn csi_edit(rest: &[u8]) -> Edit {
    match rest {
        b"D" => Edit::Left,
        b"C" => Edit::Right,
        b"H" | b"1~" | b"7~" => Edit::Home,
        b"F" | b"4~" | b"8~" => Edit::End,
        b"3~" => Edit::DeleteForward,
        // The modified arrows (`ESC [1;5D`, Ctrl+Left) move by words.
        [b'1', b';', _, b'D'] => Edit::WordLeft,
        [b'1', b';', _, b'C'] => Edit::WordRight,
        _ => Edit::Unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn submitted(bytes: &[u8]) -> Vec<Vec<String>> {
        Line::new().feed(bytes)
    }

    fn edited(bytes: &[u8]) -> String {
        submitted(bytes)
            .into_iter()
            .next()
            .and_then(|r| r.into_iter().next())
            .unwrap_or_default()
    }

    #[test]
    fn a_carriage_return_or_newline_submits() {
        assert_eq!(submitted(b"ls\r"), vec![vec!["ls".to_owned()]]);
        assert_eq!(
            submitted(b"a\nb\r"),
            vec![vec!["a".to_owned()], vec!["b".to_owned()]]
        );
        let mut line = Line::new();
        assert!(line.feed(b"rm -").is_empty());
        assert_eq!(line.feed(b"rf x\r"), vec![vec!["rm -rf x".to_owned()]]);
        assert!(line.readings().is_empty());
    }

    #[test]
    fn editing_keys_edit_the_line() {
        assert_eq!(edited(b"rm -rfx\x7f\r"), "rm -rf");
        assert_eq!(edited(b"rf x\x01rm -\x05\r"), "rm -rf x");
        assert_eq!(edited(b"rf x\x1b[Hrm -\x1b[F\r"), "rm -rf x");
        assert_eq!(edited(b"rm x\x1b[D-rf \r"), "rm -rf x");
        assert_eq!(edited(b"abc\x02\x02\x1b[3~\r"), "ac");
        assert_eq!(edited(b"echo hi\x15ls\r"), "ls");
        assert_eq!(edited(b"one two\x17three\r"), "one three");
        assert_eq!(edited(b"one two\x1bbX\r"), "one Xtwo");
    }

    #[test]
    fn a_killed_line_can_be_yanked_back() {
        let lines = submitted(b"rm -rf x\x15\x19\r");
        assert_eq!(lines[0][0], "rm -rf x");
    }

    #[test]
    fn the_typed_reading_keeps_what_editing_removed() {
        let lines = submitted(b"rm -rf x\x1b[A\x7f\x7f\x7f\r");
        assert_eq!(lines, vec![vec!["rm -r".to_owned(), "rm -rf x".to_owned()]]);
    }

    #[test]
    fn a_line_emptied_by_editing_forgets_what_was_typed() {
        assert_eq!(submitted(b"rm -rf x\x15ls\r"), vec![vec!["ls".to_owned()]]);
        let lines = submitted(b"rm -rf x\x1b[A\x7f\r");
        assert_eq!(lines[0], vec!["rm -rf ".to_owned(), "rm -rf x".to_owned()]);
    }

    #[test]
    fn a_backslash_continues_the_line() {
        let lines = submitted(b"rm -rf \\\rvictim\r");
        assert_eq!(lines[1], vec!["rm -rf victim".to_owned()]);
        // An escaped backslash ends the line.
        let lines = submitted(b"echo \\\\\rvictim\r");
        assert_eq!(lines[1], vec!["victim".to_owned()]);
        let mut line = Line::new();
        line.feed(b"rm -r\\\n");
        line.feed(b"f");
        assert_eq!(line.readings(), vec!["rm -rf".to_owned()]);
        line.feed(b"\x03x\r");
        assert!(line.readings().is_empty());
    }

    #[test]
    fn other_keys_that_submit() {
        assert_eq!(submitted(b"ls\x0f").len(), 1);
        assert_eq!(submitted(b"ls\x1bOM").len(), 1);
        assert_eq!(submitted(b"ls\x1b\r").len(), 1);
    }

    #[test]
    fn a_huge_line_after_a_cursor_move_stays_cheap() {
        let mut line = Line::new();
        line.feed(b"x\x01");
        line.feed(&vec![b'a'; 200_000]);
        let readings = line.readings();
        assert_eq!(readings[0].len(), 200_001);
        // Before the cursor while the line was short, at the end after.
        assert_eq!(readings[0].find('x'), Some(LONG_LINE - 1));
    }

    #[test]
    fn interrupt_abandons_the_line() {
        assert_eq!(submitted(b"rm -rf x\x03ls\r"), vec![vec!["ls".to_owned()]]);
    }

    #[test]
    fn sequences_and_characters_split_across_calls() {
        let mut line = Line::new();
        line.feed(b"ab\x1b");
        line.feed(b"[Dc");
        assert_eq!(line.readings()[0], "acb");
        let mut line = Line::new();
        line.feed(&"é".as_bytes()[..1]);
        line.feed(&"é".as_bytes()[1..]);
        assert_eq!(line.readings(), vec!["é".to_owned()]);
    }

    proptest! {
        /// Any split of a line into pieces, fed one by one, submits that line.
        #[test]
        fn any_split_adds_up_to_the_line(
            line in "[ -~]{1,40}",
            cuts in proptest::collection::vec(0usize..41, 0..6),
        ) {
            let bytes = format!("{line}\r").into_bytes();
            let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(bytes.len())).collect();
            cuts.sort_unstable();
            let mut state = Line::new();
            let mut found = Vec::new();
            let mut from = 0;
            for cut in cuts.into_iter().chain([bytes.len()]) {
                found.extend(state.feed(&bytes[from..cut]));
                from = cut;
            }
            prop_assert_eq!(found.len(), 1);
            prop_assert_eq!(&found[0][0], &line);
        }

        /// Whatever keys that move or are not modelled come between the
        /// characters, the typed reading holds every character inserted, in
        /// order.
        #[test]
        fn the_typed_reading_holds_every_insert(
            words in proptest::collection::vec("[a-z -]{1,8}", 1..5),
            keys in proptest::collection::vec(
                prop::sample::select(vec![
                    &b"\x01"[..], b"\x05", b"\x02", b"\x06", b"\x1b[D", b"\x1b[C",
                    b"\x1b[A", b"\x1b[B", b"\x1bb", b"\x1bf", b"\x1bt", b"\x12", b"\t",
                ]),
                1..5,
            ),
        ) {
            let mut state = Line::new();
            let mut inserted = String::new();
            for (word, key) in words.iter().zip(keys.iter().cycle()) {
                state.feed(word.as_bytes());
                state.feed(key);
                inserted.push_str(word);
                if *key == b"\t" {
                    inserted.push('\t');
                }
            }
            let found = state.feed(b"\r");
            prop_assert!(found[0].contains(&inserted), "{:?} in {:?}", inserted, found);
        }
    }
}
