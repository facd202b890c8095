//! A note of the active debug session kept outside its state directory, in
//! the repository's `.git/` (which `rm -rf .debug-sidecar` and `git clean
//! -xdf` leave alone), so a process that finds the state directory gone can
//! tell the person and the model that the session's evidence is gone and
//! which probes its ledger last knew. Without a `.git` directory there is no
//! note; long-lived processes still notice through their watch.

use serde::{Deserialize, Serialize};
use std::fs;
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

const FILE: &str = "debug-sidecar-session.json";
/// A note larger than this is not ours.
const MAX_BYTES: u64 = 64 * 1024;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Breadcrumb {
    pub session_id: String,
    /// The state directory the session lived in.
    pub state_dir: String,
    /// The probes the ledger last knew on disk or issued: `p1 src/a.py:3`.
    pub probes: Vec<String>,
}

/// Where the note lives: `<root>/.git/`, when that is a real directory.
fn location(root: &Path) -> Option<PathBuf> {
    let git = root.join(".git");
    fs::symlink_metadata(&git)
        .ok()
        .filter(|meta| meta.is_dir())
        .map(|_| git.join(FILE))
}

pub fn read(root: &Path) -> Option<Breadcrumb> {
    let file = fs::File::open(location(root)?).ok()?;
    let mut text = String::new();
    file.take(MAX_BYTES).read_to_string(&mut text).ok()?;
    serde_json::from_str(&text).ok()
}

/// Writes the note unless it already says this (atomically: temp, rename).
pub fn write(root: &Path, crumb: &Breadcrumb) -> io::Result<()> {
    let Some(path) = location(root) else {
        return Ok(());
    };
    if read(root).as_ref() == Some(crumb) {
        return Ok(());
    }
    let temp = path.with_extension(format!("{}.tmp", std::process::id()));
    let result = (|| {
        let mut file = fs::File::create(&temp)?;
        file.write_all(serde_json::to_string(crumb)?.as_bytes())?;
        fs::rename(&temp, &path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result
}

/// Removes the note when it names `session_id`.
pub fn clear(root: &Path, session_id: &str) {
    if read(root).is_some_and(|crumb| crumb.session_id == session_id) {
        if let Some(path) = location(root) {
            let _ = fs::remove_file(path);
        }
    }
}
