//! Kept outputs: full texts that a rendering cut, stored as files in a private
//! directory and read back a page at a time.
//!
//! This is the crate's one piece of I/O, kept apart from the pure rendering. Files are
//! named only by ids the store makes itself (`o7.txt`); callers' ids are parsed
//! strictly before anything touches the file system, so no caller string becomes a
//! path. The directory is created `0700` and files `0600`: outputs can hold secrets.

use std::collections::VecDeque;
use std::fs::{self, DirBuilder, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use regex::Regex;

use crate::page::{Page, page_of};
use crate::{OutputId, StoreError, marker};

/// Full outputs kept for paging, newest last; the oldest are dropped to stay within a
/// size.
///
/// ```
/// use termpilot_render::OutputStore;
///
/// let mut store = OutputStore::new(None, 1 << 20, false)?;
/// let id = store.keep("one\ntwo\nthree")?;
/// let page = store.page(&id.to_string(), 1, 10, None)?;
/// assert_eq!(page.text(), "two\nthree");
/// # Ok::<(), termpilot_render::StoreError>(())
/// ```
#[derive(Debug)]
pub struct OutputStore {
    dir: PathBuf,
    /// The store made the directory, so it may remove it whole.
    owns_dir: bool,
    keep_on_drop: bool,
    max_total_bytes: u64,
    /// The number of the next id; ids below it were handed out (here or, for a
    /// directory reused across runs, before).
    next: u64,
    /// Kept outputs and their sizes, oldest first.
    kept: VecDeque<(OutputId, u64)>,
    total_bytes: u64,
}

impl OutputStore {
    /// Opens a store in `dir` (created `0700` if missing; an existing one is set to
    /// `0700`), or in a fresh private directory under the system's temporary directory.
    /// The store holds at most `max_total_bytes` (but always the newest output). Unless
    /// `keep_on_drop`, dropping the store removes the outputs it kept, and the directory
    /// if the store created it.
    pub fn new(
        dir: Option<PathBuf>,
        max_total_bytes: u64,
        keep_on_drop: bool,
    ) -> Result<Self, StoreError> {
        let (dir, owns_dir) = match dir {
            Some(dir) => open_dir(dir)?,
            None => (fresh_temp_dir()?, true),
        };
        let next = next_free_number(&dir)?;
        Ok(OutputStore {
            dir,
            owns_dir,
            keep_on_drop,
            max_total_bytes,
            next,
            kept: VecDeque::new(),
            total_bytes: 0,
        })
    }

    /// Where the outputs are kept (for logs; callers never see paths).
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Bytes held now.
    pub fn total_bytes(&self) -> u64 {
        self.total_bytes
    }

    /// Keeps `text` and returns its new id. Drops the oldest outputs while the store
    /// holds more than its size.
    pub fn keep(&mut self, text: &str) -> Result<OutputId, StoreError> {
        let id = OutputId::new(self.next);
        self.next += 1;
        let path = self.path_of(id);
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
            .map_err(StoreError::io(format!("create {id}")))?;
        file.write_all(text.as_bytes())
            .map_err(StoreError::io(format!("write {id}")))?;
        let size = text.len() as u64;
        self.kept.push_back((id, size));
        self.total_bytes += size;
        self.evict();
        Ok(id)
    }

    /// A page of the output `id`: `limit` lines from `offset` (lines skipped; negative
    /// counts back from the end), or the first `limit` lines from there that match
    /// `grep`.
    pub fn page(
        &self,
        id: &str,
        offset: i64,
        limit: usize,
        grep: Option<&Regex>,
    ) -> Result<Page, StoreError> {
        let id: OutputId = id.parse()?;
        if !self.kept.iter().any(|&(kept, _)| kept == id) {
            return Err(self.missing(id));
        }
        let text =
            fs::read_to_string(self.path_of(id)).map_err(StoreError::io(format!("read {id}")))?;
        Ok(page_of(id, &text, offset, limit, grep))
    }

    fn missing(&self, id: OutputId) -> StoreError {
        if id.number() < self.next && id.number() > 0 {
            StoreError::Evicted {
                id,
                kept: marker::size(usize::try_from(self.max_total_bytes).unwrap_or(usize::MAX)),
            }
        } else {
            StoreError::Unknown { id }
        }
    }

    fn path_of(&self, id: OutputId) -> PathBuf {
        self.dir.join(format!("{id}.txt"))
    }

    /// Drops the oldest outputs until the store fits its size, keeping the newest.
    fn evict(&mut self) {
        while self.total_bytes > self.max_total_bytes && self.kept.len() > 1 {
            let Some((id, size)) = self.kept.pop_front() else {
                break;
            };
            // A file already gone is as good as removed.
            let _ = fs::remove_file(self.path_of(id));
            self.total_bytes -= size;
        }
    }
}

impl Drop for OutputStore {
    fn drop(&mut self) {
        if self.keep_on_drop {
            return;
        }
        // Errors are ignored: there is no one to report them to while dropping.
        if self.owns_dir {
            let _ = fs::remove_dir_all(&self.dir);
        } else {
            for &(id, _) in &self.kept {
                let _ = fs::remove_file(self.path_of(id));
            }
        }
    }
}

/// Opens a directory given by the configuration; refuses symbolic links and files.
fn open_dir(dir: PathBuf) -> Result<(PathBuf, bool), StoreError> {
    match fs::symlink_metadata(&dir) {
        Ok(meta) if meta.is_dir() => {
            fs::set_permissions(&dir, fs::Permissions::from_mode(0o700))
                .map_err(StoreError::io("make the directory private"))?;
            Ok((dir, false))
        }
        Ok(_) => Err(StoreError::Io {
            action: "open the directory".to_owned(),
            source: std::io::Error::other(format!("{} is not a directory", dir.display())),
        }),
        Err(_) => {
            DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&dir)
                .map_err(StoreError::io("create the directory"))?;
            Ok((dir, true))
        }
    }
}

