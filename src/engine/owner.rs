//! The owner: one thread that holds the engine and runs jobs one at a time in
//! the order they were queued. Faces queue a job synchronously when a message
//! arrives (before any `.await`), so commands apply in arrival order. After
//! every job the owner publishes the engine's changes and hands deferred
//! probe scans to a scanner thread, whose results come back as jobs.

use super::{Change, Engine, ScanRequest};
use crate::workspace::scan::{self, ScanOutcome};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use tokio::sync::{mpsc as async_mpsc, oneshot};

/// How often running turns' progress bubbles are refreshed or retired.
pub const TICK: Duration = Duration::from_secs(5);

type Job = Box<dyn FnOnce(&mut Engine, u64) + Send>;

enum Message {
    Job(Job),
    Scanned(ScanRequest, ScanOutcome),
}

/// A handle to the owner thread; cheap to clone.
#[derive(Clone)]
pub struct Owner {
    jobs: mpsc::Sender<Message>,
}

/// The owner is gone, or the job panicked (an engine bug, already logged).
#[derive(Debug, thiserror::Error)]
#[error("the engine failed while handling this request: {0}")]
pub struct JobFailed(pub String);

pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

impl Owner {
    /// Start the owner thread. Changes go to `changes` in the order they happened.
    pub fn spawn(engine: Engine, changes: async_mpsc::UnboundedSender<Change>) -> Owner {
        let (jobs, inbox) = mpsc::channel::<Message>();
        let scanner = spawn_scanner(jobs.clone());
        thread::Builder::new()
            .name("debug-sidecar-owner".into())
            .spawn(move || run(engine, inbox, scanner, changes))
            .map_or_else(
                |error| {
                    // Without a thread every job fails with a clear error.
                    tracing::error!("could not start the engine thread: {error}");
                },
                |_| (),
            );
        Owner { jobs }
    }

    /// Queue a job now and return where its answer will arrive.
    pub fn ask<T, F>(&self, job: F) -> impl std::future::Future<Output = Result<T, JobFailed>>
    where
        T: Send + 'static,
        F: FnOnce(&mut Engine, u64) -> T + Send + 'static,
    {
        let (reply, answer) = oneshot::channel();
        let queued = self.jobs.send(Message::Job(Box::new(move |engine, now| {
            let _ = reply.send(job(engine, now));
        })));
        async move {
            if queued.is_err() {
                return Err(JobFailed("the engine thread has stopped".into()));
            }
            answer
                .await
                .map_err(|_| JobFailed("the engine panicked; see the server log".into()))
        }
    }

    /// Queue a job whose answer nobody waits for.
    pub fn tell<F>(&self, job: F)
    where
        F: FnOnce(&mut Engine, u64) + Send + 'static,
    {
        if self.jobs.send(Message::Job(Box::new(job))).is_err() {
            tracing::error!("the engine thread has stopped; an event was dropped");
        }
    }
}

fn run(
    mut engine: Engine,
    inbox: mpsc::Receiver<Message>,
    scanner: mpsc::Sender<ScanRequest>,
    changes: async_mpsc::UnboundedSender<Change>,
) {
    let mut next_tick = now_ms() + TICK.as_millis() as u64;
    loop {
        let wait = Duration::from_millis(next_tick.saturating_sub(now_ms()));
        let job: Job = match inbox.recv_timeout(wait) {
            Ok(Message::Job(job)) => job,
            Ok(Message::Scanned(request, outcome)) => Box::new(move |engine, now| {
                if let Err(error) = engine.commit_scan(&request.session_id, outcome, now) {
                    tracing::warn!("a probe scan could not be applied: {error}");
                }
            }),
            Err(RecvTimeoutError::Timeout) => {
                next_tick = now_ms() + TICK.as_millis() as u64;
                Box::new(|engine, now| engine.tick(now))
            }
            Err(RecvTimeoutError::Disconnected) => return,
        };
        let now = now_ms();
        // A panic is an engine bug: the job's caller hears of it (its reply
        // is dropped), the thread lives on for every other caller.
        if let Err(panic) = catch_unwind(AssertUnwindSafe(|| job(&mut engine, now))) {
            tracing::error!("engine job panicked: {}", panic_message(&*panic));
        }
        for change in engine.take_changes() {
            let _ = changes.send(change);
        }
        for request in engine.take_scan_requests() {
            let _ = scanner.send(request);
        }
    }
}

/// Runs probe scans off the owner; requests queued while one runs are merged,
/// one scan per session.
fn spawn_scanner(owner: mpsc::Sender<Message>) -> mpsc::Sender<ScanRequest> {
    let (requests, inbox) = mpsc::channel::<ScanRequest>();
    let spawned = thread::Builder::new()
        .name("debug-sidecar-scanner".into())
        .spawn(move || {
            while let Ok(first) = inbox.recv() {
                let mut batch = vec![first];
                batch.extend(inbox.try_iter());
                batch.dedup_by(|a, b| a == b);
                let mut seen = Vec::new();
                for request in batch {
                    if seen.contains(&request) {
                        continue;
                    }
                    seen.push(request.clone());
                    let outcome = scan::scan_workspace(&request.root, &request.tag);
                    if owner.send(Message::Scanned(request, outcome)).is_err() {
                        return;
                    }
                }
            }
        });
    if let Err(error) = spawned {
        tracing::error!("could not start the scanner thread: {error}");
    }
    requests
}

pub fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}
