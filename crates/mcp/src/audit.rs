//! The audit log: one JSON line per tool call, appended to a file the
//! operator names (`--audit PATH`).
//!
//! Each line is one `write` on a file opened with `O_APPEND`, under a lock,
//! so lines of concurrent calls never interleave. Before each write the path
//! is checked against the open file (device and inode): a log rotated away
//! (moved or deleted) is followed by a fresh file at the path.
//!
//! Typed text is recorded as its length and the start of its SHA-256, never
//! as itself, unless the operator asked for payloads.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};

/// An open audit log.
#[derive(Debug)]
pub struct AuditLog {
    path: PathBuf,
    /// Whether typed text is written as is.
    payloads: bool,
    /// The open file and its identity. A std `Mutex`: held for one stat and
    /// one write, never across an `.await`.
    file: Mutex<Open>,
}

#[derive(Debug)]
struct Open {
    file: File,
    dev: u64,
    ino: u64,
}

/// Why the audit log cannot be used.
#[derive(Debug, thiserror::Error)]
#[error("cannot write the audit log {path}: {source}")]
pub struct AuditError {
    path: String,
    #[source]
    source: std::io::Error,
}

impl AuditLog {
    /// Opens (creating it, mode 0600) the log at `path` for appending. Fails
    /// when the path cannot be written.
    pub fn open(path: &Path, payloads: bool) -> Result<AuditLog, AuditError> {
        let open = open(path).map_err(|source| AuditError {
            path: path.display().to_string(),
            source,
        })?;
        Ok(AuditLog {
            path: path.to_owned(),
            payloads,
            file: Mutex::new(open),
        })
    }

    /// Whether typed text is logged as is.
    pub(crate) fn payloads(&self) -> bool {
        self.payloads
    }

    /// Appends one record as one line. A failure is reported on stderr and
    /// otherwise ignored: the call it records has already happened.
    pub(crate) fn write(&self, record: &Record) {
        let mut line = match serde_json::to_vec(record) {
            Ok(line) => line,
            Err(e) => {
                tracing::warn!(error = %e, "cannot encode an audit record");
                return;
            }
        };
        line.push(b'\n');
        let mut open = self.file.lock().unwrap_or_else(|e| e.into_inner());
        if let Err(e) = self.reopen_if_moved(&mut open) {
            tracing::warn!(path = %self.path.display(), error = %e, "cannot reopen the audit log");
        }
        if let Err(e) = write_once(&mut open.file, &line) {
            tracing::warn!(path = %self.path.display(), error = %e, "cannot write the audit log");
        }
    }

    /// Opens the path afresh when it no longer names the open file.
    fn reopen_if_moved(&self, open: &mut Open) -> std::io::Result<()> {
        let same = match std::fs::metadata(&self.path) {
            Ok(meta) => meta.dev() == open.dev && meta.ino() == open.ino,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => false,
            Err(e) => return Err(e),
        };
        if !same {
            *open = self::open(&self.path)?;
        }
        Ok(())
    }
}

fn open(path: &Path) -> std::io::Result<Open> {
    let file = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(path)?;
    let meta = file.metadata()?;
    Ok(Open {
        file,
        dev: meta.dev(),
        ino: meta.ino(),
    })
}

/// Writes `line` with one `write` call (a regular file takes it whole); only
/// a short write, which should not happen, is finished with more.
fn write_once(file: &mut File, line: &[u8]) -> std::io::Result<()> {
    let written = file.write(line)?;
    if written < line.len() {
        file.write_all(&line[written..])?;
    }
    Ok(())
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
    /// The first 12 hex digits of the text's SHA-256.
    pub(crate) sha256: String,
    /// The text itself, only with `--audit-payloads`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub(crate) payload: Option<String>,
}

impl Typed {
    pub(crate) fn new(pane: &str, text: &str, payloads: bool) -> Typed {
        let digest = Sha256::digest(text.as_bytes());
        let sha256 = digest.iter().take(6).map(|b| format!("{b:02x}")).collect();
        Typed {
            pane: pane.to_owned(),
            bytes: text.len(),
            sha256,
            payload: payloads.then(|| text.to_owned()),
        }
    }
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

    fn lines(path: &Path) -> Vec<Value> {
        std::fs::read_to_string(path)
            .expect("log readable")
            .lines()
            .map(|l| serde_json::from_str(l).expect("each line is JSON"))
            .collect()
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
    fn a_line_holds_length_and_digest_but_not_the_text() {
        let dir = temp_dir("line");
        let path = dir.join("audit.log");
        let log = AuditLog::open(&path, false).expect("opens");
        log.write(&record("send_keys"));
        let text = std::fs::read_to_string(&path).expect("readable");
        assert!(!text.contains("secret"), "{text}");
        let lines = lines(&path);
        assert_eq!(lines.len(), 1);
        let line = &lines[0];
        assert_eq!(line["tool"], "send_keys");
        assert_eq!(line["time"], "1970-01-01T00:00:00.000Z");
        assert_eq!(line["typed"][0]["bytes"], 13);
        // sha256("secret words\n"), its first 12 hex digits.
        let full = Sha256::digest(b"secret words\n");
        let hex: String = full.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(line["typed"][0]["sha256"], hex[..12]);
        assert!(line["typed"][0].get("payload").is_none());
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
        assert_eq!(lines(&path)[0]["typed"][0]["payload"], "ls\n");
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn a_moved_or_deleted_log_is_reopened_at_its_path() {
        let dir = temp_dir("rotate");
        let path = dir.join("audit.log");
        let log = AuditLog::open(&path, false).expect("opens");
        log.write(&record("first"));
        let rotated = dir.join("audit.log.1");
        std::fs::rename(&path, &rotated).expect("rename");
        log.write(&record("second"));
        assert_eq!(lines(&rotated).len(), 1);
        assert_eq!(lines(&path)[0]["tool"], "second");
        std::fs::remove_file(&path).expect("delete");
        log.write(&record("third"));
        let now = lines(&path);
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
        assert_eq!(lines(&path).len(), 400);
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
    fn outcome_names_a_wait_outcome() {
        let wait = serde_json::json!({"outcome": "timeout"});
        assert_eq!(outcome(Ok(&wait)), "timeout");
        assert_eq!(outcome(Ok(&serde_json::json!({"pane": "%1"}))), "ok");
        assert_eq!(outcome(Err(())), "error");
    }
}
