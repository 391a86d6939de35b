//! Hiding secrets in text: the one redactor every text leaving the engine
//! passes, and that waits match over, so that no pattern ever observes a
//! secret's characters.
//!
//! A [`Redactor`] is shared by everything that shows text (the engine's
//! waits, the MCP server's results and questions, the log). It knows two
//! kinds of secrets:
//! - configured values, read through a function the server installs
//!   ([`Redactor::set_values`]), so a value is read only when text is
//!   redacted and never stored here;
//! - values a person typed, kept only as [`Fingerprint`]s (a length, a salted
//!   SHA-256 and a keyed rolling hash that finds candidates in linear time).
//!
//! [`Redactor::now`] takes a [`Redaction`]: the secrets as they are at that
//! moment, fixed for one wait or one result. Each secret is looked for in
//! three forms: as printed, JSON-escaped and Rust-debug-escaped (an error
//! message quoting it with `{:?}`), and line breaks inside a match are
//! skipped, so a value printed across two lines is still hidden. Every
//! stretch of text that matches any form of any secret is replaced by
//! `[secret NAME]`; overlapping stretches become one.
//!
//! Text cut at an arbitrary place could show part of a secret that no
//! redaction recognizes; two rules keep the cuts outside secrets: an
//! unfinished line's end that could begin one is held back
//! ([`Redaction::held_back`], used by waits), and a read or wait never starts
//! inside one ([`Journal::outside_secrets`](crate::Journal::outside_secrets)).
//!
//! ```
//! use termpilot_journal::Redactor;
//!
//! let redactor = Redactor::default();
//! redactor.set_values(|| vec![("pw".to_owned(), "hunter22".to_owned())]);
//! let now = redactor.now();
//! assert_eq!(now.redact("got:hunter22"), "got:[secret pw]");
//! assert_eq!(now.redact("got:hunt\r\ner22!"), "got:[secret pw]!");
//! // The end of an unfinished line that could be the start of a value.
//! assert_eq!(now.held_back("got:hun"), 3);
//! ```

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

/// Values a person typed shorter than this are not looked for: hiding every
/// occurrence of two or three common characters would garble results.
pub const SHORTEST_TYPED: usize = 4;

/// The most secrets typed by a person that are remembered; the oldest go first.
const TYPED_KEPT: usize = 32;

/// Reads the configured secrets' values now: `(name, value)` pairs.
type ReadValues = dyn Fn() -> Vec<(String, String)> + Send + Sync;

/// The secrets to hide, shared (cloning shares them). A std `Mutex` guards
/// each list: held to copy it out, never across an `.await` or a scan.
#[derive(Clone, Default)]
pub struct Redactor(Arc<Shared>);

#[derive(Default)]
struct Shared {
    values: Mutex<Option<Arc<ReadValues>>>,
    typed: Mutex<VecDeque<Arc<[Fingerprint]>>>,
}

impl std::fmt::Debug for Redactor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Redactor")
    }
}

impl Redactor {
    /// Installs how the configured values are read (replacing any earlier).
    pub fn set_values(&self, read: impl Fn() -> Vec<(String, String)> + Send + Sync + 'static) {
        *lock(&self.0.values) = Some(Arc::new(read));
    }

    /// Remembers a value a person typed for the secret `name`, as
    /// fingerprints of its forms salted with `salt` (random, from the
    /// caller). Returns false when it is too short to look for.
    pub fn remember_typed(&self, name: &str, value: &str, salt: &[u8]) -> bool {
        if value.len() < SHORTEST_TYPED {
            return false;
        }
        let fingerprints: Vec<Fingerprint> = forms(value)
            .iter()
            .map(|form| Fingerprint::of(name, form, salt))
            .collect();
        let mut typed = lock(&self.0.typed);
        if typed.len() == TYPED_KEPT {
            typed.pop_front();
        }
        typed.push_back(fingerprints.into());
        true
    }

