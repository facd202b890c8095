//! The HTTP the benchmarks post records with: one keep-alive connection,
//! one request at a time, as a probe sends them.

use std::io::{Read, Write};
use std::net::TcpStream;

/// POST `body` to `path` and read the whole answer: its status.
pub fn post(stream: &mut TcpStream, host: &str, path: &str, body: &str) -> u16 {
    // One write per request, as a browser sends it: split writes meet
    // Nagle's algorithm and delayed acknowledgements (40 ms each).
    let request = format!(
        "POST {path} HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).unwrap();
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        stream.read_exact(&mut byte).unwrap();
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    let length: usize = head
        .lines()
        .find_map(|l| {
            l.to_ascii_lowercase()
                .strip_prefix("content-length:")
                .map(|v| v.trim().parse().unwrap_or(0))
        })
        .unwrap_or(0);
    let mut rest = vec![0u8; length];
    stream.read_exact(&mut rest).unwrap();
    head[9..12].parse().unwrap()
}
