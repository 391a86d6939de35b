//! Typing a secret into a pane so that it leaves no trace on the way.
//!
//! `send-keys -l VALUE` would put the value in a command line, and tmux
//! keeps every command a client sends in its message log, which any pane
//! reads with `tmux show-messages` (it has `$TMUX`); a debug log turned on
//! later (`SIGUSR2` to the server) would write the lines too. A paste
//! buffer is listed by `tmux list-buffers` while it exists. So the value
//! takes another way, the same on every host:
//!
//! 1. A script run on the server's machine (`Transport::shell_fed`) gets
//!    the value on its standard input and writes it to a file it creates,
//!    mode 0600, in a directory of its own (0700) under a memory file
//!    system where one exists (`$XDG_RUNTIME_DIR`, `/dev/shm`). Only the
//!    directory's random name is in its command line.
//! 2. `pipe-pane -I` makes the tmux server run a command whose output is
//!    the pane's input: it opens the file, removes the directory, and
//!    copies the file into the pane. The command line names only the path.
//! 3. Once the pipe has closed (`#{pane_pipe}` is 0), everything read has
//!    been written to the pane. The directory is removed again in case the
//!    command never ran (then nothing was typed: the call fails, without
//!    the Enter that would answer the prompt with an empty line); else
//!    Enter follows.
//!
//! A secret may be bound to programs (`Recipients`): then every process of
//! the terminal's foreground group that reads it must be one of them,
//! judged by its executable in `/proc` (where the pane runs) just before
//! the pipe opens.

use std::time::Duration;

use termpilot_control::{Command, PaneId};

use crate::cursor::Cursor;
use crate::engine::Engine;
use crate::error::{Error, Result};
use crate::format::tmux_format;
use crate::procfs::{Fd, Procfs};
use crate::transport::{ScriptEnd, shell_quote};

tmux_format! {
    /// What delivery needs to know about a pane.
    struct PipeRow {
        id: Option<PaneId> = "pane_id",
        pid: Option<u32> = "pane_pid",
        tty: String = "pane_tty",
        piped: bool = "pane_pipe",
    }
}

/// How long writing the value on the server's machine may take (an ssh
/// round trip on a loaded host).
const FEED_LIMIT: Duration = Duration::from_secs(20);

/// How long the pipe may take to copy the value into the pane.
const PIPE_LIMIT: Duration = Duration::from_secs(10);

/// How often the pipe is asked whether it has closed.
const PIPE_POLL: Duration = Duration::from_millis(10);

/// The programs a secret may be typed into: names (`sudo`, matched against
/// the executable's file name) or absolute paths (`/usr/bin/sudo`, matched
/// against the whole path). Empty: any program.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Recipients(pub Vec<String>);

/// One process of the foreground group, as judged.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Reader {
    /// Its name (`/proc/PID/comm`).
    name: String,
    /// Its executable; `None` when `/proc` hides it (another user's
    /// process, such as a set-user-id `sudo`).
    exe: Option<String>,
}

impl Reader {
    /// How a refusal names it.
    fn shown(&self) -> String {
        match &self.exe {
            Some(exe) => exe.clone(),
            None => format!("{} (another user's process)", self.name),
        }
    }
}

impl Recipients {
    /// Whether `reader` may receive the secret. A process whose executable
    /// is hidden is judged by its name, which only its own user (not the
    /// agent's) can change.
    fn admits(&self, reader: &Reader) -> bool {
        self.0.iter().any(|allowed| {
            let by_path = allowed.starts_with('/');
            match &reader.exe {
                Some(exe) if by_path => exe == allowed,
                Some(exe) => names(file_name(exe), allowed),
                None => file_name(allowed) == reader.name,
            }
        })
    }

    /// These recipients with each absolute path on this machine also
    /// given as the file it names, links resolved (`/usr/bin/python3` as
    /// `/usr/bin/python3.11`), as `/proc/PID/exe` shows executables.
    fn resolved(&self) -> Recipients {
        let mut programs = self.0.clone();
        for path in self.0.iter().filter(|p| p.starts_with('/')) {
            if let Ok(real) = std::fs::canonicalize(path)
                && let Some(real) = real.to_str()
                && !programs.iter().any(|p| p == real)
            {
                programs.push(real.to_owned());
            }
        }
        Recipients(programs)
    }

