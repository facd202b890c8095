//! The reproduction's process: its two streams read and passed through, how
//! it ended, its group ended, and the person's terminal signals left to it.

use super::{now_ms, Event};
use crate::core::redact::{Redactor, LONGEST_ANCHOR};
use crate::core::reproduction::{Ending, Source};
use std::io::{self, Read, Write};
use std::process::Child;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};

pub(super) fn spawn_reader(
    child: &mut Child,
    source: Source,
    pass: bool,
    events: &mpsc::Sender<Event>,
    redactor: &Redactor,
    capped: &Arc<AtomicBool>,
) {
    let stream: Option<Box<dyn Read + Send>> = match source {
        Source::Stdout => child
            .stdout
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
        Source::Stderr => child
            .stderr
            .take()
            .map(|s| Box::new(s) as Box<dyn Read + Send>),
    };
    let Some(mut stream) = stream else {
        let _ = events.send(Event::Closed(source));
        return;
    };
    let events = events.clone();
    let redactor = redactor.clone();
    let capped = Arc::clone(capped);
    std::thread::spawn(move || {
        let mut buffer = vec![0u8; 64 * 1024];
        let mut passing = pass;
        // The end of the last chunk, so an anchor across two is seen.
        let mut seam: Vec<u8> = Vec::with_capacity(2 * LONGEST_ANCHOR);
        loop {
            let read = match stream.read(&mut buffer) {
                Ok(0) => break,
                Ok(read) => read,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            let chunk = &buffer[..read];
            if passing && pass_on(source, chunk).is_err() {
                // Our reader went away (`run -- cmd | head`): the program
                // learns it as it would have, from its closed pipe.
                passing = false;
                if source == Source::Stdout {
                    break;
                }
            }
            // Past the cap no line is recorded: the recorder checks the
            // few it keeps for the tail itself.
            let anchors =
                (!capped.load(Ordering::Relaxed)).then(|| anchors_of(&redactor, chunk, &mut seam));
            if events
                .send(Event::Bytes(source, chunk.to_vec(), now_ms(), anchors))
                .is_err()
            {
                break;
            }
        }
        let _ = events.send(Event::Closed(source));
    });
}

/// Where in `chunk` a secret's anchor ends, for the recorder to redact only
/// the lines holding one (here, on the reader's own thread); `seam` keeps
/// the stream's last bytes, so an anchor across chunks is seen.
fn anchors_of(redactor: &Redactor, chunk: &[u8], seam: &mut Vec<u8>) -> Vec<usize> {
    let seam_end = chunk.len().min(LONGEST_ANCHOR);
    seam.extend_from_slice(&chunk[..seam_end]);
    let mut anchors = redactor.anchors_in(chunk);
    if redactor.may_hold_secret(seam) {
        // Across the two chunks: the line at the seam holds it.
        anchors.insert(0, 0);
    }
    // The stream's last bytes, however small the chunks: an anchor may be
    // split across three reads or more.
    seam.truncate(seam.len() - seam_end);
    if chunk.len() >= LONGEST_ANCHOR {
        seam.clear();
    }
    seam.extend_from_slice(&chunk[chunk.len().saturating_sub(LONGEST_ANCHOR)..]);
    let keep = seam.len().saturating_sub(LONGEST_ANCHOR);
    seam.drain(..keep);
    anchors
}

fn pass_on(source: Source, chunk: &[u8]) -> io::Result<()> {
    match source {
        Source::Stdout => {
            let mut out = io::stdout().lock();
            out.write_all(chunk)?;
            out.flush()
        }
        Source::Stderr => {
            let mut out = io::stderr().lock();
            out.write_all(chunk)?;
            out.flush()
        }
    }
}

pub(super) fn ending_of(status: std::process::ExitStatus) -> Ending {
    if let Some(code) = status.code() {
        return Ending::Exited { code };
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return Ending::Signalled { signal };
        }
    }
    Ending::Exited { code: 1 }
}

pub(super) fn kill_group(pid: u32) {
    #[cfg(unix)]
    // SAFETY: kill(2) with a negative pid signals the process group the
    // child leads (it was spawned with `process_group(0)`); no memory is
    // touched.
    unsafe {
        libc::kill(-(pid as i32), libc::SIGKILL);
    }
    #[cfg(not(unix))]
    let _ = pid;
}

/// While the person's program runs in their terminal, Ctrl-C and Ctrl-\
/// are its to handle (the terminal sends them to both): `run` outlives them
/// and writes the exit record. Restored when dropped. The child was
/// spawned before this, so it keeps the default handling.
pub(super) struct PersonSignals;

impl PersonSignals {
    pub(super) fn ignore() -> Self {
        #[cfg(unix)]
        // SAFETY: setting a signal's disposition to ignore touches no memory.
        unsafe {
            libc::signal(libc::SIGINT, libc::SIG_IGN);
            libc::signal(libc::SIGQUIT, libc::SIG_IGN);
        }
        PersonSignals
    }
}

impl Drop for PersonSignals {
    fn drop(&mut self) {
        #[cfg(unix)]
        // SAFETY: as above, restoring the default disposition.
        unsafe {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            libc::signal(libc::SIGQUIT, libc::SIG_DFL);
        }
    }
}
