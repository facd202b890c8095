//! The Debug Adapter Protocol's framing (`Content-Length` headers, JSON
//! bodies) over a socket, as a small blocking client: requests out,
//! messages in. The adapter is a program of its own; what it sends is
//! bounded and parsed, never trusted.

use serde_json::{json, Value};
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;

/// A message from the adapter larger than this ends the session.
const MAX_MESSAGE: usize = 4 * 1024 * 1024;

pub struct Dap {
    writer: TcpStream,
    reader: BufReader<TcpStream>,
    seq: u64,
}

impl Dap {
    pub fn new(stream: TcpStream) -> io::Result<Self> {
        Ok(Dap {
            writer: stream.try_clone()?,
            reader: BufReader::new(stream),
            seq: 0,
        })
    }

    /// Sends a request; answers its sequence number.
    pub fn request(&mut self, command: &str, arguments: Value) -> io::Result<u64> {
        self.seq += 1;
        let body = json!({
            "seq": self.seq,
            "type": "request",
            "command": command,
            "arguments": arguments,
        })
        .to_string();
        let framed = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        self.writer.write_all(framed.as_bytes())?;
        self.writer.flush()?;
        Ok(self.seq)
    }

    /// The next message; None when the adapter closed the connection.
    pub fn next(&mut self) -> io::Result<Option<Value>> {
        let mut length = None;
        loop {
            let mut line = String::new();
            if self.reader.by_ref().take(1024).read_line(&mut line)? == 0 {
                return Ok(None);
            }
            let line = line.trim_end();
            if line.is_empty() {
                if length.is_some() {
                    break;
                }
                continue;
            }
            if let Some((name, value)) = line.split_once(':') {
                if name.trim().eq_ignore_ascii_case("content-length") {
                    length = value.trim().parse::<usize>().ok();
                }
            }
        }
        let length = length
            .filter(|n| *n <= MAX_MESSAGE)
            .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "bad DAP message length"))?;
        let mut body = vec![0; length];
        self.reader.read_exact(&mut body)?;
        serde_json::from_slice(&body)
            .map(Some)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
    }

    pub fn shutdown(&self) {
        let _ = self.writer.shutdown(std::net::Shutdown::Both);
    }
}