    /// Why the group may not receive the secret, if it may not.
    fn refusal(&self, group: &[Reader]) -> Option<String> {
        if self.0.is_empty() {
            return None;
        }
        if group.is_empty() {
            return Some("its foreground program cannot be read".into());
        }
        let refused: Vec<String> = (group.iter())
            .filter(|reader| !self.admits(reader))
            .map(Reader::shown)
            .collect();
        (!refused.is_empty()).then(|| {
            format!(
                "{} runs in its foreground, and the secret may be typed only into {}",
                refused.join(", "),
                self.0.join(", ")
            )
        })
    }
}

/// Whether an executable's file name is `allowed`, or `allowed` and a
/// version (`python3.11` for `python3`, as `/proc` shows the target of the
/// `python3` link).
fn names(file: &str, allowed: &str) -> bool {
    match file.strip_prefix(allowed) {
        Some("") => true,
        Some(version) => {
            version.starts_with(['.', '-'])
                && version.len() > 1
                && version[1..]
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b == b'.')
        }
        None => false,
    }
}

fn file_name(path: &str) -> &str {
    path.rsplit('/').next().unwrap_or(path)
}

impl Engine {
    /// Types `value` into a pane, then Enter if `enter`, leaving no copy of
    /// it in tmux (message log, buffers), in a command line or on disk (see
    /// the module documentation); refuses a pane whose foreground programs
    /// `recipients` does not admit. Returns the cursor from before it.
    pub async fn send_secret(
        &self,
        pane: PaneId,
        value: &str,
        enter: bool,
        recipients: &Recipients,
    ) -> Result<Cursor> {
        self.refuse_own_pane(pane, "type into")?;
        self.refuse_held(&[pane]).await?;
        // The input gate judges the keys around the secret, never the value.
        let keys = crate::ops::Input {
            text: Some(String::new()),
            enter,
            ..crate::ops::Input::default()
        };
        self.gate_secret(pane, &keys)?;
        let row = self.pipe_row(pane).await?;
        if row.piped {
            return Err(Error::InvalidArgument(format!(
                "{pane} has a pipe-pane open, and termpilot types a secret through one of its \
                 own; close it first (tmux pipe-pane -t {pane}). Nothing was typed."
            )));
        }
        let dir = self.feed(value).await?;
        let typed = self.pipe_in(pane, &row, &dir, recipients).await;
        let left_behind = self.remove(&dir).await;
        let cursor = typed?;
        if left_behind {
            // The copy never opened the file: the pane got nothing, and
            // Enter would answer the prompt with an empty line.
            return Err(cannot_deliver("tmux did not run the copy into the pane"));
        }
        if enter {
            let key = Command::new("send-keys").opt("-t", pane.to_string());
            self.run_for_pane(pane, vec![key.arg("Enter")]).await?;
        }
        Ok(self.cursor(pane, cursor))
    }

    /// Removes the directory `dir` (the copy into the pane removes it as
    /// soon as it has opened the file); returns whether it was still there.
    async fn remove(&self, dir: &str) -> bool {
        let dir = shell_quote(dir);
        let script = format!("if [ -e {dir} ]; then rm -rf -- {dir}; echo left; fi");
        match self.shared.transport.shell(&script).await {
            Ok(ended) => ended.printed().trim() == "left",
            Err(error) => {
                tracing::warn!(%error, "cannot remove the secret's directory");
                true
            }
        }
    }

    async fn pipe_row(&self, pane: PaneId) -> Result<PipeRow> {
        let query = Command::new("display-message")
            .flag("-p")
            .opt("-t", pane.to_string())
            .arg(PipeRow::FORMAT);
        let reply = self.command(query).await?;
        let row = PipeRow::parse_first("display-message", &reply)?;
        match row.id == Some(pane) {
            true => Ok(row),
            false => Err(Error::InvalidArgument(format!("pane {pane} is gone"))),
        }
    }

    /// Writes `value` to a new file on the server's machine; returns its
    /// directory.
    async fn feed(&self, value: &str) -> Result<String> {
        let id = random_hex();
        let input = value.as_bytes().to_vec();
        let fed = tokio::time::timeout(
            FEED_LIMIT,
            self.shared.transport.shell_fed(&feed_script(&id), input),
        );
        let why = match fed.await {
            Ok(Ok(ScriptEnd::Printed(printed))) => match written_dir(&printed, value.len()) {
                Some(dir) => return Ok(dir.to_owned()),
                // An exec prefix without `-i` passes no input: an empty
                // file must not be typed as the secret.
                None => "cannot write it on the server's machine: ".to_owned(),
            },
            Ok(Ok(ScriptEnd::Failed { why, .. })) => {
                format!("cannot write it on the server's machine: {why}")
            }
            Ok(Err(error)) => error.to_string(),
            Err(_) => "writing it on the server's machine timed out".to_owned(),
        };
        let forget = format!("rm -rf -- {}", feed_dirs(&id));
        let _ = self.shared.transport.shell(&forget).await;
        Err(cannot_deliver(&why))
    }

