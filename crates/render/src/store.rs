//! Kept outputs: full texts that a rendering cut, stored as files in a private
//! directory and read back a page at a time.
//!
//! This is the crate's one piece of I/O, kept apart from the pure rendering. Files are
//! named only by ids the store makes itself (`o7.txt`); callers' ids are parsed
//! strictly before anything touches the file system, so no caller string becomes a
//! path. The directory is created `0700` and files `0600`: outputs can hold secrets.
//!
//! Each output belongs to an owner (a string the caller chooses, such as an HTTP
//! session): only the same owner can page through it, and any other gets the answer
//! for an id that never existed. Ids are random (12 digits from the kernel's random
//! source), so one owner's ids say nothing about another's.

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
/// let id = store.keep_for("one\ntwo\nthree", "session A")?;
/// let page = store.page_for(&id.to_string(), "session A", 1, 10, None)?;
/// assert_eq!(page.text(), "two\nthree");
/// assert!(store.page_for(&id.to_string(), "session B", 1, 10, None).is_err());
/// # Ok::<(), termpilot_render::StoreError>(())
/// ```
#[derive(Debug)]
pub struct OutputStore {
    dir: PathBuf,
    /// The store made the directory, so it may remove it whole.
    owns_dir: bool,
    keep_on_drop: bool,
    max_total_bytes: u64,
    /// Kept outputs, oldest first.
    kept: VecDeque<Kept>,
    /// The latest outputs dropped to stay within the size, with their owners, so
    /// that their owner is told so (at most [`EVICTED_REMEMBERED`]).
    evicted: VecDeque<(OutputId, String)>,
    total_bytes: u64,
}

/// One kept output.
#[derive(Debug)]
struct Kept {
    id: OutputId,
    owner: String,
    size: u64,
}

/// How many evicted ids are remembered.
const EVICTED_REMEMBERED: usize = 4096;

