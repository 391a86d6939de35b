//! The audit log: one JSON line per tool call, appended to a file the
//! operator names (`--audit PATH`).
//!
//! A call never waits for the log: its line goes into a bounded queue that
//! one writer thread empties into the file (`file`: opened without following
//! links, refusing anything but a private regular file). A full queue drops
//! the line and counts it; a file that cannot be written is reported on
//! stderr and in the `_meta` of later results, and the lines lost are noted
//! in the log once it can be written again. With `--audit-required`, calls
//! are refused while the log is failing or its queue is full.
//!
//! Typed text is recorded as its length and a keyed fingerprint
//! (HMAC-SHA256 under a random key of this server's own), never as itself,
//! unless the operator asked for payloads.

mod file;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use tokio::sync::mpsc;

use self::file::LogFile;

/// Lines waiting for the writer at most; a burst beyond it is dropped.
const QUEUE_LINES: usize = 4096;

/// An open audit log: the sending end of its writer's queue.
#[derive(Debug)]
pub struct AuditLog {
    queue: mpsc::Sender<Message>,
    /// Whether typed text is written as is.
    payloads: bool,
    /// Whether calls are refused while the log fails (`--audit-required`).
    required: bool,
    health: Arc<Health>,
}

/// What the writer thread is asked to do.
#[derive(Debug)]
enum Message {
    Line(Vec<u8>),
    /// Answer once every line before this one was written (or failed).
    Flush(std::sync::mpsc::Sender<()>),
}

/// What callers know of the writer: its failure, and lines dropped.
#[derive(Debug, Default)]
struct Health {
    /// Why the last line could not be written; `None` while writes work. A
    /// std `Mutex`: held to read or replace a string, never across an
    /// `.await`.
    problem: Mutex<Option<String>>,
    /// Lines dropped because the queue was full, not yet noted in the log.
    dropped: AtomicU64,
}

/// Why the audit log cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("cannot use the audit log {path}: {source}")]
pub struct AuditError {
    path: String,
    #[source]
    source: std::io::Error,
}

impl AuditLog {
    /// Opens (creating it, mode 0600) the log at `path` for appending, and
    /// starts its writer. Fails when the path cannot be written or is not a
    /// private regular file (a wider mode is narrowed to 0600).
    pub fn open(path: &std::path::Path, payloads: bool) -> Result<AuditLog, AuditError> {
        let failed = |source| AuditError {
            path: path.display().to_string(),
            source,
        };
        let file = LogFile::open(path).map_err(failed)?;
        let (queue, lines) = mpsc::channel(QUEUE_LINES);
        let health = Arc::new(Health::default());
        let writer = Writer {
            file,
            path: path.display().to_string(),
            health: health.clone(),
            lost: 0,
        };
        std::thread::Builder::new()
            .name("audit-log".into())
            .spawn(move || writer.run(lines))
            .map_err(failed)?;
        Ok(AuditLog {
            queue,
            payloads,
            required: false,
            health,
        })
    }

    /// The same log, refusing calls while it cannot be written
    /// (`--audit-required`).
    pub fn required(self, required: bool) -> AuditLog {
        AuditLog { required, ..self }
    }

    /// Whether typed text is logged as is.
    pub(crate) fn payloads(&self) -> bool {
        self.payloads
    }

    /// Queues one record as one line; never waits. A full queue drops it
    /// (counted, and noted in the log later).
    pub(crate) fn write(&self, record: &Record) {
        let mut line = match serde_json::to_vec(record) {
            Ok(line) => line,
            Err(e) => {
                tracing::warn!(error = %e, "cannot encode an audit record");
                return;
            }
        };
        line.push(b'\n');
        if self.queue.try_send(Message::Line(line)).is_err()
            && self.health.dropped.fetch_add(1, Ordering::Relaxed) == 0
        {
            tracing::error!("the audit log's queue is full: lines are dropped");
        }
    }

