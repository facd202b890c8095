//! Our own reading of the LSP base framing. tower-lsp-server's codec stops
//! reading at the first malformed frame and has no size limit, so stdin is
//! read here: well-formed messages are passed on to the server unchanged,
//! and each bad frame becomes one injected request that `guard` answers with
//! the error it describes. The process keeps serving either way.

use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tower_lsp_server::jsonrpc::{Request, Response};

/// The largest message body accepted (documented in `protocol/README.md`).
pub const MAX_BODY: usize = 8 * 1024 * 1024;
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
            id: if valid_id(&id) { id } else { Value::Null },
            code: super::errors::INVALID_REQUEST,
            message: message.into(),
        }
    }
}

/// A buffer that yields whole frames as bytes arrive: pure, so every framing
/// case is a unit test.
pub struct FrameReader {
    buffer: Vec<u8>,
    /// Where the unread bytes begin; consumed bytes are dropped in bulk.
    start: usize,
    max_body: usize,
    /// Bytes of an oversized body still to throw away.
    discard: usize,
    /// After a bad header: skip to the next `Content-Length`.
    resync: bool,
}

impl FrameReader {
    pub fn new(max_body: usize) -> Self {
        FrameReader {
            buffer: Vec::with_capacity(CHUNK),
            start: 0,
            max_body,
            discard: 0,
            resync: false,
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        let skipped = self.discard.min(bytes.len());
        self.discard -= skipped;
        if self.start > 0 && self.start * 2 >= self.buffer.len() {
            self.buffer.drain(..self.start);
            self.start = 0;
        }
        self.buffer.extend_from_slice(&bytes[skipped..]);
    }

    fn unread(&self) -> &[u8] {
        &self.buffer[self.start..]
    }

    fn consume(&mut self, count: usize) {
        self.start = (self.start + count).min(self.buffer.len());
        if self.start == self.buffer.len() {
            self.buffer.clear();
            self.start = 0;
        }
    }

    /// The next whole frame's body, a bad frame, or `None` for "need more bytes".
    pub fn next_frame(&mut self) -> Option<Result<Vec<u8>, BadFrame>> {
        if self.resync {
            match find_header_name(self.unread()) {
                Some(at) => {
                    self.consume(at);
                    self.resync = false;
                }
                None => {
                    // Keep a tail that may be the start of the header name.
                    let keep = b"Content-Length".len();
                    self.consume(self.unread().len().saturating_sub(keep));
                    return None;
                }
            }
        }
        let Some(header_end) = find(self.unread(), b"\r\n\r\n") else {
            if self.unread().len() > MAX_HEADER {
                self.consume(self.unread().len());
                self.resync = true;
                return Some(Err(BadFrame::parse(format!(
                    "header block longer than {MAX_HEADER} bytes"
                ))));
            }
            return None;
        };
        if header_end > MAX_HEADER {
            self.consume(header_end + 4);
            self.resync = true;
            return Some(Err(BadFrame::parse(format!(
                "header block longer than {MAX_HEADER} bytes"
            ))));
        }
        let header = String::from_utf8_lossy(&self.unread()[..header_end]).into_owned();
        let length = match content_length(&header) {
            Ok(length) => length,
            Err(message) => {
                self.consume(header_end + 4);
                self.resync = true;
                return Some(Err(BadFrame::parse(message)));
            }
        };
        if length > self.max_body {
            self.consume(header_end + 4);
            let here = length.min(self.unread().len());
            self.consume(here);
            self.discard = length - here;
            return Some(Err(BadFrame::invalid(
                Value::Null,
                format!(
                    "message body of {length} bytes exceeds the limit of {} bytes",
                    self.max_body
                ),
            )));
        }
        let body_start = header_end + 4;
        if self.unread().len() < body_start + length {
            return None;
        }
        let body = self.unread()[body_start..body_start + length].to_vec();
        self.consume(body_start + length);
        Some(check_body(body))
    }
}

fn content_length(header: &str) -> Result<usize, String> {
    let mut length = None;
    for line in header.split("\r\n") {
        let Some((name, value)) = line.split_once(':') else {
            return Err(format!("malformed header line {line:?}"));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            length = Some(
                value
                    .trim()
                    .parse::<usize>()
                    .map_err(|_| format!("bad Content-Length {:?}", value.trim()))?,
            );
        }
    }
    length.ok_or_else(|| "missing Content-Length header".to_string())
}

/// A body the server can take: UTF-8, JSON, one JSON-RPC 2.0 message that
/// tower-lsp-server itself will parse. It is parsed here with the server's
/// own types, because a body the server fails to parse ends its input
/// stream (an id that is not an i64, a lone surrogate, deep nesting).
fn check_body(body: Vec<u8>) -> Result<Vec<u8>, BadFrame> {
    let text = std::str::from_utf8(&body)
        .map_err(|e| BadFrame::parse(format!("message body is not UTF-8: {e}")))?;
    let value: Value = serde_json::from_str(text)
        .map_err(|e| BadFrame::parse(format!("message body is not JSON: {e}")))?;
    let Some(object) = value.as_object() else {
        let what = if value.is_array() {
            "batches are not supported"
        } else {
            "a message must be a JSON object"
        };
        return Err(BadFrame::invalid(Value::Null, what));
    };
    let id = object.get("id").cloned().unwrap_or(Value::Null);
    if object.get("jsonrpc") != Some(&json!("2.0")) {
        return Err(BadFrame::invalid(id, "`jsonrpc` must be \"2.0\""));
    }
    match object.get("method") {
        Some(Value::String(method)) if method == FRAME_ERROR_METHOD => {
            Err(BadFrame::invalid(id, "reserved method name"))
        }
        Some(Value::String(_)) => match serde_json::from_str::<Request>(text) {
            Ok(_) => Ok(body),
            Err(e) if !valid_id(&id) => Err(BadFrame::invalid(
                Value::Null,
                format!("`id` must be an integer, a string or null ({e})"),
            )),
            Err(e) => Err(BadFrame::invalid(
                id,
                format!("not a JSON-RPC 2.0 request: {e}"),
            )),
        },
        Some(_) => Err(BadFrame::invalid(id, "`method` must be a string")),
        // A response to a request of ours.
        None if object.contains_key("result") || object.contains_key("error") => {
            serde_json::from_str::<Response>(text)
                .map(|_| body)
                .map_err(|e| {
                    BadFrame::invalid(Value::Null, format!("not a JSON-RPC 2.0 response: {e}"))
                })
        }
        None => Err(BadFrame::invalid(id, "neither a request nor a response")),
    }
}

/// The ids the server's own types accept.
fn valid_id(id: &Value) -> bool {
    id.is_null() || id.is_string() || id.as_i64().is_some()
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

/// Where a `Content-Length` header begins, in any letter case.
fn find_header_name(haystack: &[u8]) -> Option<usize> {
    const NAME: &[u8] = b"content-length";
    haystack
        .windows(NAME.len())
        .position(|w| w.eq_ignore_ascii_case(NAME))
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &str) -> Vec<u8> {
        format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
    }

    fn frames(reader: &mut FrameReader) -> Vec<Result<String, BadFrame>> {
        std::iter::from_fn(|| reader.next_frame())
            .map(|r| r.map(|b| String::from_utf8(b).unwrap()))
            .collect()
    }

    const PING: &str = r#"{"jsonrpc":"2.0","id":1,"method":"debug/status"}"#;

    #[test]
    fn frames_split_across_reads_come_out_whole() {
        let mut reader = FrameReader::new(MAX_BODY);
        let bytes = [frame(PING), frame(PING)].concat();
        for byte in &bytes {
            reader.push(std::slice::from_ref(byte));
        }
        assert_eq!(frames(&mut reader), vec![Ok(PING.into()), Ok(PING.into())]);
    }

    #[test]
    fn each_bad_frame_is_reported_and_the_next_good_one_still_arrives() {
        let cases: Vec<(Vec<u8>, i64, &str)> = vec![
            (
                b"Content-Length: abc\r\n\r\n".to_vec(),
                -32700,
                "bad Content-Length",
            ),
            (
                b"Content-Type: x\r\n\r\n".to_vec(),
                -32700,
                "missing Content-Length",
            ),
            (frame("{not json"), -32700, "not JSON"),
            (
                [b"Content-Length: 2\r\n\r\n".as_slice(), &[0xff, 0xfe]].concat(),
                -32700,
                "not UTF-8",
            ),
            (frame("[1,2]"), -32600, "batches"),
            (
                frame(r#"{"jsonrpc":"1.0","id":3,"method":"x"}"#),
                -32600,
                "jsonrpc",
            ),
            (
                frame(r#"{"jsonrpc":"2.0","id":{},"method":"x"}"#),
                -32600,
                "`id`",
            ),
            (frame(r#"{"jsonrpc":"2.0","id":4}"#), -32600, "neither"),
            (
                frame(r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#),
                -32600,
                "`id`",
            ),
            (
                frame(r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"x"}"#),
                -32600,
                "`id`",
            ),
            (
                frame(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"a":"\ud800"}}"#),
                -32700,
                "not JSON",
            ),
        ];
        for (bad, code, words) in cases {
            let mut reader = FrameReader::new(MAX_BODY);
            reader.push(&bad);
            reader.push(&frame(PING));
            let out = frames(&mut reader);
            assert_eq!(out.len(), 2, "{words}: {out:?}");
            let error = out[0].clone().unwrap_err();
            assert_eq!(error.code, code, "{words}: {error:?}");
            assert!(error.message.contains(words), "{words}: {error:?}");
            assert_eq!(out[1], Ok(PING.into()), "{words}");
        }
    }

    #[test]
    fn every_forwarded_or_injected_frame_parses_as_a_server_message() {
        let nested = format!("{}1{}", "[".repeat(200), "]".repeat(200));
        let bodies = [
            r#"{"jsonrpc":"2.0","id":[1]}"#.to_string(),
            r#"{"jsonrpc":"1.0","id":{},"method":"x"}"#.to_string(),
            format!(r#"{{"jsonrpc":"2.0","id":2,"method":"x","params":{nested}}}"#),
            PING.to_string(),
        ];
        for body in bodies {
            let mut reader = FrameReader::new(MAX_BODY);
            reader.push(&frame(&body));
            let out = match reader.next_frame().unwrap() {
                Ok(forwarded) => forwarded,
                Err(bad) => json!({"jsonrpc": "2.0", "id": bad.id, "method": FRAME_ERROR_METHOD,
                                   "params": {"code": bad.code, "message": bad.message}})
                .to_string()
                .into_bytes(),
            };
            let text = String::from_utf8(out).unwrap();
            assert!(
                serde_json::from_str::<Request>(&text).is_ok()
                    || serde_json::from_str::<Response>(&text).is_ok(),
                "{body} became {text}, which the server cannot parse"
            );
        }
    }

    #[test]
    fn resync_finds_a_lowercase_header() {
        let mut reader = FrameReader::new(MAX_BODY);
        reader.push(b"Content-Length: x\r\n\r\ngarbage");
        reader.push(format!("content-length: {}\r\n\r\n{PING}", PING.len()).as_bytes());
        let out = frames(&mut reader);
        assert_eq!(out.len(), 2, "{out:?}");
        assert_eq!(out[1], Ok(PING.into()));
    }

    #[test]
    fn answers_to_our_requests_pass_even_with_a_null_result() {
        let mut reader = FrameReader::new(MAX_BODY);
        let answer = r#"{"jsonrpc":"2.0","id":1,"result":null}"#;
        reader.push(&frame(answer));
        assert_eq!(frames(&mut reader), vec![Ok(answer.into())]);
    }

    #[test]
    fn an_oversized_body_is_skipped_without_being_kept() {
        let mut reader = FrameReader::new(16);
        reader.push(b"Content-Length: 40\r\n\r\n0123456789");
        let error = reader.next_frame().unwrap().unwrap_err();
        assert_eq!(error.code, -32600);
        assert!(reader.next_frame().is_none());
        reader.push(&[b'x'; 30]);
        assert!(reader.unread().is_empty());
        reader.push(&frame("{}"));
        // 2 bytes fit; `{}` is not a message, so it is reported, not passed on.
        assert_eq!(reader.next_frame().unwrap().unwrap_err().code, -32600);
    }

    #[test]
    fn a_long_header_arriving_whole_is_refused_too() {
        let mut reader = FrameReader::new(MAX_BODY);
        let header = format!(
            "X-Pad: {}\r\nContent-Length: 2\r\n\r\n{{}}",
            "a".repeat(MAX_HEADER)
        );
        reader.push(header.as_bytes());
        reader.push(&frame(PING));
        let out = frames(&mut reader);
        assert_eq!(out[0].clone().unwrap_err().code, -32700);
        assert_eq!(out.last(), Some(&Ok(PING.into())));
    }

    #[test]
    fn a_runaway_header_is_cut_off() {
        let mut reader = FrameReader::new(MAX_BODY);
        reader.push(&vec![b'a'; MAX_HEADER + 1]);
        assert_eq!(reader.next_frame().unwrap().unwrap_err().code, -32700);
        reader.push(&frame(PING));
        assert_eq!(frames(&mut reader), vec![Ok(PING.into())]);
    }
}
