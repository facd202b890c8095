//! stdin and stdout for the server without tokio's per-call blocking pool:
//! tokio's `Stdin` and `Stdout` hand every read and write to a pool thread,
//! which cost more than the rest of a request's round trip.
//!
//! When they are pipes or stream sockets (an editor or harness spawned us;
//! Node's `child_process` gives socket pairs), they are read and written as
//! non-blocking descriptors on the server's own thread. Otherwise (a
//! terminal, a file) one thread reads stdin into a channel and stdout is
//! written in place, leaving the descriptors' modes alone. Either way a
//! frame leaves in one write: a reader never sees a header without its body
//! because the writer stopped between them.

/// stdin as the server reads it.
pub fn input() -> io::Result<Box<dyn AsyncRead + Unpin + Send>> {
    #[cfg(unix)]
    {
        use std::os::fd::AsFd;
        let fd = io::stdin().as_fd().try_clone_to_owned()?;
        if let Some(socket) = stream_socket(&fd) {
            return Ok(Box::new(socket));
        }
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
        if let Some(socket) = stream_socket(&fd) {
            return Ok(Box::new(socket));
        }
        if let Ok(pipe) = tokio::net::unix::pipe::Sender::from_owned_fd(fd) {
            return Ok(Box::new(pipe));
        }
    }
    Ok(Box::new(DirectStdout::new()?))
}

/// `fd` as a non-blocking stream socket, when it is one (a copy of it: the
/// process's own descriptor stays open for anything else that uses it).
#[cfg(unix)]
fn stream_socket(fd: &std::os::fd::OwnedFd) -> Option<tokio::net::UnixStream> {
    let kind = rustix::net::sockopt::socket_type(fd).ok()?;
    if kind != rustix::net::SocketType::STREAM {
        return None;
    }
    let socket = std::os::unix::net::UnixStream::from(fd.try_clone().ok()?);
    socket.set_nonblocking(true).ok()?;
    tokio::net::UnixStream::from_std(socket).ok()
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

/// stdout written in place: what the server writes is kept until it
/// flushes, then written whole to the descriptor itself (std's `Stdout`
/// would write a frame's header at its line break and the body after it).
pub struct DirectStdout {
    out: std::fs::File,
    pending: Vec<u8>,
}

impl DirectStdout {
    pub fn new() -> io::Result<Self> {
        #[cfg(unix)]
        let out = {
            use std::os::fd::AsFd;
            std::fs::File::from(io::stdout().as_fd().try_clone_to_owned()?)
        };
        #[cfg(windows)]
        let out = {
            use std::os::windows::io::AsHandle;
            std::fs::File::from(io::stdout().as_handle().try_clone_to_owned()?)
        };
        Ok(DirectStdout {
            out,
            pending: Vec::new(),
        })
    }

    fn write_pending(&mut self) -> io::Result<()> {
        let pending = std::mem::take(&mut self.pending);
        self.out.write_all(&pending)
    }
}

impl AsyncWrite for DirectStdout {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().pending.extend_from_slice(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.get_mut().write_pending())
    }

    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(self.get_mut().write_pending())
    }
}