    /// Checks the recipients, then copies the file in `dir` into the pane
    /// through `pipe-pane -I`; returns the journal offset from before.
    async fn pipe_in(
        &self,
        pane: PaneId,
        row: &PipeRow,
        dir: &str,
        recipients: &Recipients,
    ) -> Result<u64> {
        if !recipients.0.is_empty() {
            let group = self.foreground_readers(row).await;
            let resolved;
            let recipients = match self.panes_are_local() {
                true => {
                    resolved = recipients.resolved();
                    &resolved
                }
                false => recipients,
            };
            if let Some(why) = recipients.refusal(&group) {
                return Err(Error::InvalidArgument(format!(
                    "refusing to type the secret into {pane}: {why}. Nothing was typed."
                )));
            }
        }
        let file = shell_quote(&format!("{dir}/s"));
        let dir = shell_quote(dir);
        let copy = format!("exec 3<{file} && rm -rf -- {dir} && exec cat <&3");
        let pipe = Command::new("pipe-pane")
            .flag("-I")
            .opt("-t", pane.to_string())
            .arg(termpilot_control::escape_format(&copy));
        let before = self.run_for_pane(pane, vec![pipe]).await?;
        let closed = async {
            while self.pipe_row(pane).await?.piped {
                tokio::time::sleep(PIPE_POLL).await;
            }
            Ok::<(), Error>(())
        };
        match tokio::time::timeout(PIPE_LIMIT, closed).await {
            Ok(closed) => closed.map(|()| before),
            Err(_) => {
                let close = Command::new("pipe-pane").opt("-t", pane.to_string());
                let _ = self.command(close).await;
                Err(cannot_deliver("the pipe into the pane did not finish"))
            }
        }
    }

    /// The processes of the pane's foreground group, read where it runs.
    async fn foreground_readers(&self, row: &PipeRow) -> Vec<Reader> {
        let Some(pid) = row.pid else {
            return Vec::new();
        };
        // A fresh look, never a shared dump: this decides where a secret goes.
        if self.panes_are_local() {
            return readers(&crate::procfs::Here, pid, &row.tty);
        }
        let dump = self.dump(pid, &row.tty).await;
        readers(&dump, pid, &row.tty)
    }
}

/// The processes of the foreground group of the terminal `tty` (whose
/// first process is `pane_pid`) that read it now, or whose reading `/proc`
/// hides (another user's). One waiting for its child (a shell running the
/// reader) is not judged: the reader, blocked in its read, takes the line
/// first.
fn readers(fs: &dyn Procfs, pane_pid: u32, tty: &str) -> Vec<Reader> {
    use crate::shell::foreground::{foreground_pids, process};
    let pids = foreground_pids(fs, pane_pid).unwrap_or_default();
    (pids.into_iter())
        .filter_map(|pid| {
            let facts = process(fs, pid, tty)?;
            if !facts.hidden && !crate::input_state::waits_for_keys(&facts) {
                return None;
            }
            let exe = match fs.exe(pid) {
                Fd::Target(exe) => Some(exe),
                Fd::Hidden => None,
                Fd::Absent => return None,
            };
            Some(Reader {
                name: facts.name,
                exe,
            })
        })
        .collect()
}

/// The bases a secret's directory may be made in, in order, as shell words.
const FEED_BASES: [&str; 4] = [
    r#""${XDG_RUNTIME_DIR:-}""#,
    "/dev/shm",
    r#""${TMPDIR:-/tmp}""#,
    "/tmp",
];

/// The script that writes its standard input to `DIR/s` and prints the
/// size written, then `DIR`: a new directory named `termpilot-secret-ID`
/// under the first of [`FEED_BASES`] it can write to.
fn feed_script(id: &str) -> String {
    let bases = FEED_BASES.join(" ");
    format!(
        r#"umask 077
for base in {bases}; do
  [ -n "$base" ] && [ -d "$base" ] && [ -w "$base" ] || continue
  dir="$base/termpilot-secret-{id}"
  mkdir "$dir" 2>/dev/null || continue
  if cat > "$dir/s"; then wc -c < "$dir/s"; printf '%s\n' "$dir"; exit 0; fi
  rm -rf -- "$dir"; exit 1
done
echo "no directory to write in" >&2
exit 1
"#
    )
}

