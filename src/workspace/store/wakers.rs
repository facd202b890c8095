//! The wakers of a workspace: the processes that can start the agent's turn
//! in their host (DESIGN section 9), one small file each under `wakers/`,
//! removed when the process ends. A person's command reads the list to say
//! at once who will wake the agent, or that nobody can; a file whose
//! process is gone is stale and removed.

use super::files::{is_link, read_own, replace_file};
use crate::core::host::Host;
use serde::{Deserialize, Serialize};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

pub const WAKERS_DIR: &str = "wakers";

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Entry {
    host: String,
    pid: u32,
}

/// A registration; the file goes when this is dropped.
#[derive(Debug)]
pub struct WakerLease {
    path: PathBuf,
}

impl Drop for WakerLease {
    fn drop(&mut self) {
        let _ = fs::remove_file(&self.path);
    }
}

/// Registers this process as a waker for `host` in the state directory
/// `state_dir`, which must already exist (a waker never makes one: a host
/// that merely runs in a folder leaves nothing there).
pub fn register(state_dir: &Path, host: Host) -> io::Result<WakerLease> {
    if !state_dir.is_dir() || is_link(state_dir) {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            "no state directory yet",
        ));
    }
    let dir = state_dir.join(WAKERS_DIR);
    if is_link(&dir) {
        return Err(io::Error::other("the wakers directory is a symlink"));
    }
    match fs::create_dir(&dir) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
        Err(e) => return Err(e),
    }
    let pid = std::process::id();
    let entry = Entry {
        host: host.slug().to_string(),
        pid,
    };
    let path = dir.join(format!("{pid}.json"));
    let bytes = serde_json::to_vec(&entry).map_err(io::Error::other)?;
    replace_file(&path, &bytes, false)?;
    Ok(WakerLease { path })
}

/// The hosts of the live wakers, without repeats; stale files are removed.
pub fn live(state_dir: &Path) -> Vec<Host> {
    let dir = state_dir.join(WAKERS_DIR);
    if is_link(&dir) {
        return Vec::new();
    }
    let Ok(entries) = fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut hosts = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "json") {
            continue;
        }
        let parsed = read_own(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<Entry>(&bytes).ok());
        let Some(found) = parsed else {
            continue;
        };
        if !alive(found.pid) {
            let _ = fs::remove_file(&path);
            continue;
        }
        if let Some(host) = Host::of_slug(&found.host) {
            if !hosts.contains(&host) {
                hosts.push(host);
            }
        }
    }
    hosts
}

#[cfg(unix)]
fn alive(pid: u32) -> bool {
    let Some(pid) = i32::try_from(pid)
        .ok()
        .and_then(rustix::process::Pid::from_raw)
    else {
        return false;
    };
    match rustix::process::test_kill_process(pid) {
        Ok(()) => true,
        Err(error) => error == rustix::io::Errno::PERM,
    }
}

#[cfg(not(unix))]
fn alive(_pid: u32) -> bool {
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waker_is_listed_while_it_lives() {
        let dir = tempfile_dir();
        assert!(register(&dir.join("missing"), Host::Pi).is_err());
        let lease = register(&dir, Host::Pi).unwrap();
        assert_eq!(live(&dir), vec![Host::Pi]);
        // A process that is gone is stale.
        let stale = dir.join(WAKERS_DIR).join("999999999.json");
        fs::write(&stale, r#"{"host":"claude-code","pid":999999999}"#).unwrap();
        fs::write(dir.join(WAKERS_DIR).join("junk.json"), "{").unwrap();
        assert_eq!(live(&dir), vec![Host::Pi]);
        assert!(!stale.exists());
        drop(lease);
        assert_eq!(live(&dir), Vec::<Host>::new());
        let _ = fs::remove_dir_all(&dir);
    }

    fn tempfile_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "debug-sidecar-wakers-{}-{}",
            std::process::id(),
            super::super::now_stamp()
        ));
        fs::create_dir_all(&dir).unwrap();
        dir
    }
}