/// The smallest id number: every id has [`ID_DIGITS`] digits.
const ID_LOW: u64 = 100_000_000_000;
const ID_DIGITS: u32 = 12;

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
        Ok(OutputStore {
            dir,
            owns_dir,
            keep_on_drop,
            max_total_bytes,
            kept: VecDeque::new(),
            evicted: VecDeque::new(),
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

    /// Keeps `text` for the owner `""`; see [`OutputStore::keep_for`].
    pub fn keep(&mut self, text: &str) -> Result<OutputId, StoreError> {
        self.keep_for(text, "")
    }

    /// Keeps `text` for `owner` and returns its new id, a random one. Drops the
    /// oldest outputs while the store holds more than its size.
    pub fn keep_for(&mut self, text: &str, owner: &str) -> Result<OutputId, StoreError> {
        let (id, mut file) = self.create_new()?;
        file.write_all(text.as_bytes())
            .map_err(StoreError::io(format!("write {id}")))?;
        let size = text.len() as u64;
        self.kept.push_back(Kept {
            id,
            owner: owner.to_owned(),
            size,
        });
        self.total_bytes += size;
        self.evict();
        Ok(id)
    }

    /// A file for a new output, under a random id no file has yet (a directory kept
    /// from an earlier run may hold some).
    fn create_new(&self) -> Result<(OutputId, fs::File), StoreError> {
        let mut last_error = None;
        for _ in 0..16 {
            let id = OutputId::new(random_number()?);
            let created = OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(0o600)
                .open(self.path_of(id));
            match created {
                Ok(file) => return Ok((id, file)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => last_error = Some(e),
                Err(e) => return Err(StoreError::io(format!("create {id}"))(e)),
            }
        }
        Err(StoreError::io("create an output")(
            last_error.unwrap_or_else(|| std::io::Error::other("no free id")),
        ))
    }

    /// A page of the output `id` of the owner `""`; see [`OutputStore::page_for`].
    pub fn page(
        &self,
        id: &str,
        offset: i64,
        limit: usize,
        grep: Option<&Regex>,
    ) -> Result<Page, StoreError> {
        self.page_for(id, "", offset, limit, grep)
    }

    /// A page of the output `id`, which must be `owner`'s: `limit` lines from
    /// `offset` (lines skipped; negative counts back from the end), or the first
    /// `limit` lines from there that match `grep`.
    pub fn page_for(
        &self,
        id: &str,
        owner: &str,
        offset: i64,
        limit: usize,
        grep: Option<&Regex>,
    ) -> Result<Page, StoreError> {
        let id: OutputId = id.parse()?;
        if !self
            .kept
            .iter()
            .any(|kept| kept.id == id && kept.owner == owner)
        {
            return Err(self.missing(id, owner));
        }
        let text =
            fs::read_to_string(self.path_of(id)).map_err(StoreError::io(format!("read {id}")))?;
        Ok(page_of(id, &text, offset, limit, grep))
    }

    /// Why `owner` cannot read `id`: evicted when it was theirs, else unknown (the
    /// same answer whether another owner has it or no one ever had).
    fn missing(&self, id: OutputId, owner: &str) -> StoreError {
        if self.evicted.iter().any(|(e, o)| *e == id && o == owner) {
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
            let Some(kept) = self.kept.pop_front() else {
                break;
            };
            // A file already gone is as good as removed.
            let _ = fs::remove_file(self.path_of(kept.id));
            self.total_bytes -= kept.size;
            if self.evicted.len() == EVICTED_REMEMBERED {
                self.evicted.pop_front();
            }
            self.evicted.push_back((kept.id, kept.owner));
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
            for kept in &self.kept {
                let _ = fs::remove_file(self.path_of(kept.id));
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

/// A random id number of [`ID_DIGITS`] digits, from the kernel's random source.
fn random_number() -> Result<u64, StoreError> {
    let mut bytes = [0u8; 8];
    fs::File::open("/dev/urandom")
        .and_then(|mut random| std::io::Read::read_exact(&mut random, &mut bytes))
        .map_err(StoreError::io("read /dev/urandom for an id"))?;
    let span = 10u64.pow(ID_DIGITS) - ID_LOW;
    Ok(ID_LOW + u64::from_le_bytes(bytes) % span)
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
    fn ids_are_random_and_of_one_width() {
        let (_parent, mut store) = store(1 << 20);
        let ids: Vec<String> = (0..50)
            .map(|_| store.keep("x").unwrap().to_string())
            .collect();
        for id in &ids {
            assert_eq!(id.len(), 1 + ID_DIGITS as usize, "{id}");
        }
        let distinct: std::collections::HashSet<_> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len());
        let mut sorted = ids.clone();
        sorted.sort();
        assert_ne!(sorted, ids, "not increasing");
    }

    #[test]
    fn an_output_is_only_its_owners() {
        let (_parent, mut store) = store(25);
        let mine = store.keep_for("mine", "A").unwrap().to_string();
        let page = store.page_for(&mine, "A", 0, 10, None).unwrap();
        assert_eq!(page.text(), "mine");
        let theirs = store.page_for(&mine, "B", 0, 10, None).unwrap_err();
        let never = store
            .page_for("o123456789012", "B", 0, 10, None)
            .unwrap_err();
        assert!(matches!(theirs, StoreError::Unknown { .. }), "{theirs}");
        // The same words as for an id that never existed.
        assert_eq!(
            theirs.to_string().replace(&mine, "ID"),
            never.to_string().replace("o123456789012", "ID")
        );
        // Evicted: its owner is told so; anyone else, that it does not exist.
        store.keep_for(&"x".repeat(30), "B").unwrap();
        let evicted = store.page_for(&mine, "A", 0, 10, None).unwrap_err();
        assert!(matches!(evicted, StoreError::Evicted { .. }), "{evicted}");
        let other = store.page_for(&mine, "B", 0, 10, None).unwrap_err();
        assert!(matches!(other, StoreError::Unknown { .. }), "{other}");
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
            format!(
                "output id {first} not found; it may have been evicted (the store keeps the \
                 newest 25 bytes); capture the output again"
            )
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