    /// What is wrong with the log now, if anything: for the `_meta` of
    /// results, so that the operator's client sees it.
    pub(crate) fn problem(&self) -> Option<String> {
        if let Some(problem) = lock(&self.health.problem).clone() {
            return Some(problem);
        }
        let dropped = self.health.dropped.load(Ordering::Relaxed);
        (dropped > 0).then(|| format!("{dropped} audit lines dropped: the audit queue is full"))
    }

    /// `Err` with the reason when calls must be refused: the log is
    /// required and failing, or its queue is full.
    pub(crate) fn admits(&self) -> Result<(), String> {
        if !self.required {
            return Ok(());
        }
        if let Some(problem) = self.problem() {
            return Err(problem);
        }
        if self.queue.capacity() == 0 {
            return Err("the audit queue is full".to_owned());
        }
        Ok(())
    }

    /// Waits, at most `within`, until every line queued so far was written
    /// (or failed); `false` when the time ran out.
    pub fn flush(&self, within: Duration) -> bool {
        self.flusher().flush(within)
    }

    /// A handle that flushes this log, for the end of `serve`, when the log
    /// itself belongs to the server.
    pub fn flusher(&self) -> AuditFlusher {
        AuditFlusher {
            queue: self.queue.clone(),
        }
    }
}

/// Flushes an audit log from outside the server that owns it.
#[derive(Debug)]
pub struct AuditFlusher {
    queue: mpsc::Sender<Message>,
}

impl AuditFlusher {
    /// Waits, at most `within`, until every line queued so far was written
    /// (or failed); `false` when the time ran out.
    pub fn flush(&self, within: Duration) -> bool {
        let deadline = Instant::now() + within;
        let (done, written) = std::sync::mpsc::channel();
        let mut message = Message::Flush(done);
        loop {
            match self.queue.try_send(message) {
                Ok(()) => break,
                Err(mpsc::error::TrySendError::Full(back)) if Instant::now() < deadline => {
                    message = back;
                    std::thread::sleep(Duration::from_millis(5));
                }
                Err(_) => return false,
            }
        }
        written
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .is_ok()
    }
}

/// The one owner of the file: writes what the queue brings, in order.
struct Writer {
    file: LogFile,
    path: String,
    health: Arc<Health>,
    /// Lines that could not be written since the last that could.
    lost: u64,
}

impl Writer {
    fn run(mut self, mut lines: mpsc::Receiver<Message>) {
        while let Some(message) = lines.blocking_recv() {
            match message {
                Message::Line(line) => self.append(&line),
                Message::Flush(done) => {
                    let _ = done.send(());
                }
            }
        }
    }

    /// Writes a line, after a note of the lines lost before it.
    fn append(&mut self, line: &[u8]) {
        let dropped = self.health.dropped.swap(0, Ordering::Relaxed);
        let lost = self.lost + dropped;
        let written = match lost {
            0 => self.file.append(line),
            _ => self
                .file
                .append(&lost_note(lost))
                .and_then(|()| self.file.append(line)),
        };
        match written {
            Ok(()) => {
                self.lost = 0;
                if lock(&self.health.problem).take().is_some() {
                    tracing::warn!(path = %self.path, lost, "the audit log can be written again");
                }
            }
            Err(e) => {
                self.lost = lost + 1;
                let problem = format!("cannot write the audit log {}: {e}", self.path);
                let mut current = lock(&self.health.problem);
                if current.as_deref() != Some(problem.as_str()) {
                    tracing::error!("{problem}");
                }
                *current = Some(problem);
            }
        }
    }
}

