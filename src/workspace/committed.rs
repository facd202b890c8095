//! A state directory committed to git (DESIGN section 6, issue 13): a
//! repository cloned from anywhere may ship its own `.debug-sidecar/`, with
//! an "active" session whose problem and hypotheses would be injected into
//! the model on every turn. The sidecar never makes tracked files (its own
//! `.gitignore` says `*`), so tracked files mean the state came from
//! elsewhere: it is reported, not served. Sessions in it read as inactive
//! with a warning naming the fix, and nothing is written there.
//!
//! Tracked files are read from git's index file (`git_index`), and asked of
//! `git ls-files` only where that reader declines (a split or sparse
//! index); the answer "none" is kept in the state directory, stamped with
//! the index it was read from, so the common case (an untracked state
//! directory) costs one `stat` per hook and never a process.

use super::store::{Refused, Store, StoreError, Stored, Update};
use crate::core::activity::Activity;
use crate::core::model::DebugState;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The cache of a negative answer, inside the state directory.
const STAMP_FILE: &str = "untracked-stamp";
/// Tracked files named in the warning.
const NAMED: usize = 3;

/// Files of `state_dir` that git tracks in the repository at `root`
/// (workspace-relative, at most a few named, and how many in all).
pub fn tracked_files(root: &Path, state_dir: &Path) -> (Vec<String>, usize) {
    let Ok(relative) = state_dir.strip_prefix(root) else {
        return (Vec::new(), 0);
    };
    if relative.as_os_str().is_empty() || !state_dir.is_dir() {
        return (Vec::new(), 0);
    }
    let Some(index) = super::git_index::index_path(root) else {
        return (Vec::new(), 0);
    };
    let stamp = index_stamp(&index);
    let cached = state_dir.join(STAMP_FILE);
    if let Some(stamp) = &stamp {
        if read_small(&cached).is_some_and(|text| text == *stamp) {
            return (Vec::new(), 0);
        }
    }
    let folder = relative
        .to_string_lossy()
        .replace(std::path::MAIN_SEPARATOR, "/");
    let Some(files) =
        super::git_index::tracked_under(&index, &folder).or_else(|| git_ls_files(root, relative))
    else {
        return (Vec::new(), 0);
    };
    if files.is_empty() {
        if let Some(stamp) = stamp {
            // Best effort: without it the next process asks git again.
            let _ = super::runlog::create_own(&cached)
                .and_then(|mut file| io::Write::write_all(&mut file, stamp.as_bytes()));
        }
        return (Vec::new(), 0);
    }
    let count = files.len();
    (files.into_iter().take(NAMED).collect(), count)
}

fn read_small(file: &Path) -> Option<String> {
    let mut text = String::new();
    let handle = super::runlog::open_own(file).ok()?;
    io::Read::read_to_string(&mut io::Read::take(handle, 256), &mut text).ok()?;
    Some(text)
}

/// `(mtime, size, inode)` of the index, or `none` while there is none yet
/// (a new repository); None when it cannot be read (asked every time).
fn index_stamp(index: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let index = match fs::metadata(index) {
        Ok(meta) => meta,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Some("none".into()),
        Err(_) => return None,
    };
    Some(format!(
        "{}.{} {} {}",
        index.mtime(),
        index.mtime_nsec(),
        index.size(),
        index.ino()
    ))
}

fn git_ls_files(root: &Path, relative: &Path) -> Option<Vec<String>> {
    let output = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["ls-files", "-z", "--"])
        .arg(relative)
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    if !output.status.success() {
        return None;
    }
    Some(
        output
            .stdout
            .split(|b| *b == 0)
            .filter(|name| !name.is_empty())
            .map(|name| String::from_utf8_lossy(name).into_owned())
            .collect(),
    )
}

/// What the person is told about a committed state directory.
pub fn warning(root: &Path, state_dir: &Path, named: &[String], count: usize) -> String {
    use crate::core::escape::{inline, inline_cut};
    let names: Vec<String> = named.iter().map(|n| inline_cut(n, 120)).collect();
    let more = if count > named.len() {
        format!(" and {} more", count - named.len())
    } else {
        String::new()
    };
    let relative = state_dir.strip_prefix(root).unwrap_or(state_dir);
    format!(
        "The state directory {} is committed to git ({}{more}): it came with the repository, \
         so debug-sidecar neither reads nor writes it. Delete it from the repository and the \
         disk (`git rm -r {}` and commit; what it holds is not yours), or set stateDir / \
         DEBUG_SIDECAR_DIR to another directory.",
        inline(&state_dir.to_string_lossy()),
        names.join(", "),
        inline(&relative.to_string_lossy()),
    )
}

/// The store for a workspace: the file store, or, when its state directory
/// is committed to git, one that serves nothing from it.
pub fn open_store(root: &Path, state_dir: &Path) -> Box<dyn Store> {
    let (named, count) = tracked_files(root, state_dir);
    if count == 0 {
        return Box::new(super::store::FileStore::new(state_dir));
    }
    let warning = warning(root, state_dir, &named, count);
    tracing::warn!("{warning}");
    Box::new(Committed {
        state_dir: state_dir.to_path_buf(),
        warning,
    })
}

/// A committed state directory: every session inactive, every write refused.
struct Committed {
    state_dir: PathBuf,
    warning: String,
}

impl Committed {
    fn stored(&self) -> Stored {
        Stored {
            state: DebugState::Inactive,
            revision: 0,
            updated_at: 0,
            warning: Some(self.warning.clone()),
        }
    }

    fn refused(&self) -> StoreError {
        StoreError::Write {
            path: self.state_dir.clone(),
            source: io::Error::other(self.warning.clone()),
        }
    }
}

impl Store for Committed {
    fn load(&mut self, _: &str) -> Result<Stored, StoreError> {
        Ok(self.stored())
    }

    fn update_then(
        &mut self,
        _: &str,
        _: u64,
        apply: &mut dyn FnMut(&DebugState) -> Result<DebugState, Refused>,
        then: &mut dyn FnMut(&Stored),
    ) -> Result<Update, StoreError> {
        // A command that changes nothing (a refused one) is answered as
        // usual; one that would write is refused with the reason.
        match apply(&DebugState::Inactive) {
            Ok(DebugState::Inactive) => {
                let stored = self.stored();
                then(&stored);
                Ok(Update::Unchanged(stored))
            }
            Ok(_) => Err(self.refused()),
            Err(_) => Ok(Update::Refused),
        }
    }

    fn sessions(&mut self) -> Result<Vec<(String, Stored)>, StoreError> {
        Ok(Vec::new())
    }

    fn session_ids(&mut self) -> Result<Vec<String>, StoreError> {
        Ok(Vec::new())
    }

    fn load_activity(&mut self, _: &str) -> Result<Activity, StoreError> {
        Ok(Activity::default())
    }

    fn update_activity(
        &mut self,
        _: &str,
        _: &mut dyn FnMut(&mut Activity),
    ) -> Result<Activity, StoreError> {
        Err(self.refused())
    }
}
