//! The person's settings files in the state directory (`redaction.json`,
//! `targets.json`): read only when they are this user's own, not writable
//! by others, and did not come with a state directory committed to git, so
//! a repository cannot change what the sidecar redacts or where it listens
//! for the person who clones it.

use std::io::Read;
use std::path::Path;

/// The largest settings file read.
const MAX_SETTINGS: u64 = 256 * 1024;

/// The text of `<state dir>/<name>` when it may be trusted; `None` when
/// there is none or it is not trusted (said on stderr).
pub fn read_trusted(root: &Path, state_dir: &Path, name: &str) -> Option<String> {
    let file = state_dir.join(name);
    let handle = crate::workspace::runlog::open_own(&file).ok()?;
    if !owned_by_this_user(&handle) {
        tracing::warn!("{} is not this user's own: not read", file.display());
        return None;
    }
    if crate::workspace::committed::tracked_files(root, state_dir).1 > 0 {
        tracing::warn!(
            "{} came with a committed state directory: not read",
            file.display()
        );
        return None;
    }
    let mut text = String::new();
    handle.take(MAX_SETTINGS).read_to_string(&mut text).ok()?;
    Some(text)
}

fn owned_by_this_user(handle: &std::fs::File) -> bool {
    let Ok(meta) = handle.metadata() else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if meta.uid() != rustix::process::geteuid().as_raw() || meta.mode() & 0o022 != 0 {
            return false;
        }
    }
    true
}