/// The line that says how many lines are missing before it.
fn lost_note(lines: u64) -> Vec<u8> {
    let note = serde_json::json!({
        "time": rfc3339(SystemTime::now()),
        "note": "audit lines lost (the log could not be written, or its queue was full)",
        "lost": lines,
    });
    let mut line = note.to_string().into_bytes();
    line.push(b'\n');
    line
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// One line of the audit log.
#[derive(Debug, Serialize)]
pub(crate) struct Record {
    /// When the call ended, RFC 3339 in UTC.
    pub(crate) time: String,
    /// The client's name and version from initialize, when it gave them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) client: Option<Client>,
    /// "stdio" or "http".
    pub(crate) transport: &'static str,
    pub(crate) tool: String,
    /// The call's targets: panes (and windows or sessions) as written, and
    /// the pane of its result.
    pub(crate) panes: Vec<String>,
    /// "ok", "error", or a wait's outcome.
    pub(crate) outcome: String,
    pub(crate) duration_ms: u64,
    /// Whether the person was asked, and what they answered.
    pub(crate) approval: Approval,
    /// The text the call would type, one entry per piece.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub(crate) typed: Vec<Typed>,
}

/// The client named in initialize.
#[derive(Debug, Serialize)]
pub(crate) struct Client {
    pub(crate) name: String,
    pub(crate) version: String,
}

/// Whether the person was asked, and their answer.
#[derive(Debug, Default, Clone, Serialize)]
pub(crate) struct Approval {
    pub(crate) asked: bool,
    /// "accept", "decline", "cancel", "unsupported" (the client cannot ask),
    /// or "failed" (the question did not get an answer).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) answer: Option<&'static str>,
}

/// One piece of typed text.
#[derive(Debug, Serialize)]
pub(crate) struct Typed {
    pub(crate) pane: String,
    pub(crate) bytes: usize,
    /// The first 16 hex digits of the text's HMAC-SHA256 under this
    /// server's random key: equal texts match within one server's log, and
    /// a short text (a PIN) cannot be found by trying every value. Absent
    /// when the kernel's random source could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) hmac: Option<String>,
    /// The text itself, only with `--audit-payloads`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) payload: Option<String>,
}

/// This server's fingerprint key, drawn once from the kernel.
static KEY: LazyLock<Option<Vec<u8>>> = LazyLock::new(|| {
    let key = crate::random::hex_token(32)?;
    Some(key.into_bytes())
});

impl Typed {
    pub(crate) fn new(pane: &str, text: &str, payloads: bool) -> Typed {
        let hmac = KEY.as_deref().map(|key| {
            let mac = hmac_sha256(key, text.as_bytes());
            mac.iter().take(8).map(|b| format!("{b:02x}")).collect()
        });
        Typed {
            pane: pane.to_owned(),
            bytes: text.len(),
            hmac,
            payload: payloads.then(|| text.to_owned()),
        }
    }
}

/// HMAC-SHA256 (RFC 2104) of `message` under `key`.
fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    if key.len() > BLOCK {
        block[..32].copy_from_slice(&Sha256::digest(key));
    } else {
        block[..key.len()].copy_from_slice(key);
    }
    let pad = |byte: u8| block.map(|b| b ^ byte);
    let inner = Sha256::new()
        .chain_update(pad(0x36))
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(pad(0x5c))
        .chain_update(inner)
        .finalize()
        .into()
}

/// A call's outcome for the log: a wait's own outcome when its result has
/// one, else "ok" or "error".
pub(crate) fn outcome(result: Result<&Value, ()>) -> String {
    match result {
        Ok(structured) => structured
            .get("outcome")
            .and_then(Value::as_str)
            .unwrap_or("ok")
            .to_owned(),
        Err(()) => "error".to_owned(),
    }
}

/// `time` as RFC 3339 in UTC, to the millisecond.
pub(crate) fn rfc3339(time: SystemTime) -> String {
    let since = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or(Duration::ZERO);
    let seconds = since.as_secs();
    let (days, rest) = (seconds / 86_400, seconds % 86_400);
    let (year, month, day) = civil_from_days(days as i64);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60,
        since.subsec_millis()
    )
}

