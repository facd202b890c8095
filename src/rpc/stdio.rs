//! stdin and stdout for the server without tokio's per-call blocking pool:
//! tokio's `Stdin` and `Stdout` hand every read and write to a pool thread,
//! which cost more than the rest of a request's round trip.
//!
//! When they are pipes (an editor or harness spawned us), they are read and
//! written as non-blocking pipes on the server's own thread. Otherwise (a
//! terminal, a file) one thread reads stdin into a channel and stdout is
//! written in place, leaving the descriptors' modes alone.

/// stdin as the server reads it.
pub fn input() -> io::Result<Box<dyn AsyncRead + Unpin + Send>> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let fd = io::stdin().as_fd().try_clone_to_owned()?;
        if let Ok(pipe) = tokio::net::unix::pipe::Receiver::from_owned_fd(fd) {
            return Ok(Box::new(pipe));
        }
    }
    Ok(Box::new(ThreadedStdin::spawn()?))
}

/// stdout as the server writes it.
pub fn output() -> io::Result<Box<dyn AsyncWrite + Unpin + Send>> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let fd = io::stdout().as_fd().try_clone_to_owned()?;
        if let Ok(pipe) = tokio::net::unix::pipe::Sender::from_owned_fd(fd) {
            return Ok(Box::new(pipe));
        }
    }
    Ok(Box::new(DirectStdout::new()))
}

use std::io::{self, Read, Write};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;

const CHUNK: usize = 64 * 1024;
/// Chunks read ahead of the server; bounds memory when the server is slower.
const READ_AHEAD: usize = 64;

/// stdin as an `AsyncRead`, fed by a reader thread.
pub struct ThreadedStdin {
    chunks: mpsc::Receiver<Vec<u8>>,
    pending: Vec<u8>,
    at: usize,
}

impl ThreadedStdin {
    pub fn spawn() -> io::Result<Self> {
        let (sender, chunks) = mpsc::channel(READ_AHEAD);
        std::thread::Builder::new()
            .name("debug-sidecar-stdin".into())
            .spawn(move || {
                let mut stdin = io::stdin().lock();
                let mut buffer = vec![0u8; CHUNK];
                loop {
                    match stdin.read(&mut buffer) {
                        Ok(0) => return,
                        Ok(read) => {
                            if sender.blocking_send(buffer[..read].to_vec()).is_err() {
                                return;
                            }
                        }
                        Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                        Err(error) => {
                            tracing::warn!("reading stdin failed: {error}");
                            return;
                        }
                    }
                }
            })?;
        Ok(ThreadedStdin {
            chunks,
            pending: Vec::new(),
            at: 0,
        })
    }
}

impl AsyncRead for ThreadedStdin {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        if self.at >= self.pending.len() {
            match self.chunks.poll_recv(cx) {
                Poll::Ready(Some(chunk)) => {
                    self.pending = chunk;
                    self.at = 0;
                }
                // The reader thread ended: end of input.
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Pending => return Poll::Pending,
            }
        }
        let this = &mut *self;
        let take = buf.remaining().min(this.pending.len() - this.at);
        buf.put_slice(&this.pending[this.at..this.at + take]);
        this.at += take;
        Poll::Ready(Ok(()))
    }
}

/// stdout written in place.
pub struct DirectStdout(io::Stdout);

impl DirectStdout {
    pub fn new() -> Self {
        DirectStdout(io::stdout())
    }
}

impl Default for DirectStdout {
    fn default() -> Self {
        Self::new()
    }
}

impl AsyncWrite for DirectStdout {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(self.get_mut().0.write(buf))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.get_mut().0.flush())
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.get_mut().0.flush())
    }
}
