//! Our own reading of the LSP base framing. tower-lsp-server's codec stops
//! reading at the first malformed frame and has no size limit, so stdin is
//! read here: well-formed messages are passed on to the server unchanged,
//! and each bad frame becomes one injected request that `guard` answers with
//! the error it describes. The process keeps serving either way. A body is
//! judged without building its JSON tree, and one whose tree would cost far
//! more than its bytes (`shape`) is refused before the server parses it.

mod check;
mod reader;

pub use reader::FrameReader;

use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

/// The largest message body accepted (documented in `protocol/README.md`),
/// the same for every face.
pub const MAX_BODY: usize = crate::core::message_shape::MAX_MESSAGE;
/// The largest header block accepted.
pub const MAX_HEADER: usize = 8 * 1024;
/// The method of an injected frame error; never sent by a client.
pub const FRAME_ERROR_METHOD: &str = "$/debugSidecar/frameError";

const CHUNK: usize = 64 * 1024;

/// Copies frames from `input` to `output` until `input` ends.
pub async fn reframe<R, W>(mut input: R, mut output: W, max_body: usize) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut reader = FrameReader::new(max_body);
    let mut chunk = vec![0u8; CHUNK];
    loop {
        match reader.next_frame() {
            Some(Ok(body)) => forward(&mut output, &body).await?,
            Some(Err(bad)) => inject(&mut output, bad).await?,
            None => {
                let read = input.read(&mut chunk).await?;
                if read == 0 {
                    return Ok(());
                }
                reader.push(&chunk[..read]);
            }
        }
    }
}

/// What was wrong with a frame, as the JSON-RPC error to answer.
#[derive(Debug, Clone, PartialEq)]
pub struct BadFrame {
    pub id: Value,
    pub code: i64,
    pub message: String,
}

impl BadFrame {
    fn parse(message: impl Into<String>) -> Self {
        BadFrame {
            id: Value::Null,
            code: super::errors::PARSE_ERROR,
            message: message.into(),
        }
    }

    fn invalid(id: Value, message: impl Into<String>) -> Self {
        BadFrame {
            // Our answer must itself parse as a message: an id the server's
            // types refuse becomes null.
            id: if check::valid_id(&id) {
                id
            } else {
                Value::Null
            },
            code: super::errors::INVALID_REQUEST,
            message: message.into(),
        }
    }
}

async fn forward<W: AsyncWrite + Unpin>(output: &mut W, body: &[u8]) -> std::io::Result<()> {
    output
        .write_all(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes())
        .await?;
    output.write_all(body).await?;
    output.flush().await
}

async fn inject<W: AsyncWrite + Unpin>(output: &mut W, bad: BadFrame) -> std::io::Result<()> {
    tracing::warn!("bad frame ({}): {}", bad.code, bad.message);
    let body = json!({
        "jsonrpc": "2.0",
        "id": bad.id,
        "method": FRAME_ERROR_METHOD,
        "params": { "code": bad.code, "message": bad.message },
    });
    forward(output, body.to_string().as_bytes()).await
}
