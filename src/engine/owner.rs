//! The owner: the one place the engine lives in a process. Faces run a job
//! on it synchronously when a message arrives (before any `.await`), so
//! commands apply in arrival order, one at a time. After every job the owner
//! publishes the engine's changes, in order, and hands deferred probe scans
//! to a scanner thread, which walks the workspace without holding the engine
//! and commits the result as a job of its own. A heartbeat thread ticks the
//! progress bubbles.
//!
//! Jobs run on the caller's thread under a lock rather than on a thread of
//! their own: a request then costs no thread hop, which measured as most of
//! its round trip.

use super::{Change, Engine, ScanRequest};

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::mpsc as async_mpsc;

/// How often running turns' progress bubbles are refreshed or retired.
pub const TICK: Duration = Duration::from_secs(5);

struct Inner {
    engine: Engine,
    changes: async_mpsc::UnboundedSender<Change>,
    scanner: mpsc::Sender<ScanRequest>,
    /// Added to the wall clock for every job: the clock seam, moved only by
    /// the test hooks (`advance_clock`), so timing rules are tested without
    /// waiting.
    clock_offset: u64,
}

/// A handle to the owner; cheap to clone.
#[derive(Clone)]
pub struct Owner {
    inner: Arc<Mutex<Inner>>,
}

/// The job panicked: an engine bug, already logged.
#[derive(Debug, thiserror::Error)]
#[error("the engine failed while handling this request: {0}")]
pub struct JobFailed(pub String);

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Owner {
    /// Take ownership of the engine. Changes go to `changes` in the order
    /// they happened.
    pub fn spawn(engine: Engine, changes: async_mpsc::UnboundedSender<Change>) -> Owner {
        let (scanner, scan_requests) = mpsc::channel();
        let owner = Owner {
            inner: Arc::new(Mutex::new(Inner {
                engine,
                changes,
                scanner,
                clock_offset: 0,
            })),
        };
        spawn_scanner(Arc::downgrade(&owner.inner), scan_requests);
        spawn_heartbeat(Arc::downgrade(&owner.inner));
        owner
    }

    /// Run a job on the engine now and return its answer.
    pub fn ask<T>(&self, job: impl FnOnce(&mut Engine, u64) -> T) -> Result<T, JobFailed> {
        run(&self.inner, job)
    }

    /// Moves this process's clock `ms` forward and runs the heartbeat at
    /// once (the test hooks' clock); answers the new time.
    pub fn advance_clock(&self, ms: u64) -> Result<u64, JobFailed> {
        {
            let mut inner = lock(&self.inner);
            inner.clock_offset = inner.clock_offset.saturating_add(ms);
        }
        self.ask(|engine, now| {
            engine.tick(now);
            now
        })
    }

    /// Run a job whose answer nobody waits for.
    pub fn tell(&self, job: impl FnOnce(&mut Engine, u64)) {
        let _ = run(&self.inner, job);
    }
}

fn lock(inner: &Mutex<Inner>) -> MutexGuard<'_, Inner> {
    // A job that panicked left the engine as it was between commands (every
    // command is applied as a whole or not at all), so the lock stays usable.
    inner
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

fn run<T>(inner: &Mutex<Inner>, job: impl FnOnce(&mut Engine, u64) -> T) -> Result<T, JobFailed> {
    let mut inner = lock(inner);
    let now = now_ms().saturating_add(inner.clock_offset);
    let answer = catch_unwind(AssertUnwindSafe(|| job(&mut inner.engine, now))).map_err(|panic| {
        let message = panic_message(&*panic);
        tracing::error!("engine job panicked: {message}");
        JobFailed(message)
    });
    for change in inner.engine.take_changes() {
        let _ = inner.changes.send(change);
    }
    for request in inner.engine.take_scan_requests() {
        let _ = inner.scanner.send(request);
    }
    answer
}

/// Runs probe scans off the owner; requests queued while one runs are
/// merged, one scan per session.
fn spawn_scanner(owner: Weak<Mutex<Inner>>, requests: mpsc::Receiver<ScanRequest>) {
    let spawned = thread::Builder::new()
        .name("debug-sidecar-scanner".into())
        .spawn(move || {
            while let Ok(first) = requests.recv() {
                let mut batch: Vec<ScanRequest> = vec![first];
                for request in requests.try_iter() {
                    if !batch.contains(&request) {
                        batch.push(request);
                    }
                }
                for request in batch {
                    let outcome = request.run();
                    let Some(owner) = owner.upgrade() else {
                        return;
                    };
                    let _ = run(&owner, |engine, now| {
                        if let Err(error) = engine.commit_scan(&request.session_id, outcome, now) {
                            tracing::warn!("a probe scan could not be applied: {error}");
                        }
                    });
                }
            }
        });
    if let Err(error) = spawned {
        tracing::error!("could not start the scanner thread: {error}");
    }
}

fn spawn_heartbeat(owner: Weak<Mutex<Inner>>) {
    let spawned = thread::Builder::new()
        .name("debug-sidecar-heartbeat".into())
        .spawn(move || loop {
            thread::sleep(TICK);
            let Some(owner) = owner.upgrade() else {
                return;
            };
            let _ = run(&owner, |engine, now| engine.tick(now));
        });
    if let Err(error) = spawned {
        tracing::error!("could not start the heartbeat thread: {error}");
    }
}

pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}