/// The proleptic Gregorian date of a count of days since 1970-01-01
/// (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;
    use std::path::{Path, PathBuf};

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "termpilot-audit-{name}-{}-{:?}",
            std::process::id(),
            SystemTime::now()
                .duration_since(SystemTime::UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos()
        ));
        std::fs::create_dir_all(&dir).expect("temporary directory");
        dir
    }

    fn record(tool: &str) -> Record {
        Record {
            time: rfc3339(SystemTime::UNIX_EPOCH),
            client: None,
            transport: "stdio",
            tool: tool.to_owned(),
            panes: vec!["%1".to_owned()],
            outcome: "ok".to_owned(),
            duration_ms: 3,
            approval: Approval::default(),
            typed: vec![Typed::new("%1", "secret words\n", false)],
        }
    }

    /// The log's lines once the writer wrote what was queued.
    fn lines(log: &AuditLog, path: &Path) -> Vec<Value> {
        assert!(log.flush(Duration::from_secs(10)), "the writer answers");
        std::fs::read_to_string(path)
            .expect("log readable")
            .lines()
            .map(|l| serde_json::from_str(l).expect("each line is JSON"))
            .collect()
    }

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn time_is_rfc3339_utc() {
        assert_eq!(rfc3339(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap = SystemTime::UNIX_EPOCH + Duration::from_millis(951_782_400_250);
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00.250Z");
        let late = SystemTime::UNIX_EPOCH + Duration::from_secs(1_798_761_599);
        assert_eq!(rfc3339(late), "2026-12-31T23:59:59.000Z");
    }

    #[test]
    fn hmac_matches_rfc_4231() {
        // Test cases 2 and 6 (a key longer than a block).
        assert_eq!(
            hex(&hmac_sha256(b"Jefe", b"what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
        let long_key = [0xaa; 131];
        assert_eq!(
            hex(&hmac_sha256(
                &long_key,
                b"Test Using Larger Than Block-Size Key - Hash Key First"
            )),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
        );
    }

    #[test]
    fn a_line_holds_length_and_keyed_fingerprint_but_not_the_text() {
        let dir = temp_dir("line");
        let path = dir.join("audit.log");
        let log = AuditLog::open(&path, false).expect("opens");
        log.write(&record("send_keys"));
        let lines = lines(&log, &path);
        let text = std::fs::read_to_string(&path).expect("readable");
        assert!(!text.contains("secret"), "{text}");
        assert_eq!(lines.len(), 1);
        let line = &lines[0];
        assert_eq!(line["tool"], "send_keys");
        assert_eq!(line["time"], "1970-01-01T00:00:00.000Z");
        assert_eq!(line["typed"][0]["bytes"], 13);
        let fingerprint = line["typed"][0]["hmac"].as_str().expect("a fingerprint");
        assert_eq!(fingerprint.len(), 16);
        // Not the plain digest, which anyone could compute for a guess.
        let plain = hex(&Sha256::digest(b"secret words\n"));
        assert!(!plain.starts_with(&fingerprint[..12]), "{fingerprint}");
        // Equal texts match within one server.
        let again = Typed::new("%2", "secret words\n", false);
        assert_eq!(again.hmac.as_deref(), Some(fingerprint));
        assert!(line["typed"][0].get("payload").is_none());
        assert!(line["typed"][0].get("sha256").is_none());
        assert_eq!(line["approval"]["asked"], false);
        let mode = std::fs::metadata(&path).expect("stat").mode() & 0o777;
        assert_eq!(mode, 0o600);
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn payloads_only_when_asked() {
        let dir = temp_dir("payload");
        let path = dir.join("audit.log");
        let log = AuditLog::open(&path, true).expect("opens");
        let mut r = record("paste_text");
        r.typed = vec![Typed::new("%1", "ls\n", log.payloads())];
        log.write(&r);
        assert_eq!(lines(&log, &path)[0]["typed"][0]["payload"], "ls\n");
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn a_moved_or_deleted_log_is_reopened_at_its_path() {
        let dir = temp_dir("rotate");
        let path = dir.join("audit.log");
        let log = AuditLog::open(&path, false).expect("opens");
        log.write(&record("first"));
        let rotated = dir.join("audit.log.1");
        assert!(log.flush(Duration::from_secs(10)));
        std::fs::rename(&path, &rotated).expect("rename");
        log.write(&record("second"));
        assert_eq!(lines(&log, &rotated).len(), 1);
        assert_eq!(lines(&log, &path)[0]["tool"], "second");
        std::fs::remove_file(&path).expect("delete");
        log.write(&record("third"));
        let now = lines(&log, &path);
        assert_eq!(now.len(), 1);
        assert_eq!(now[0]["tool"], "third");
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn concurrent_writes_make_whole_lines() {
        let dir = temp_dir("concurrent");
        let path = dir.join("audit.log");
        let log = std::sync::Arc::new(AuditLog::open(&path, false).expect("opens"));
        let threads: Vec<_> = (0..8)
            .map(|t| {
                let log = log.clone();
                std::thread::spawn(move || {
                    for i in 0..50 {
                        log.write(&record(&format!("tool-{t}-{i}-{}", "x".repeat(500))));
                    }
                })
            })
            .collect();
        for thread in threads {
            thread.join().expect("writer thread");
        }
        assert_eq!(lines(&log, &path).len(), 400);
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn an_unwritable_path_fails_with_its_name() {
        let error = AuditLog::open(Path::new("/nonexistent-dir/x/audit.log"), false)
            .expect_err("cannot open");
        assert!(
            error.to_string().contains("/nonexistent-dir/x/audit.log"),
            "{error}"
        );
    }

    #[test]
    fn a_failing_log_is_reported_refuses_when_required_and_notes_its_losses() {
        let dir = temp_dir("failing");
        let path = dir.join("audit.log");
        let log = AuditLog::open(&path, false).expect("opens").required(true);
        assert_eq!(log.admits(), Ok(()));
        assert!(log.problem().is_none());
        // The path becomes a directory: nothing can be written there.
        std::fs::remove_file(&path).expect("delete");
        std::fs::create_dir(&path).expect("a directory in its place");
        log.write(&record("lost"));
        assert!(log.flush(Duration::from_secs(10)));
        let problem = log.problem().expect("reported");
        assert!(problem.contains("audit.log"), "{problem}");
        assert_eq!(log.admits(), Err(problem));
        // Writable again: the next line says one was lost, and calls pass.
        std::fs::remove_dir(&path).expect("remove the directory");
        log.write(&record("back"));
        let now = lines(&log, &path);
        assert_eq!(now[0]["lost"], 1, "{now:?}");
        assert_eq!(now[1]["tool"], "back");
        assert!(log.problem().is_none());
        assert_eq!(log.admits(), Ok(()));
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn a_full_queue_drops_without_waiting_and_counts() {
        let dir = temp_dir("full");
        let path = dir.join("audit.log");
        let log = AuditLog::open(&path, false).expect("opens");
        let started = Instant::now();
        for i in 0..QUEUE_LINES * 4 {
            log.write(&record(&format!("burst-{i}")));
        }
        assert!(started.elapsed() < Duration::from_secs(30));
        let written = lines(&log, &path);
        let notes: u64 = written
            .iter()
            .filter_map(|line| line.get("lost").and_then(Value::as_u64))
            .sum();
        let calls = written
            .iter()
            .filter(|line| line.get("tool").is_some())
            .count();
        let dropped = log.health.dropped.load(Ordering::Relaxed);
        assert_eq!(calls as u64 + notes + dropped, (QUEUE_LINES * 4) as u64);
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn outcome_names_a_wait_outcome() {
        let wait = serde_json::json!({"outcome": "timeout"});
        assert_eq!(outcome(Ok(&wait)), "timeout");
        assert_eq!(outcome(Ok(&serde_json::json!({"pane": "%1"}))), "ok");
        assert_eq!(outcome(Err(())), "error");
    }
}
