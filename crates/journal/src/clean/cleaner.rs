//! The streaming state machine that strips terminal control sequences.

use super::utf8::{self, Carry, Decoded, REPLACEMENT};
use super::{Erase, Event};

const ESC: u8 = 0x1b;
const BEL: u8 = 0x07;
/// CAN and SUB abort any sequence in progress (ECMA-48, and what xterm and tmux do).
const CAN: u8 = 0x18;
const SUB: u8 = 0x1a;
const DEL: u8 = 0x7f;

/// Strips terminal control sequences from a byte stream fed in pieces of any size.
///
/// What it removes: CSI sequences (`ESC [`, including private modes such as `ESC [?25l`),
/// OSC strings (`ESC ]`, ended by BEL or ST), DCS, SOS, PM and APC strings and tmux's
/// `ESC k` title string (ended by ST or BEL), single `ESC` sequences including charset
/// designations (`ESC ( B`), C0 controls other than `\n`, `\r`, `\t` and backspace, DEL,
/// and C1 controls (U+0080 to U+009F). CAN and SUB abort a sequence, as in a terminal;
/// a string sequence that never ends swallows everything after it, as in a terminal.
///
/// What it reports, through [`Event`]s: text (valid UTF-8; each maximal invalid sequence
/// becomes U+FFFD, also when a character is split across feeds), `\t` as text (not
/// expanded: tab stops depend on the screen), line ends (`\n` or `\r\n`), carriage
/// returns (a lone `\r`, and `CSI G` / `CSI 1G`, which also move to column 0),
/// backspace, and erase-in-line (`CSI K`, `1K`, `2K`). Everything else that moves the
/// cursor is dropped: there is no screen model here.
///
/// The event sequence depends only on the bytes, not on how they were split into feeds,
/// except that text may be delivered in more or fewer [`Event::Text`] pieces. A `\r` at
/// the end of a feed is held back until the next byte shows whether it starts `\r\n`.
#[derive(Debug, Clone, Default)]
pub struct Cleaner {
    state: State,
    /// Reused buffer for text that has to be rewritten (C1 controls removed).
    scratch: String,
}

/// Everything the cleaner remembers between feeds; small and `Copy` so that the journal
/// can keep snapshots of it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct State {
    mode: Mode,
    /// A `\r` whose meaning (carriage return or half of `\r\n`) is not known yet.
    pending_cr: bool,
    carry: Carry,
    offset: u64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
enum Mode {
    #[default]
    Ground,
    /// After ESC.
    Escape,
    /// After ESC and an intermediate byte, e.g. the `(` of a charset designation.
    EscapeIntermediate,
    Csi(Csi),
    /// Inside an OSC, DCS, SOS, PM, APC or `ESC k` string.
    Text,
    /// ESC inside such a string: `\` makes it ST, anything else aborts the string.
    TextEscape,
}

/// The parts of a CSI sequence needed to recognise erase-in-line and column 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Csi {
    first_param: u16,
    past_first_param: bool,
    private: bool,
    intermediate: bool,
}

impl Cleaner {
    /// A cleaner at the start of a stream (offset 0).
    pub fn new() -> Self {
        Cleaner::default()
    }

    /// A cleaner whose first byte has the given absolute offset; [`Event::LineEnd`]
    /// reports offsets counted from there.
    pub fn starting_at(offset: u64) -> Self {
        let state = State {
            offset,
            ..State::default()
        };
        Cleaner {
            state,
            scratch: String::new(),
        }
    }

    pub(crate) fn from_state(state: State) -> Self {
        Cleaner {
            state,
            scratch: String::new(),
        }
    }

    pub(crate) fn state(&self) -> State {
        self.state
    }

    /// The absolute offset of the next byte to be fed.
    pub fn offset(&self) -> u64 {
        self.state.offset
    }