    /// The secrets as they are now, for one wait or one result.
    pub fn now(&self) -> Redaction {
        let read = lock(&self.0.values).clone();
        let mut pairs = read.map(|read| read()).unwrap_or_default();
        pairs.retain(|(_, value)| !value.is_empty());
        let mut hidden: Vec<Form> = Vec::new();
        for (name, value) in pairs {
            let shown: Arc<str> = Arc::from(placeholder(&name));
            for text in forms(&value) {
                let text = without_line_breaks(&text);
                if !text.is_empty() && !hidden.iter().any(|f| f.text == text) {
                    hidden.push(Form {
                        text,
                        shown: shown.clone(),
                    });
                }
            }
        }
        let typed: Vec<Fingerprint> = lock(&self.0.typed)
            .iter()
            .flat_map(|forms| forms.iter().cloned())
            .collect();
        Redaction {
            forms: hidden.into(),
            typed: typed.into(),
        }
    }
}

/// The secrets to hide at one moment. Cheap to clone.
#[derive(Clone, Default)]
pub struct Redaction {
    forms: Arc<[Form]>,
    typed: Arc<[Fingerprint]>,
}

impl std::fmt::Debug for Redaction {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Redaction({} forms)",
            self.forms.len() + self.typed.len()
        )
    }
}

/// One form of a configured value (line breaks removed), and what shows
/// instead of it.
struct Form {
    text: String,
    shown: Arc<str>,
}

impl Redaction {
    /// Nothing to hide.
    pub fn is_empty(&self) -> bool {
        self.forms.is_empty() && self.typed.is_empty()
    }

    /// `text` with every secret replaced by `[secret NAME]`.
    pub fn redact<'t>(&self, text: &'t str) -> Cow<'t, str> {
        if self.is_empty() {
            return Cow::Borrowed(text);
        }
        let flat = Flat::of(text);
        let mut hits = self.hits(&flat.text);
        if hits.is_empty() {
            return Cow::Borrowed(text);
        }
        hits.sort_by_key(|hit| (hit.start, std::cmp::Reverse(hit.end)));
        let mut out = String::with_capacity(text.len());
        let mut copied = 0;
        for hit in merged(hits) {
            let (start, end) = flat.original(hit.start, hit.end);
            out.push_str(&text[copied..start]);
            out.push_str(&hit.shown);
            copied = end;
        }
        out.push_str(&text[copied..]);
        Cow::Owned(out)
    }

    /// Each line redacted as part of the whole, so that a value split over
    /// two lines (a wrapped screen row) is hidden too; a line that held part
    /// of it is left with what remains of it around the placeholder.
    pub fn redact_lines(&self, lines: Vec<String>) -> Vec<String> {
        if self.is_empty() {
            return lines;
        }
        let joined = lines.join("\n");
        match self.redact(&joined) {
            Cow::Borrowed(_) => lines,
            Cow::Owned(text) => text.split('\n').map(str::to_owned).collect(),
        }
    }

    /// [`Redaction::redact`] for output read up to now: unless it ends with
    /// a line break, its last line is unfinished, and an end that could
    /// begin a secret is left out (see [`Redaction::held_back`]).
    pub fn redact_unfinished(&self, text: &str) -> String {
        let mut out = self.redact(text).into_owned();
        if !out.ends_with('\n') {
            let held = self.held_back(&out);
            out.truncate(out.len() - held);
        }
        out
    }

    /// How many bytes at the end of `line` could be the beginning of a
    /// configured value (in any form) whose rest has not arrived yet: a wait
    /// matching an unfinished line leaves them out, so that output cut
    /// inside a value never shows its first characters. (A person's typed
    /// value is known only by its fingerprint, so its beginnings cannot be
    /// recognized.)
    pub fn held_back(&self, line: &str) -> usize {
        let mut longest = 0;
        for form in self.forms.iter() {
            let text = form.text.as_str();
            for (end, _) in text.char_indices().skip(1) {
                if end > longest && line.ends_with(&text[..end]) {
                    longest = end;
                }
            }
        }
        longest
    }

    /// The most bytes any secret takes, in any form.
    pub fn longest(&self) -> usize {
        let forms = self.forms.iter().map(|f| f.text.len());
        forms
            .chain(self.typed.iter().map(|f| f.len))
            .max()
            .unwrap_or(0)
    }

    /// A position at or before `at` in `bytes` that is not inside a secret:
    /// the start of any secret (in any form) that `at` cuts, or of the
    /// beginning of one that `bytes` ends in. A read or a wait starting at
    /// `at` would otherwise see the rest of that secret, which no redaction
    /// recognizes. (A typed value is recognized only whole.)
    pub fn start_outside(&self, bytes: &[u8], at: usize) -> usize {
        let mut at = at.min(bytes.len());
        while let Some(start) = self.secret_across(bytes, at) {
            at = start;
        }
        at
    }

    /// The earliest start before `at` of a secret that reaches past `at`
    /// (or may, when `bytes` end first).
    fn secret_across(&self, bytes: &[u8], at: usize) -> Option<usize> {
        let mut earliest: Option<usize> = None;
        let mut found = |start: usize| earliest = Some(earliest.map_or(start, |e| e.min(start)));
        for form in self.forms.iter() {
            let form = form.text.as_bytes();
            for before in 1..form.len().min(at + 1) {
                let start = at - before;
                let seen = &bytes[start..];
                let n = seen.len().min(form.len());
                if seen[..n] == form[..n] {
                    found(start);
                }
            }
        }
        for fingerprint in self.typed.iter() {
            for before in 1..fingerprint.len.min(at + 1) {
                let start = at - before;
                if let Some(window) = bytes.get(start..start + fingerprint.len)
                    && fingerprint.is(window)
                {
                    found(start);
                }
            }
        }
        earliest
    }

    /// Every stretch of `flat` that is a secret, unordered.
    fn hits(&self, flat: &str) -> Vec<Hit> {
        let mut hits = Vec::new();
        for form in self.forms.iter() {
            let mut from = 0;
            while let Some(at) = flat[from..].find(form.text.as_str()) {
                let start = from + at;
                hits.push(Hit {
                    start,
                    end: start + form.text.len(),
                    shown: form.shown.clone(),
                });
                from = start + flat[start..].chars().next().map_or(1, char::len_utf8);
            }
        }
        for fingerprint in self.typed.iter() {
            fingerprint.find(flat, &mut hits);
        }
        hits
    }
}

