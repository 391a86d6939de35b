//! The audit file itself, opened so that its path cannot be turned against
//! the server: a link is not followed, a FIFO, device or socket is refused
//! without waiting for a reader, and the file is private to its owner.
//!
//! Each line is one `write` on a file opened with `O_APPEND`. Before each
//! write the path is checked against the open file (device and inode): a log
//! rotated away (moved or deleted) is followed by a fresh file at the path,
//! which passes the same checks.

use std::fs::{File, OpenOptions, Permissions};
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rustix::fs::OFlags;
use rustix::io::Errno;

/// The log's path and the file open at it, if any.
#[derive(Debug)]
pub(super) struct LogFile {
    path: PathBuf,
    /// `None` after the path stopped naming a file the log may use.
    open: Option<Open>,
}

#[derive(Debug)]
struct Open {
    file: File,
    dev: u64,
    ino: u64,
}

impl LogFile {
    /// Opens (creating it, mode 0600) the log at `path`.
    pub(super) fn open(path: &Path) -> io::Result<LogFile> {
        Ok(LogFile {
            path: path.to_owned(),
            open: Some(open_checked(path)?),
        })
    }

    /// Appends one line, to a fresh file when the old one was moved away.
    pub(super) fn append(&mut self, line: &[u8]) -> io::Result<()> {
        if !self.still_at_path()? {
            self.open = None;
            self.open = Some(open_checked(&self.path)?);
        }
        match &mut self.open {
            Some(open) => write_once(&mut open.file, line),
            None => Err(io::Error::other("the audit log is not open")),
        }
    }

    /// Whether the path still names the open file (the path itself, not
    /// what a link there would point to).
    fn still_at_path(&self) -> io::Result<bool> {
        let Some(open) = &self.open else {
            return Ok(false);
        };
        match std::fs::symlink_metadata(&self.path) {
            Ok(meta) => Ok(meta.dev() == open.dev && meta.ino() == open.ino),
            Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(e),
        }
    }
}

/// Opens `path` for appending without following a link and without waiting
/// (`O_NONBLOCK`: a FIFO with no reader fails at once instead of hanging),
/// then keeps it only when it is a regular file of this user with one name;
/// a mode wider than 0600 is narrowed to 0600.
fn open_checked(path: &Path) -> io::Result<Open> {
    let file = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .custom_flags(
            (OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY).bits() as std::ffi::c_int,
        )
        .open(path)
        .map_err(refusal)?;
    let meta = file.metadata()?;
    if !meta.file_type().is_file() {
        return Err(io::Error::other(
            "is not a regular file (a FIFO, device or socket is refused)",
        ));
    }
    let me = rustix::process::geteuid().as_raw();
    if meta.uid() != me {
        return Err(io::Error::other(format!(
            "belongs to user {}, not to the user running termpilot ({me})",
            meta.uid()
        )));
    }
    if meta.nlink() > 1 {
        return Err(io::Error::other(
            "has other names (hard links); the audit log must be a file of its own",
        ));
    }
    if meta.mode() & 0o077 != 0 {
        file.set_permissions(Permissions::from_mode(0o600))?;
        tracing::warn!(path = %path.display(), mode = format!("{:o}", meta.mode() & 0o777), "the audit log was readable by others; its mode is now 0600");
    }
    Ok(Open {
        file,
        dev: meta.dev(),
        ino: meta.ino(),
    })
}

/// The open error, said plainly when it comes from what is at the path.
fn refusal(error: io::Error) -> io::Error {
    let errno = error.raw_os_error().map(Errno::from_raw_os_error);
    if errno == Some(Errno::LOOP) {
        io::Error::other("is a symbolic link, which the audit log never follows")
    } else if errno == Some(Errno::NXIO) {
        io::Error::other("is a FIFO or device, not a regular file")
    } else {
        error
    }
}

/// Writes `line` with one `write` call (a regular file takes it whole); only
/// a short write, which should not happen, is finished with more.
fn write_once(file: &mut File, line: &[u8]) -> io::Result<()> {
    let written = file.write(line)?;
    if written < line.len() {
        file.write_all(&line[written..])?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "termpilot-auditfile-{name}-{}-{:?}",
            std::process::id(),
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap_or_default()
                .as_nanos()
        ));
        std::fs::create_dir_all(&dir).expect("temporary directory");
        dir
    }

    fn mkfifo(path: &Path) {
        rustix::fs::mknodat(
            rustix::fs::CWD,
            path,
            rustix::fs::FileType::Fifo,
            rustix::fs::Mode::from_raw_mode(0o600),
            0,
        )
        .expect("mkfifo");
    }

    #[test]
    fn a_symlink_at_the_path_is_refused_and_its_target_untouched() {
        let dir = temp_dir("link");
        let target = dir.join("target");
        std::fs::write(&target, "keep\n").expect("target");
        let path = dir.join("audit.log");
        std::os::unix::fs::symlink(&target, &path).expect("symlink");
        let error = LogFile::open(&path).expect_err("refused");
        assert!(error.to_string().contains("symbolic link"), "{error}");
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "keep\n");
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn a_fifo_is_refused_at_once_with_or_without_a_reader() {
        let dir = temp_dir("fifo");
        let path = dir.join("audit.log");
        mkfifo(&path);
        let error = LogFile::open(&path).expect_err("no reader");
        assert!(error.to_string().contains("FIFO"), "{error}");
        // With a reader the open succeeds, and the file type refuses it.
        let reader = OpenOptions::new()
            .read(true)
            .custom_flags(OFlags::NONBLOCK.bits() as std::ffi::c_int)
            .open(&path)
            .expect("reader");
        let error = LogFile::open(&path).expect_err("a reader");
        assert!(error.to_string().contains("not a regular file"), "{error}");
        drop(reader);
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn a_wider_file_is_narrowed_to_0600() {
        let dir = temp_dir("mode");
        let path = dir.join("audit.log");
        std::fs::write(&path, "").expect("file");
        std::fs::set_permissions(&path, Permissions::from_mode(0o644)).expect("chmod");
        LogFile::open(&path).expect("opens");
        let mode = std::fs::metadata(&path).expect("stat").mode() & 0o777;
        assert_eq!(mode, 0o600);
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn a_hard_linked_file_is_refused() {
        let dir = temp_dir("hardlink");
        let other = dir.join("profile");
        std::fs::write(&other, "").expect("file");
        let path = dir.join("audit.log");
        std::fs::hard_link(&other, &path).expect("link");
        let error = LogFile::open(&path).expect_err("refused");
        assert!(error.to_string().contains("hard links"), "{error}");
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn a_fifo_swapped_in_later_fails_the_write_without_blocking() {
        let dir = temp_dir("swap");
        let path = dir.join("audit.log");
        let mut log = LogFile::open(&path).expect("opens");
        log.append(b"one\n").expect("writes");
        std::fs::remove_file(&path).expect("delete");
        mkfifo(&path);
        let error = log.append(b"two\n").expect_err("refused");
        assert!(error.to_string().contains("FIFO"), "{error}");
        std::fs::remove_file(&path).expect("delete the FIFO");
        log.append(b"three\n").expect("a regular file again");
        assert_eq!(std::fs::read_to_string(&path).expect("read"), "three\n");
        std::fs::remove_dir_all(dir).ok();
    }
}