    /// Feeds the next bytes of the stream and reports what they mean.
    pub fn feed(&mut self, bytes: &[u8], mut emit: impl FnMut(Event<'_>)) {
        let mut rest = bytes;
        while let Some(&first) = rest.first() {
            if self.state.mode == Mode::Ground && !self.state.pending_cr && !is_control(first) {
                let len = rest
                    .iter()
                    .position(|&b| is_control(b))
                    .unwrap_or(rest.len());
                self.state.offset += len as u64;
                self.text(&rest[..len], &mut emit);
                rest = &rest[len..];
            } else {
                self.state.offset += 1;
                self.byte(first, &mut emit);
                rest = &rest[1..];
            }
        }
    }

    /// Declares the stream finished (or interrupted): a held-back `\r` is reported as a
    /// carriage return and an incomplete character as U+FFFD. Feeding may continue.
    pub fn finish(&mut self, mut emit: impl FnMut(Event<'_>)) {
        if std::mem::take(&mut self.state.pending_cr) {
            emit(Event::CarriageReturn);
        }
        utf8::flush(&mut self.state.carry, |_| emit(Event::Text(REPLACEMENT)));
    }

    /// Handles one byte that is not part of a fast-path text run.
    fn byte(&mut self, byte: u8, emit: &mut impl FnMut(Event<'_>)) {
        if std::mem::take(&mut self.state.pending_cr) {
            if byte == b'\n' {
                emit(Event::LineEnd {
                    end: self.state.offset,
                });
                return;
            }
            emit(Event::CarriageReturn);
        }
        self.step(byte, emit);
    }

    fn step(&mut self, byte: u8, emit: &mut impl FnMut(Event<'_>)) {
        match self.state.mode {
            Mode::Ground => self.ground(byte, emit),
            Mode::Escape => self.escape(byte, emit),
            Mode::EscapeIntermediate => self.escape_intermediate(byte, emit),
            Mode::Csi(csi) => self.csi(csi, byte, emit),
            Mode::Text => self.string(byte),
            Mode::TextEscape => self.string_escape(byte, emit),
        }
    }

    fn ground(&mut self, byte: u8, emit: &mut impl FnMut(Event<'_>)) {
        if !is_control(byte) {
            return self.text(&[byte], emit);
        }
        utf8::flush(&mut self.state.carry, |_| emit(Event::Text(REPLACEMENT)));
        if byte == ESC {
            self.state.mode = Mode::Escape;
        } else {
            self.execute(byte, emit);
        }
    }

    /// C0 controls take effect even in the middle of an escape or CSI sequence, as in a
    /// terminal; only the few with a visible effect on a line are reported.
    fn execute(&mut self, byte: u8, emit: &mut impl FnMut(Event<'_>)) {
        match byte {
            b'\n' => emit(Event::LineEnd {
                end: self.state.offset,
            }),
            b'\r' => self.state.pending_cr = true,
            b'\t' => emit(Event::Text("\t")),
            0x08 => emit(Event::Backspace),
            _ => {}
        }
    }

    /// Bytes shared by every sequence state: what aborts, restarts or interrupts it.
    /// Returns false when the byte is the state's own business.
    fn interrupt(&mut self, byte: u8, emit: &mut impl FnMut(Event<'_>)) -> bool {
        match byte {
            ESC => self.state.mode = Mode::Escape,
            CAN | SUB => self.state.mode = Mode::Ground,
            DEL => {}
            0x00..=0x1f => self.execute(byte, emit),
            // Not a valid sequence byte: give up on the sequence, keep the text.
            0x80..=0xff => {
                self.state.mode = Mode::Ground;
                self.text(&[byte], emit);
            }
            _ => return false,
        }
        true
    }

    fn escape(&mut self, byte: u8, emit: &mut impl FnMut(Event<'_>)) {
        if self.interrupt(byte, emit) {
            return;
        }
        self.state.mode = match byte {
            b'[' => Mode::Csi(Csi::default()),
            b']' | b'P' | b'X' | b'^' | b'_' | b'k' => Mode::Text,
            0x20..=0x2f => Mode::EscapeIntermediate,
            _ => Mode::Ground,
        };
    }

    fn escape_intermediate(&mut self, byte: u8, emit: &mut impl FnMut(Event<'_>)) {
        if !self.interrupt(byte, emit) && !(0x20..=0x2f).contains(&byte) {
            self.state.mode = Mode::Ground;
        }
    }

    fn csi(&mut self, mut csi: Csi, byte: u8, emit: &mut impl FnMut(Event<'_>)) {
        if self.interrupt(byte, emit) {
            return;
        }
        match byte {
            b'0'..=b'9' if !csi.past_first_param => {
                let digit = u16::from(byte - b'0');
                csi.first_param = csi.first_param.saturating_mul(10).saturating_add(digit);
            }
            b'0'..=b'9' => {}
            b';' | b':' => csi.past_first_param = true,
            b'<'..=b'?' => csi.private = true,
            0x20..=0x2f => csi.intermediate = true,
            _ => {
                self.state.mode = Mode::Ground;
                return dispatch(csi, byte, emit);
            }
        }
        self.state.mode = Mode::Csi(csi);
    }

    fn string(&mut self, byte: u8) {
        match byte {
            BEL | CAN | SUB => self.state.mode = Mode::Ground,
            ESC => self.state.mode = Mode::TextEscape,
            _ => {}
        }
    }

    fn string_escape(&mut self, byte: u8, emit: &mut impl FnMut(Event<'_>)) {
        if byte == b'\\' {
            self.state.mode = Mode::Ground;
        } else {
            self.state.mode = Mode::Escape;
            self.step(byte, emit);
        }
    }

    fn text(&mut self, run: &[u8], emit: &mut impl FnMut(Event<'_>)) {
        let scratch = &mut self.scratch;
        utf8::decode(&mut self.state.carry, run, |piece| match piece {
            Decoded::Valid("") => {}
            Decoded::Valid(text) if !text.as_bytes().contains(&0xc2) => emit(Event::Text(text)),
            Decoded::Valid(text) => {
                // Only U+0080..U+009F (the C1 controls) are encoded with a 0xC2 lead byte
                // and a continuation byte below 0xA0.
                scratch.clear();
                scratch.extend(text.chars().filter(|c| !('\u{80}'..='\u{9f}').contains(c)));
                if !scratch.is_empty() {
                    emit(Event::Text(scratch));
                }
            }
            Decoded::Invalid => emit(Event::Text(REPLACEMENT)),
        });
    }
}

/// Reports the few CSI sequences that change what a line shows.
fn dispatch(csi: Csi, final_byte: u8, emit: &mut impl FnMut(Event<'_>)) {
    if csi.intermediate {
        return;
    }
    match final_byte {
        // `?` makes it DECSEL (selective erase), which erases the same cells here.
        b'K' => match csi.first_param {
            0 => emit(Event::EraseLine(Erase::ToEnd)),
            1 => emit(Event::EraseLine(Erase::ToStart)),
            2 => emit(Event::EraseLine(Erase::All)),
            _ => {}
        },
        // Cursor to column 1 (CHA, HPA): what many progress bars use instead of `\r`.
        b'G' | b'`' if !csi.private && csi.first_param <= 1 => emit(Event::CarriageReturn),
        _ => {}
    }
}

fn is_control(byte: u8) -> bool {
    byte < 0x20 || byte == DEL
}