/// A stretch of text that is a secret.
struct Hit {
    start: usize,
    end: usize,
    shown: Arc<str>,
}

/// Overlapping (or touching-inside) hits, sorted by start, merged into one:
/// the first one's placeholder shows for all of it.
fn merged(hits: Vec<Hit>) -> Vec<Hit> {
    let mut out: Vec<Hit> = Vec::with_capacity(hits.len());
    for hit in hits {
        match out.last_mut() {
            Some(last) if hit.start < last.end => last.end = last.end.max(hit.end),
            _ => out.push(hit),
        }
    }
    out
}

fn placeholder(name: &str) -> String {
    format!("[secret {name}]")
}

/// The forms a value may be shown in: as it is, JSON-escaped, and escaped as
/// Rust's `{:?}` does (without the quotes), each once.
fn forms(value: &str) -> Vec<String> {
    let debug = format!("{value:?}");
    let debug = debug[1..debug.len() - 1].to_owned();
    let mut forms = vec![value.to_owned(), json_escaped(value), debug];
    forms.dedup();
    forms.sort();
    forms.dedup();
    forms
}

/// The value as it appears inside a JSON string.
fn json_escaped(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for c in value.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

fn without_line_breaks(text: &str) -> String {
    text.chars().filter(|c| !matches!(c, '\n' | '\r')).collect()
}

/// A text with its line breaks removed, and where each remaining byte was.
struct Flat<'t> {
    text: Cow<'t, str>,
    /// The original offset of each byte of `text`; empty when nothing was
    /// removed.
    offsets: Vec<usize>,
}

