//! The `serve` face: protocol v1 as LSP-framed JSON-RPC over stdio
//! (DESIGN section 8) on tower-lsp-server. stdin is re-framed by `framing`,
//! every call passes through `guard`, and `server` maps methods to the
//! engine, which runs on its own owner thread.

pub mod client;
pub mod errors;
pub mod framing;
pub mod guard;
pub mod handlers;
pub mod server;
pub mod stdio;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use tokio::io::{AsyncRead, AsyncWrite};
use tower_lsp_server::Server;

/// How big the pipe between the framing task and the server is.
const PIPE_BYTES: usize = 1 << 20;

/// Serve one client until `exit` or the end of input. Returns the process
/// exit code: 0 when `shutdown` came before `exit`, 1 otherwise.
pub async fn serve<I, O>(input: I, output: O, max_body: usize) -> i32
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let (service, socket, shutdown_seen) = server::build();
    let exit_seen = Arc::new(AtomicBool::new(false));
    let (server_input, reframed) = tokio::io::duplex(PIPE_BYTES);
    tokio::spawn(async move {
        if let Err(error) = framing::reframe(input, reframed, max_body).await {
            tracing::warn!("stopped reading input: {error}");
        }
    });
    Server::new(server_input, output, socket)
        .serve(guard::Guard::new(service, exit_seen.clone()))
        .await;
    let clean = shutdown_seen.load(Ordering::SeqCst) && exit_seen.load(Ordering::SeqCst);
    tracing::info!(
        "stopped ({})",
        if clean {
            "shutdown, exit"
        } else {
            "no shutdown"
        }
    );
    i32::from(!clean)
}

/// `debug-sidecar serve`: stdin and stdout of this process.
pub fn serve_stdio() -> anyhow::Result<i32> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    // The pipes register with the runtime's reactor, so they are made inside it.
    let _context = runtime.enter();
    let (input, output) = (stdio::input()?, stdio::output()?);
    Ok(runtime.block_on(serve(input, output, framing::MAX_BODY)))
}
