//! The MCP face's input, held to the bounds `serve` holds its frames to
//! (`core::message_shape`). rmcp's stdio transport reads any line whole and
//! parses it into JSON values, so a 20 MiB line or a request nested 200
//! deep went unanswered and 8 MiB of tiny objects cost over a gigabyte.
//! Lines pass through here first: a good one goes on to rmcp unchanged, a
//! refused one is answered here (`-32600`, with its id when it can be
//! read) and never reaches rmcp. One writer puts rmcp's messages and these
//! answers on stdout, a whole line at a time.

use crate::core::message_shape::{self, MAX_MESSAGE};
use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// JSON-RPC's "Invalid Request", as `serve` answers a refused frame.
const INVALID_REQUEST: i64 = -32600;
/// The pipes between this module and rmcp.
const PIPE: usize = 64 * 1024;

/// The transport to give rmcp (what it reads, what it writes), and the
/// task that writes stdout: awaited after rmcp ends, so every answer is out.
pub fn stdio() -> (
    (tokio::io::DuplexStream, tokio::io::DuplexStream),
    tokio::task::JoinHandle<()>,
) {
    let (to_rmcp, rmcp_reads) = tokio::io::duplex(PIPE);
    let (rmcp_writes, from_rmcp) = tokio::io::duplex(PIPE);
    let (answers, refused) = mpsc::unbounded_channel();
    tokio::spawn(read_input(tokio::io::stdin(), to_rmcp, answers));
    let writer = tokio::spawn(write_output(from_rmcp, refused, tokio::io::stdout()));
    ((rmcp_reads, rmcp_writes), writer)
}

/// One line as it arrives: at most `MAX_MESSAGE` bytes kept, and how long
/// it really was.
#[derive(Default)]
struct Line {
    kept: Vec<u8>,
    len: usize,
}

impl Line {
    fn take(&mut self, bytes: &[u8]) {
        self.len += bytes.len();
        let room = MAX_MESSAGE.saturating_sub(self.kept.len());
        self.kept.extend_from_slice(&bytes[..bytes.len().min(room)]);
    }
}

/// The refusal for a line, or None to pass it on.
fn judge(line: &Line) -> Option<Value> {
    let (id, why) = message_shape::refusal(&line.kept, line.len)?;
    Some(json!({"jsonrpc": "2.0", "id": id, "error": {"code": INVALID_REQUEST, "message": why}}))
}

/// Splits `input` into lines; passes good ones to rmcp, sends the answer
/// for each refused one to the writer. Ends (closing rmcp's input) at the
/// end of `input` or when rmcp stops reading.
async fn read_input(
    mut input: impl AsyncRead + Unpin,
    mut to_rmcp: impl AsyncWrite + Unpin,
    answers: mpsc::UnboundedSender<Value>,
) {
    let mut chunk = vec![0u8; PIPE];
    let mut line = Line::default();
    loop {
        let read = match input.read(&mut chunk).await {
            Ok(0) | Err(_) => break,
            Ok(read) => read,
        };
        let mut rest = &chunk[..read];
        while let Some(at) = memchr::memchr(b'\n', rest) {
            line.take(&rest[..at]);
            rest = &rest[at + 1..];
            if !pass(std::mem::take(&mut line), &mut to_rmcp, &answers).await {
                return;
            }
        }
        line.take(rest);
    }
    if line.len > 0 {
        pass(line, &mut to_rmcp, &answers).await;
    }
}

/// Passes one line on or answers it; false once rmcp reads no more.
async fn pass(
    mut line: Line,
    to_rmcp: &mut (impl AsyncWrite + Unpin),
    answers: &mpsc::UnboundedSender<Value>,
) -> bool {
    if let Some(answer) = judge(&line) {
        tracing::warn!(
            "mcp: a message refused before parsing: {}",
            answer["error"]["message"]
        );
        return answers.send(answer).is_ok();
    }
    line.kept.push(b'\n');
    to_rmcp.write_all(&line.kept).await.is_ok()
}

/// Writes rmcp's lines and the refusals to `output`, each whole, until
/// rmcp's output ends and no refusal can come.
async fn write_output(
    from_rmcp: impl AsyncRead + Unpin,
    mut refused: mpsc::UnboundedReceiver<Value>,
    mut output: impl AsyncWrite + Unpin,
) {
    let mut from_rmcp = BufReader::new(from_rmcp);
    let mut line = Vec::new();
    let (mut rmcp_open, mut refusals_open) = (true, true);
    while rmcp_open || refusals_open {
        line.clear();
        tokio::select! {
            read = from_rmcp.read_until(b'\n', &mut line), if rmcp_open => match read {
                Ok(0) | Err(_) => rmcp_open = false,
                Ok(_) => {
                    if output.write_all(&line).await.is_err() {
                        return;
                    }
                }
            },
            answer = refused.recv(), if refusals_open => match answer {
                None => refusals_open = false,
                Some(answer) => {
                    let mut text = answer.to_string().into_bytes();
                    text.push(b'\n');
                    if output.write_all(&text).await.is_err() {
                        return;
                    }
                }
            },
        }
        if output.flush().await.is_err() {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judged(text: &[u8]) -> Option<Value> {
        let mut line = Line::default();
        line.take(text);
        judge(&line)
    }

    #[test]
    fn refusals_carry_the_id_and_good_lines_pass() {
        assert_eq!(judged(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), None);
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{}1{}}}"#,
            "[".repeat(200),
            "]".repeat(200)
        );
        let refused = judged(deep.as_bytes()).expect("too deep");
        assert_eq!(refused["id"], "a");
        assert_eq!(refused["error"]["code"], INVALID_REQUEST);
        let tiny = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"m","params":[{}{{}}]}}"#,
            "{},".repeat(200_000)
        );
        assert_eq!(judged(tiny.as_bytes()).expect("too many objects")["id"], 7);
        let mut long = Line::default();
        long.take(br#"{"jsonrpc":"2.0","id":9,"method":"m","params":{"x":""#);
        for _ in 0..(MAX_MESSAGE / 4096 + 1) {
            long.take(&[b'x'; 4096]);
        }
        assert!(long.kept.len() <= MAX_MESSAGE);
        let refused = judge(&long).expect("too long");
        assert_eq!(refused["id"], 9);
        assert!(refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("exceeds the limit"));
    }

    #[tokio::test]
    async fn lines_split_anywhere_pass_whole_and_refusals_are_answered() {
        let deep = format!(r#"{{"id":2,"p":{}{}}}"#, "[".repeat(100), "]".repeat(100));
        let input = format!("{{\"id\":1}}\n{deep}\n{{\"id\":3}}");
        let (mut to_sidecar, sidecar_reads) = tokio::io::duplex(16);
        let (rmcp_writes, mut rmcp_reads) = tokio::io::duplex(1 << 16);
        let (answers, mut refused) = mpsc::unbounded_channel();
        let reader = tokio::spawn(read_input(sidecar_reads, rmcp_writes, answers));
        for piece in input.as_bytes().chunks(5) {
            to_sidecar.write_all(piece).await.unwrap();
        }
        drop(to_sidecar);
        reader.await.unwrap();
        let mut passed = String::new();
        rmcp_reads.read_to_string(&mut passed).await.unwrap();
        assert_eq!(passed, "{\"id\":1}\n{\"id\":3}\n");
        assert_eq!(refused.recv().await.unwrap()["id"], 2);
        assert!(refused.recv().await.is_none());
    }
}