/// Creates a new directory no one else can have made: `create` fails if the name exists.
fn fresh_temp_dir() -> Result<PathBuf, StoreError> {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    let base = std::env::temp_dir();
    let mut last_error = None;
    for attempt in 0..100u32 {
        let dir = base.join(format!(
            "termpilot-outputs-{}-{nanos}-{attempt}",
            std::process::id()
        ));
        match DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) => last_error = Some(e),
        }
    }
    Err(StoreError::Io {
        action: "create a private directory".to_owned(),
        source: last_error.unwrap_or_else(|| std::io::Error::other("no attempt made")),
    })
}

/// The first id number not used by a file already in `dir` (a directory kept from an
/// earlier run), so that new outputs never collide with old ones.
fn next_free_number(dir: &Path) -> Result<u64, StoreError> {
    let entries = fs::read_dir(dir).map_err(StoreError::io("list the directory"))?;
    let highest = entries
        .filter_map(|entry| {
            entry
                .ok()?
                .file_name()
                .to_str()?
                .strip_suffix(".txt")?
                .parse::<OutputId>()
                .ok()
        })
        .map(OutputId::number)
        .max();
    Ok(highest.map_or(1, |n| n.saturating_add(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(max: u64) -> (tempfile::TempDir, OutputStore) {
        let parent = tempfile::tempdir().unwrap();
        let store = OutputStore::new(Some(parent.path().join("outputs")), max, false).unwrap();
        (parent, store)
    }

    fn mode(path: &Path) -> u32 {
        fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn the_directory_and_files_are_private() {
        let (_parent, mut store) = store(1 << 20);
        let id = store.keep("secret").unwrap();
        assert_eq!(mode(store.dir()), 0o700);
        assert_eq!(mode(&store.dir().join(format!("{id}.txt"))), 0o600);
    }

    #[test]
    fn ids_are_opaque_and_increasing() {
        let (_parent, mut store) = store(1 << 20);
        let ids: Vec<String> = (0..3)
            .map(|_| store.keep("x").unwrap().to_string())
            .collect();
        assert_eq!(ids, ["o1", "o2", "o3"]);
    }

    #[test]
    fn the_oldest_outputs_are_evicted_first() {
        let (_parent, mut store) = store(25);
        let first = store.keep(&"a".repeat(10)).unwrap();
        let second = store.keep(&"b".repeat(10)).unwrap();
        let third = store.keep(&"c".repeat(10)).unwrap();
        assert!(store.total_bytes() <= 25);
        let err = store.page(&first.to_string(), 0, 10, None).unwrap_err();
        assert_eq!(
            err.to_string(),
            "output id o1 not found; it may have been evicted (the store keeps the newest 25 bytes); \
             capture the output again"
        );
        assert!(store.page(&second.to_string(), 0, 10, None).is_ok());
        assert!(store.page(&third.to_string(), 0, 10, None).is_ok());
    }

    #[test]
    fn the_newest_output_is_kept_even_when_larger_than_the_store() {
        let (_parent, mut store) = store(5);
        let id = store.keep("larger than five").unwrap();
        assert_eq!(
            store.page(&id.to_string(), 0, 1, None).unwrap().text(),
            "larger than five"
        );
    }

    #[test]
    fn unknown_and_malformed_ids_are_clear_errors() {
        let (_parent, store) = store(100);
        let unknown = store.page("o9", 0, 1, None).unwrap_err();
        assert!(matches!(unknown, StoreError::Unknown { .. }), "{unknown}");
        let malformed = store.page("../../etc/passwd", 0, 1, None).unwrap_err();
        assert!(
            matches!(malformed, StoreError::MalformedId { .. }),
            "{malformed}"
        );
    }

    #[test]
    fn dropping_removes_a_directory_the_store_made() {
        let (_parent, mut store) = store(100);
        store.keep("x").unwrap();
        let dir = store.dir().to_owned();
        drop(store);
        assert!(!dir.exists());
    }

    #[test]
    fn a_temporary_store_cleans_up_after_itself() {
        let mut store = OutputStore::new(None, 100, false).unwrap();
        store.keep("x").unwrap();
        let dir = store.dir().to_owned();
        assert_eq!(mode(&dir), 0o700);
        drop(store);
        assert!(!dir.exists());
    }

    #[test]
    fn keep_on_drop_leaves_the_outputs_and_a_reopened_store_does_not_reuse_ids() {
        let parent = tempfile::tempdir().unwrap();
        let dir = parent.path().join("outputs");
        let mut store = OutputStore::new(Some(dir.clone()), 100, true).unwrap();
        let first = store.keep("x").unwrap();
        drop(store);
        assert!(dir.join(format!("{first}.txt")).exists());
        let mut reopened = OutputStore::new(Some(dir.clone()), 100, false).unwrap();
        let next = reopened.keep("y").unwrap();
        assert_ne!(next, first);
        drop(reopened);
        // The directory existed before this store, so only its own file went away.
        assert!(dir.join(format!("{first}.txt")).exists());
        assert!(!dir.join(format!("{next}.txt")).exists());
    }

    #[test]
    fn a_symbolic_link_is_not_used_as_the_directory() {
        let parent = tempfile::tempdir().unwrap();
        let target = parent.path().join("target");
        fs::create_dir(&target).unwrap();
        let link = parent.path().join("link");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        assert!(OutputStore::new(Some(link), 100, false).is_err());
    }
}