impl<'t> Flat<'t> {
    fn of(text: &'t str) -> Flat<'t> {
        if !text.contains(['\n', '\r']) {
            return Flat {
                text: Cow::Borrowed(text),
                offsets: Vec::new(),
            };
        }
        let mut flat = String::with_capacity(text.len());
        let mut offsets = Vec::with_capacity(text.len());
        for (at, c) in text.char_indices() {
            if !matches!(c, '\n' | '\r') {
                flat.push(c);
                offsets.extend(at..at + c.len_utf8());
            }
        }
        Flat {
            text: Cow::Owned(flat),
            offsets,
        }
    }

    /// The original span of the flat span `start..end` (not empty).
    fn original(&self, start: usize, end: usize) -> (usize, usize) {
        match self.offsets.is_empty() {
            true => (start, end),
            false => (self.offsets[start], self.offsets[end - 1] + 1),
        }
    }
}

/// A value a person typed, remembered only well enough to hide it: its
/// length, a salted SHA-256, and a rolling hash keyed by the salt that picks
/// the places worth hashing. Never the value.
#[derive(Clone)]
pub struct Fingerprint {
    shown: Arc<str>,
    len: usize,
    salt: Vec<u8>,
    digest: [u8; 32],
    base: u64,
    rolled: u64,
}

/// The rolling hash's modulus, the Mersenne prime 2^61 - 1.
const MODULUS: u64 = (1 << 61) - 1;

impl Fingerprint {
    fn of(name: &str, value: &str, salt: &[u8]) -> Fingerprint {
        let base = rolling_base(salt);
        Fingerprint {
            shown: Arc::from(placeholder(name)),
            len: value.len(),
            salt: salt.to_vec(),
            digest: salted(salt, value.as_bytes()),
            base,
            rolled: roll(base, value.as_bytes()),
        }
    }

    /// Adds every stretch of `text` with this fingerprint to `hits`.
    fn find(&self, text: &str, hits: &mut Vec<Hit>) {
        let bytes = text.as_bytes();
        if bytes.len() < self.len {
            return;
        }
        let top = power(self.base, self.len - 1);
        let mut hash = roll(self.base, &bytes[..self.len]);
        for start in 0..=bytes.len() - self.len {
            let end = start + self.len;
            if start > 0 {
                let out = mul(bytes[start - 1] as u64, top);
                hash = add(
                    mul(add(hash, MODULUS - out), self.base),
                    bytes[end - 1] as u64,
                );
            }
            if hash == self.rolled
                && text.is_char_boundary(start)
                && text.is_char_boundary(end)
                && salted(&self.salt, &bytes[start..end]) == self.digest
            {
                hits.push(Hit {
                    start,
                    end,
                    shown: self.shown.clone(),
                });
            }
        }
    }
}

impl Fingerprint {
    /// Whether `bytes` are the value.
    fn is(&self, bytes: &[u8]) -> bool {
        bytes.len() == self.len
            && roll(self.base, bytes) == self.rolled
            && salted(&self.salt, bytes) == self.digest
    }
}

impl crate::Journal {
    /// `offset`, or an earlier one when `offset` falls inside a secret (see
    /// [`Redaction::start_outside`]): where a read or a wait asked to start
    /// at `offset` starts, so that it never shows the rest of a secret.
    pub fn outside_secrets(&self, offset: u64, redaction: &Redaction) -> u64 {
        let reach = redaction.longest() as u64;
        if reach == 0 || offset <= self.start() || offset > self.end() {
            return offset;
        }
        let from = offset.saturating_sub(reach).max(self.start());
        let to = offset.saturating_add(reach).min(self.end());
        let bytes = self.bytes_between(from, to);
        if bytes.len() as u64 != to - from {
            // A gap in between: the offsets of what is held do not line up.
            return offset;
        }
        from + redaction.start_outside(&bytes, (offset - from) as usize) as u64
    }
}

fn salted(salt: &[u8], bytes: &[u8]) -> [u8; 32] {
    let mut hasher = Sha256::new();
    hasher.update(salt);
    hasher.update(bytes);
    hasher.finalize().into()
}

/// A base for the rolling hash taken from the salt, so that its collisions
/// cannot be planned.
fn rolling_base(salt: &[u8]) -> u64 {
    let digest = salted(salt, b"rolling hash base");
    let mut first = [0; 8];
    first.copy_from_slice(&digest[..8]);
    (u64::from_le_bytes(first) % (MODULUS - 512)) + 257
}

fn roll(base: u64, bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .fold(0, |hash, &b| add(mul(hash, base), b as u64))
}

fn power(base: u64, exponent: usize) -> u64 {
    (0..exponent).fold(1, |p, _| mul(p, base))
}

fn mul(a: u64, b: u64) -> u64 {
    ((a as u128 * b as u128) % MODULUS as u128) as u64
}

fn add(a: u64, b: u64) -> u64 {
    (a + b) % MODULUS
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests;
