//! The frame reader: header blocks, `Content-Length`, resync after a bad
//! header, and oversized bodies skipped without being kept.

use super::check::check_body;
use super::{BadFrame, CHUNK, MAX_HEADER};
use serde_json::Value;

/// A buffer that yields whole frames as bytes arrive: pure, so every framing
/// case is a unit test. What it yields depends only on the bytes, never on
/// how they were split into pushes: every decision waits until the bytes it
/// rests on are there.
pub struct FrameReader {
    buffer: Vec<u8>,
    /// Where the unread bytes begin; consumed bytes are dropped in bulk.
    start: usize,
    max_body: usize,
    max_header: usize,
    /// Bytes of an oversized body still to throw away.
    discard: usize,
    /// After a bad header: skip to the next `Content-Length`.
    resync: bool,
    /// The resync follows a header block too long to read: a
    /// `Content-Length` that begins a line (right after a CRLF) is a line of
    /// that same block, whose frame was answered already.
    runaway: bool,
    /// The frame now being read belongs to a header block already answered
    /// as refused: it is read past without a second answer.
    swallow: bool,
    /// How many unread bytes are known to hold no blank line, so a header
    /// arriving in small pieces is searched once, not once per piece.
    scanned: usize,
}

impl FrameReader {
    pub fn new(max_body: usize) -> Self {
        FrameReader {
            buffer: Vec::with_capacity(CHUNK),
            start: 0,
            max_body,
            max_header: MAX_HEADER,
            discard: 0,
            resync: false,
            runaway: false,
            swallow: false,
            scanned: 0,
        }
    }

    /// A reader with a smaller header limit, so tests can try every split.
    #[cfg(test)]
    pub fn with_max_header(mut self, max_header: usize) -> Self {
        self.max_header = max_header;
        self
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
        self.scanned = self.scanned.saturating_sub(count);
        if self.start == self.buffer.len() {
            self.buffer.clear();
            self.start = 0;
        }
    }

    /// The next whole frame's body, a bad frame, or `None` for "need more
    /// bytes". One frame gets at most one answer.
    pub fn next_frame(&mut self) -> Option<Result<Vec<u8>, BadFrame>> {
        loop {
            let frame = self.read_frame()?;
            if !std::mem::take(&mut self.swallow) {
                return Some(frame);
            }
        }
    }