/// Every directory [`feed_script`] may have made for `id`, as shell words.
fn feed_dirs(id: &str) -> String {
    (FEED_BASES.iter())
        .map(|base| match base.strip_suffix('"') {
            Some(quoted) => format!("{quoted}/termpilot-secret-{id}\""),
            None => format!("{base}/termpilot-secret-{id}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The directory the feed script printed, if it wrote `len` bytes.
fn written_dir(stdout: &str, len: usize) -> Option<&str> {
    let (size, dir) = stdout.trim().split_once('\n')?;
    let dir = dir.trim_end();
    (size.trim().parse() == Ok(len) && dir.starts_with('/')).then_some(dir)
}

/// 32 hex digits from the system's random source (the time and pid when
/// it cannot be read: the name only has to be new, `mkdir` checks that).
fn random_hex() -> String {
    use std::io::Read;
    let mut bytes = [0u8; 16];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if read.is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        bytes = (nanos ^ u128::from(std::process::id())).to_le_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn cannot_deliver(why: &str) -> Error {
    Error::InvalidArgument(format!(
        "the secret could not be typed ({why}); nothing is left behind"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reader(name: &str, exe: Option<&str>) -> Reader {
        Reader {
            name: name.into(),
            exe: exe.map(str::to_owned),
        }
    }

    #[test]
    fn recipients_judge_by_executable() {
        let bound = Recipients(vec!["sudo".into(), "/usr/bin/python3".into()]);
        assert!(bound.admits(&reader("sudo", Some("/usr/bin/sudo"))));
        assert!(bound.admits(&reader("python3", Some("/usr/bin/python3"))));
        let by_name = Recipients(vec!["python3".into()]);
        assert!(by_name.admits(&reader("python3", Some("/usr/bin/python3.11"))));
        assert!(!by_name.admits(&reader("python3", Some("/usr/bin/python3x"))));
        assert!(!by_name.admits(&reader("python3", Some("/usr/bin/python3."))));
        let python = Recipients(vec!["python".into()]);
        assert!(!python.admits(&reader("python3", Some("/usr/bin/python3"))));
        // A renamed process is judged by what it runs.
        assert!(!bound.admits(&reader("sudo", Some("/usr/bin/cat"))));
        assert!(!bound.admits(&reader("python3", Some("/tmp/python3"))));
        // Another user's process, by its name.
        assert!(bound.admits(&reader("sudo", None)));
        assert!(!bound.admits(&reader("cat", None)));
        let refusal = bound
            .refusal(&[reader("bash", Some("/usr/bin/bash"))])
            .expect("refused");
        assert!(refusal.contains("/usr/bin/bash runs"), "{refusal}");
        assert!(refusal.contains("sudo, /usr/bin/python3"), "{refusal}");
        assert!(bound.refusal(&[]).is_some());
        // A link on this machine also admits what it names.
        let sh = std::fs::canonicalize("/bin/sh").unwrap();
        let by_link = Recipients(vec!["/bin/sh".into()]).resolved();
        assert!(by_link.admits(&reader("sh", Some(sh.to_str().unwrap()))));
        assert_eq!(Recipients::default().refusal(&[]), None);
    }

    #[test]
    fn the_feed_script_leaves_a_private_file() {
        let id = random_hex();
        assert_eq!(id.len(), 32);
        let mut child = std::process::Command::new("sh")
            .args(["-c", &feed_script(&id)])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("sh runs");
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"hunter2").unwrap();
        drop(stdin);
        let output = child.wait_with_output().unwrap();
        let stdout = String::from_utf8(output.stdout).unwrap();
        assert_eq!(written_dir(&stdout, 6), None, "the size is checked");
        let dir = written_dir(&stdout, 7).expect("a directory").to_owned();
        assert!(dir.ends_with(&format!("termpilot-secret-{id}")), "{dir}");
        use std::os::unix::fs::PermissionsExt;
        let mode = |path: &str| std::fs::metadata(path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&format!("{dir}/s")), 0o600);
        assert_eq!(std::fs::read(format!("{dir}/s")).unwrap(), b"hunter2");
        let forget = format!("rm -r -- {}", feed_dirs(&id));
        let removed = std::process::Command::new("sh")
            .args(["-c", &forget])
            .status();
        assert!(
            !std::path::Path::new(&dir).exists(),
            "{forget}: {removed:?}"
        );
    }
}
