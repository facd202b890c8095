//! Reading a log file by byte ranges that start at line boundaries, and
//! the lines of a range found in the reader's own buffer: the I/O under
//! the summary's pieces read side by side (`summary.rs`).

use std::fs::File;
use std::io::{self, BufRead, Read};

/// Offsets that cut `[0, length)` into `pieces` ranges, each starting at
/// the beginning of a line.
pub(super) fn piece_bounds(handle: &File, length: u64, pieces: usize) -> io::Result<Vec<u64>> {
    let mut bounds = vec![0];
    let step = length / pieces as u64;
    let mut probe = vec![0u8; 64 * 1024];
    for i in 1..pieces as u64 {
        let mut at = (i * step).max(*bounds.last().unwrap_or(&0));
        // The next line starts after the first `\n` at or past the cut.
        loop {
            if at >= length {
                break;
            }
            let read = read_at(handle, &mut probe, at)?;
            if read == 0 {
                at = length;
                break;
            }
            if let Some(newline) = memchr::memchr(b'\n', &probe[..read]) {
                at += newline as u64 + 1;
                break;
            }
            at += read as u64;
        }
        if at < length && at > *bounds.last().unwrap_or(&0) {
            bounds.push(at);
        }
    }
    bounds.push(length);
    Ok(bounds)
}

fn read_at(handle: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    std::os::unix::fs::FileExt::read_at(handle, buf, at)
}

/// The bytes of a file from `at` to `end` (or its end), read by position so
/// pieces share one handle.
pub(super) struct Range<'f> {
    pub handle: &'f File,
    pub at: u64,
    pub end: Option<u64>,
}

impl Read for Range<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let room = match self.end {
            Some(end) => usize::try_from(end.saturating_sub(self.at)).unwrap_or(usize::MAX),
            None => usize::MAX,
        };
        let want = buf.len().min(room);
        if want == 0 {
            return Ok(0);
        }
        let read = read_at(self.handle, &mut buf[..want], self.at)?;
        self.at += read as u64;
        Ok(read)
    }
}

/// Every line of `reader` without its `\n`, parsed where it lies in the
/// reader's buffer when it lies there whole, else gathered (at most `cap`
/// bytes of it: `whole` is false for a longer one).
pub(super) fn for_each_line(
    reader: &mut impl BufRead,
    cap: usize,
    mut line: impl FnMut(&[u8], bool),
) -> io::Result<()> {
    let mut carried: Vec<u8> = Vec::new();
    let mut whole = true;
    loop {
        let available = reader.fill_buf()?;
        if available.is_empty() {
            if !carried.is_empty() || !whole {
                line(&carried, whole);
            }
            return Ok(());
        }
        let mut from = 0;
        while let Some(at) = memchr::memchr(b'\n', &available[from..]) {
            let end = from + at;
            if carried.is_empty() && whole {
                line(&available[from..end], end - from <= cap);
            } else {
                let room = cap.saturating_sub(carried.len());
                whole &= end - from <= room;
                carried.extend_from_slice(&available[from..from + (end - from).min(room)]);
                line(&carried, whole);
                carried.clear();
                whole = true;
            }
            from = end + 1;
        }
        let rest = &available[from..];
        let room = cap.saturating_sub(carried.len());
        whole &= rest.len() <= room;
        carried.extend_from_slice(&rest[..rest.len().min(room)]);
        let used = available.len();
        reader.consume(used);
    }
}
