//! Checks [`Key::bytes`] against what a real tmux writes to a pane for each key name.
//!
//! A private tmux server (`-S <temp dir>/socket -f /dev/null`) runs `cat` on a raw-mode tty into a
//! file; every key is sent with `send-keys`, followed by the byte 0xff (`send-keys -H ff`,
//! a byte UTF-8 never uses) as a separator. Skipped when tmux is not installed.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use termpilot_keys::{KeyError, parse_key};

const TABLE_NAMES: &[&str] = &[
    "F1", "F2", "F3", "F4", "F5", "F6", "F7", "F8", "F9", "F10", "F11", "F12", "Insert", "IC",
    "Delete", "DC", "Home", "End", "PageDown", "NPage", "PgDn", "PageUp", "PPage", "PgUp", "Tab",
    "BTab", "Space", "BSpace", "Enter", "Escape", "Up", "Down", "Left", "Right", "KP/", "KP*",
    "KP-", "KP7", "KP8", "KP9", "KP+", "KP4", "KP5", "KP6", "KP1", "KP2", "KP3", "KPEnter", "KP0",
    "KP.",
];
const CHARACTERS: &str = "aAz\u{e9}\u{1f600};-126/?@[\\]^_`~{$!'=\x7f";
const MODIFIERS: &[&str] = &["", "C-", "M-", "S-", "C-M-", "C-S-", "M-S-", "C-M-S-"];

/// A tmux server on a private socket, killed (and its files removed) when dropped.
struct PrivateTmux {
    /// Holds the socket and the pane's files; removed on drop.
    dir: PathBuf,
}

impl PrivateTmux {
    fn start(tag: &str) -> Option<PrivateTmux> {
        let version = Command::new("tmux").arg("-V").output().ok()?;
        if !version.status.success() {
            return None;
        }
        let name = format!("termpilot-keys-{tag}-{}", std::process::id());
        let dir = std::env::temp_dir().join(name);
        std::fs::create_dir_all(&dir).unwrap();
        let tmux = PrivateTmux { dir };
        let script = format!(
            "stty raw -echo && : > '{ready}' && exec cat > '{out}'",
            ready = tmux.ready().display(),
            out = tmux.output().display(),
        );
        let started = tmux.run(&["new-session", "-d", "-x", "80", "-y", "24", &script]);
        assert!(started, "tmux new-session failed");
        wait_for(|| tmux.ready().exists());
        Some(tmux)
    }

    fn ready(&self) -> PathBuf {
        self.dir.join("ready")
    }

    fn output(&self) -> PathBuf {
        self.dir.join("out")
    }

    fn run(&self, args: &[&str]) -> bool {
        let output = Command::new("tmux")
            .arg("-S")
            .arg(self.dir.join("socket"))
            .args(["-f", "/dev/null"])
            .args(args)
            .output();
        match output {
            Ok(output) if output.status.success() => true,
            Ok(output) => {
                eprintln!("tmux: {}", String::from_utf8_lossy(&output.stderr));
                false
            }
            Err(e) => {
                eprintln!("tmux: {e}");
                false
            }
        }
    }

    /// Sends every name, each followed by a 0xff separator, and returns what the pane
    /// received for each. Names go in batches: tmux limits the size of one command.
    fn received(&self, names: &[String]) -> Vec<Vec<u8>> {
        for batch in names.chunks(40) {
            let args: Vec<String> = batch
                .iter()
                .flat_map(|name| send_then_separate(name))
                .collect();
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            assert!(self.run(&args), "tmux send-keys failed");
        }
        let out = self.output();
        wait_for(|| read(&out).iter().filter(|&&b| b == 0xff).count() == names.len());
        let bytes = read(&out);
        let mut chunks: Vec<Vec<u8>> = bytes.split(|&b| b == 0xff).map(<[u8]>::to_vec).collect();
        chunks.pop();
        chunks
    }
}

impl Drop for PrivateTmux {
    fn drop(&mut self) {
        self.run(&["kill-server"]);
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// tmux arguments for sending `name` and then the separator byte.
fn send_then_separate(name: &str) -> [String; 11] {
    // A trailing `;` would end the tmux command, so it is escaped.
    let name = match name.strip_suffix(';') {
        Some(head) => format!("{head}\\;"),
        None => name.to_owned(),
    };
    [
        "send-keys",
        "-t",
        "%0",
        &name,
        ";",
        "send-keys",
        "-t",
        "%0",
        "-H",
        "ff",
        ";",
    ]
    .map(str::to_owned)
}

fn read(path: &Path) -> Vec<u8> {
    std::fs::read(path).unwrap_or_default()
}

fn wait_for(mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "tmux did not respond"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn all_names() -> Vec<String> {
    let bases = TABLE_NAMES
        .iter()
        .map(|n| n.to_string())
        .chain(CHARACTERS.chars().map(String::from));
    let bases: Vec<String> = bases.collect();
    let mut names: Vec<String> = MODIFIERS
        .iter()
        .flat_map(|m| bases.iter().map(move |b| format!("{m}{b}")))
        .collect();
    names.extend(
        [
            "^c", "^[", "^^", "0x03", "0x41", "0xe9", "0x7f", "0x00", "c-a", "kpenter",
        ]
        .map(str::to_owned),
    );
    names
}

#[test]
fn bytes_match_what_tmux_writes_to_a_pane() {
    let Some(tmux) = PrivateTmux::start("bytes") else {
        eprintln!("tmux not installed; skipping");
        return;
    };
    let names = all_names();
    let received = tmux.received(&names);
    assert_eq!(received.len(), names.len());
    let mut accepted = 0;
    for (name, got) in names.iter().zip(&received) {
        match parse_key(name) {
            Ok(key) => {
                accepted += 1;
                assert_eq!(&key.bytes(), got, "bytes of {name:?}");
            }
            // tmux sends nothing for these, or types the name as text.
            Err(KeyError::Unsendable { .. } | KeyError::Unsupported { .. }) => {
                assert!(
                    got.is_empty() || got == name.as_bytes(),
                    "{name:?}: {got:?}"
                );
            }
            Err(e) => panic!("{name:?} rejected: {e}"),
        }
    }
    assert!(accepted > 300, "only {accepted} keys accepted");
}

#[test]
fn canonical_names_send_the_same_bytes_through_tmux() {
    let Some(tmux) = PrivateTmux::start("canonical") else {
        eprintln!("tmux not installed; skipping");
        return;
    };
    let keys: Vec<_> = all_names()
        .iter()
        .filter_map(|n| parse_key(n).ok())
        .collect();
    let canonical: Vec<String> = keys.iter().map(|k| k.tmux_name()).collect();
    let received = tmux.received(&canonical);
    for ((key, name), got) in keys.iter().zip(&canonical).zip(&received) {
        assert_eq!(&key.bytes(), got, "bytes of canonical name {name:?}");
    }
}
