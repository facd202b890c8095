//! The session lock: an exclusive advisory lock on the session's `.lock`
//! file, waited for at most `LOCK_WAIT`.

use super::files::remove_stale_temps;
use super::{set_aside_unless, write_error, Expected, FileStore, StoreError, LOCK_FILE};
use std::fs::{self, File, OpenOptions};
use std::io;
use std::sync::atomic::{AtomicUsize, Ordering};

impl FileStore {
    /// The session's exclusive lock, held until the returned file is dropped.
    pub(super) fn lock(&mut self, session_id: &str) -> Result<File, StoreError> {
        let now = super::now_stamp();
        if let Some(unmendable) = self.mend_layout(session_id, now) {
            let dir = self.session_dir(session_id);
            let reason = unmendable.warning.unwrap_or_default();
            return Err(write_error(&dir)(io::Error::other(reason)));
        }
        let dir = self.prepare(session_id)?;
        let lock_path = dir.join(LOCK_FILE);
        // A lock that is not a file of ours (a directory, a link, a FIFO)
        // would refuse or block every command: moved aside, never followed.
        set_aside_unless(&lock_path, Expected::File, now).map_err(write_error(&lock_path))?;
        let lock = lock_options()
            .open(&lock_path)
            .map_err(write_error(&lock_path))?;
        wait_for_lock(&lock).map_err(write_error(&lock_path))?;
        remove_stale_temps(&dir);
        Ok(lock)
    }
}

/// The lock file, made when missing, never through a link, never waiting
/// for a reader (a FIFO put there).
fn lock_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.create(true).truncate(false).write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
        options.custom_flags(flags.bits() as i32);
    }
    options
}

/// How long a command waits for another process's hold on a session.
pub const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(10);

/// The session's lock, waiting at most `LOCK_WAIT`: a process stopped while
/// holding it (paused in a debugger, say) must not hang every hook.
///
/// A contended lock is waited for in the kernel, by a helper thread blocked
/// on a duplicate of the handle (the same open file, so the same lock).
/// Blocked waiters are woken when the lock is released and usually take it
/// first, where polling with growing pauses let busy writers take it again
/// and again before a sleeper looked.
fn wait_for_lock(file: &File) -> io::Result<()> {
    match file.try_lock() {
        Ok(()) => return Ok(()),
        Err(fs::TryLockError::WouldBlock) => {}
        Err(fs::TryLockError::Error(error)) => return Err(error),
    }
    let timed_out = || {
        io::Error::new(
            io::ErrorKind::TimedOut,
            format!(
                "another process has held this session for over {}s",
                LOCK_WAIT.as_secs()
            ),
        )
    };
    // A helper whose command gave up stays blocked until the holder lets go;
    // a holder stopped for hours must not collect them without bound.
    if BLOCKED_HELPERS.fetch_add(1, Ordering::SeqCst) >= MAX_BLOCKED_HELPERS {
        BLOCKED_HELPERS.fetch_sub(1, Ordering::SeqCst);
        return Err(timed_out());
    }
    let waiter = file.try_clone()?;
    let (taken, outcome) = std::sync::mpsc::channel();
    let spawned = std::thread::Builder::new()
        .name("debug-sidecar-lock".into())
        .spawn(move || {
            let result = waiter.lock();
            BLOCKED_HELPERS.fetch_sub(1, Ordering::SeqCst);
            // Close this handle first: the caller's own keeps the lock while
            // it waits, and if it gave up, this was the last one.
            drop(waiter);
            let _ = taken.send(result);
        });
    if let Err(error) = spawned {
        BLOCKED_HELPERS.fetch_sub(1, Ordering::SeqCst);
        return Err(error);
    }
    outcome
        .recv_timeout(LOCK_WAIT)
        .unwrap_or_else(|_| Err(timed_out()))
}

/// Helpers blocked on a session lock in this process, and their cap.
static BLOCKED_HELPERS: AtomicUsize = AtomicUsize::new(0);
const MAX_BLOCKED_HELPERS: usize = 16;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_contended_lock_is_taken_when_released_and_held_by_the_waiters_own_handle() {
        let dir = std::env::temp_dir().join(format!("ds-store-lock-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join(".lock");
        let open = || {
            OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(&path)
                .unwrap()
        };
        let holder = open();
        holder.lock().unwrap();
        let waiter = std::thread::spawn({
            let waiter_file = open();
            move || {
                wait_for_lock(&waiter_file).unwrap();
                waiter_file
            }
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        drop(holder);
        let waiter_file = waiter.join().unwrap();
        // The helper thread's handle is gone; the waiter's own still holds it.
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(matches!(
            open().try_lock(),
            Err(fs::TryLockError::WouldBlock)
        ));
        drop(waiter_file);
        assert!(
            open().try_lock().is_ok(),
            "released with the waiter's handle"
        );
        assert_eq!(BLOCKED_HELPERS.load(Ordering::SeqCst), 0);
        let _ = fs::remove_dir_all(&dir);
    }
}