    fn read_frame(&mut self) -> Option<Result<Vec<u8>, BadFrame>> {
        if self.resync {
            match find_header_name(self.unread()) {
                Some(at) => {
                    let line_start = at >= 2 && &self.unread()[at - 2..at] == b"\r\n";
                    self.swallow = self.runaway && line_start;
                    self.consume(at);
                    self.resync = false;
                    self.runaway = false;
                }
                None => {
                    // Keep a tail that may be the start of the header name,
                    // and the line break before it.
                    let keep = b"Content-Length".len() - 1 + 2;
                    self.consume(self.unread().len().saturating_sub(keep));
                    return None;
                }
            }
        }
        // The blank line must begin within `max_header` bytes: only that
        // window is searched, and a header is refused only once the whole
        // window is here, so its verdict never depends on where a read ended.
        let window = self.unread().len().min(self.max_header + 4);
        let from = self.scanned.saturating_sub(3);
        let found = find(&self.unread()[from..window], b"\r\n\r\n").map(|at| from + at);
        let Some(header_end) = found else {
            if window < self.max_header + 4 {
                self.scanned = window;
                return None;
            }
            // Resume at the next `Content-Length` after this block's first
            // byte: a good frame right behind a runaway header is kept.
            self.consume(1);
            self.resync = true;
            self.runaway = true;
            return Some(Err(BadFrame::parse(format!(
                "header block longer than {} bytes",
                self.max_header
            ))));
        };
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

/// The body length a header block states. Two `Content-Length` headers are
/// refused even when they agree: whichever one wins, a reader that picks
/// the other would cut the stream elsewhere.
fn content_length(header: &str) -> Result<usize, String> {
    let mut length = None;
    for line in header.split("\r\n") {
        let Some((name, value)) = line.split_once(':') else {
            return Err(format!("malformed header line {line:?}"));
        };
        if name.trim().eq_ignore_ascii_case("content-length") {
            if length.is_some() {
                return Err("duplicate Content-Length header".to_string());
            }
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
    use super::super::{FRAME_ERROR_METHOD, MAX_BODY};
    use super::*;
    use serde_json::json;
    use tower_lsp_server::jsonrpc::{Request, Response};

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
            (
                b"Content-Length: 2\r\ncontent-length: 90\r\n\r\n{}".to_vec(),
                -32700,
                "duplicate Content-Length",
            ),
            (
                b"Content-Length: 2\r\nContent-Length: 2\r\n\r\n{}".to_vec(),
                -32700,
                "duplicate Content-Length",
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
        // One answer for the refused frame (its own Content-Length line and
        // body are read past), then the good frame behind it.
        assert_eq!(out.len(), 2, "{out:?}");
        assert_eq!(out[0].clone().unwrap_err().code, -32700);
        assert_eq!(out[1], Ok(PING.into()));
    }

    #[test]
    fn a_long_header_whose_body_is_a_request_gets_one_answer_in_any_split() {
        let header = format!(
            "X-Pad: {}\r\nContent-Length: {}\r\n\r\n{PING}",
            "a".repeat(60),
            PING.len()
        );
        let bytes = [header.as_bytes(), &frame(PING)].concat();
        let make = || FrameReader::new(MAX_BODY).with_max_header(32);
        for split in 0..bytes.len() {
            let out = read_in(&make, [&bytes[..split], &bytes[split..]]);
            assert_eq!(out.len(), 2, "split at {split}: {out:?}");
            assert_eq!(out[0].clone().unwrap_err().code, -32700);
            assert_eq!(out[1], Ok(PING.into()));
        }
    }

    #[test]
    fn a_runaway_header_is_cut_off_once_the_whole_window_is_here() {
        let mut reader = FrameReader::new(MAX_BODY);
        // The blank line may still begin at the limit: no verdict yet.
        reader.push(&vec![b'a'; MAX_HEADER + 3]);
        assert_eq!(reader.next_frame(), None);
        reader.push(b"a");
        assert_eq!(reader.next_frame().unwrap().unwrap_err().code, -32700);
        reader.push(&frame(PING));
        assert_eq!(frames(&mut reader), vec![Ok(PING.into())]);
    }

    /// Everything a reader yields for `bytes` pushed in `pieces`, draining
    /// after each push as `reframe` does.
    fn read_in<'a>(
        make: &dyn Fn() -> FrameReader,
        pieces: impl IntoIterator<Item = &'a [u8]>,
    ) -> Vec<Result<String, BadFrame>> {
        let mut reader = make();
        let mut out = Vec::new();
        for piece in pieces {
            reader.push(piece);
            out.extend(frames(&mut reader));
        }
        out
    }

    /// The same stream read whole, split at every point, and in pieces of
    /// every size yields the same frames and errors.
    fn assert_chunking_does_not_matter(
        make: &dyn Fn() -> FrameReader,
        stream: &[u8],
        splits: impl Iterator<Item = usize>,
        sizes: impl Iterator<Item = usize>,
    ) -> Vec<Result<String, BadFrame>> {
        let whole = read_in(make, [stream]);
        for at in splits {
            let (a, b) = stream.split_at(at);
            assert_eq!(read_in(make, [a, b]), whole, "split at {at}");
        }
        for size in sizes {
            assert_eq!(
                read_in(make, stream.chunks(size)),
                whole,
                "pieces of {size}"
            );
        }
        whole
    }

    #[test]
    fn what_a_hostile_stream_yields_does_not_depend_on_how_it_arrives() {
        const HEADER: usize = 40;
        let make = || FrameReader::new(64).with_max_header(HEADER);
        let pad = |total: usize, length: &str| {
            let rest = format!("\r\nContent-Length: {length}");
            format!(
                "X-Pad: {}{rest}",
                "p".repeat(total - "X-Pad: ".len() - rest.len())
            )
        };
        let exact = format!("{}\r\n\r\n{PING}", pad(HEADER, &PING.len().to_string()));
        let over = format!("{}\r\n\r\n{PING}", pad(HEADER + 1, &PING.len().to_string()));
        let stream = [
            frame(PING),
            vec![b'a'; HEADER + 10],
            frame(PING),
            exact.into_bytes(),
            over.into_bytes(),
            frame(PING),
            b"Content-Length: x\r\n\r\ngarbage".to_vec(),
            b"Content-Type: y\r\n\r\n".to_vec(),
            frame(PING),
            b"Content-Length: 2\r\nContent-Length: 60\r\n\r\n{}".to_vec(),
            frame(PING),
            b"Content-Length: 100\r\n\r\n".to_vec(),
            vec![b'z'; 100],
            frame("{not json"),
            format!("content-length: {}\r\n\r\n{PING}", PING.len()).into_bytes(),
            vec![b'a'; HEADER + 4],
            frame(PING),
        ]
        .concat();
        let whole =
            assert_chunking_does_not_matter(&make, &stream, 0..=stream.len(), 1..=stream.len());
        // Eight: the over-long block's own `Content-Length` line (right
        // after a CRLF) and its body are read past: one frame, one answer.
        let good = whole.iter().filter(|f| **f == Ok(PING.into())).count();
        assert_eq!(good, 8, "every good frame arrives: {whole:?}");
        let errors = whole.iter().filter(|f| f.is_err()).count();
        assert_eq!(errors, 7, "each bad frame is reported once: {whole:?}");
    }

    #[test]
    fn a_good_frame_behind_a_runaway_header_arrives_however_it_is_read() {
        let make = || FrameReader::new(MAX_BODY);
        let stream = [vec![b'a'; MAX_HEADER + 1], frame(PING), frame(PING)].concat();
        let near_the_limit = MAX_HEADER - 8..MAX_HEADER + 40;
        let whole = assert_chunking_does_not_matter(
            &make,
            &stream,
            near_the_limit.chain([1, 100, 4096]),
            [1, 2, 3, 7, 64, 4096, MAX_HEADER + 1, MAX_HEADER + 4, CHUNK].into_iter(),
        );
        assert_eq!(whole.len(), 3, "{whole:?}");
        assert_eq!(whole[0].clone().unwrap_err().code, -32700);
        assert_eq!(whole[1..], [Ok(PING.into()), Ok(PING.into())]);
    }
}
