//! A JSON string's text at memory speed: where it stops (the first `"`,
//! `\\` or control character, sixteen bytes at a time where the processor
//! has SSE2, every x86-64, then eight, then one), and a string written as
//! JSON byte for byte as `serde_json` writes it. The log reader finds a
//! string's end with it; `run` writes every line a program prints with it.

const ONES: u64 = u64::from_ne_bytes([0x01; 8]);
const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);

/// The high bit of each byte of `word` below `limit` (`limit` <= 0x80),
/// exact up to the first such byte (a borrow may mark some after it).
fn below(word: u64, limit: u8) -> u64 {
    word.wrapping_sub(ONES * u64::from(limit)) & !word & HIGHS
}

/// The high bit of each byte of `word` that ends a string's text (`"`,
/// `\\` or a control character, and with `HIGH` a byte of a non-ASCII
/// character), the lowest one exact.
fn stops_in<const HIGH: bool>(word: u64) -> u64 {
    let stops = below(word ^ (ONES * u64::from(b'"')), 1)
        | below(word ^ (ONES * u64::from(b'\\')), 1)
        | below(word, 0x20);
    if HIGH {
        stops | (word & HIGHS)
    } else {
        stops
    }
}

/// A bit for each of the 16 bytes that ends a string's text.
#[cfg(target_arch = "x86_64")]
#[inline]
fn sse2_stops<const HIGH: bool>(block: &[u8; 16]) -> u32 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_max_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of x86-64, and the load reads the 16 bytes of
    // `block` (unaligned loads allow any address).
    unsafe {
        let bytes = _mm_loadu_si128(block.as_ptr().cast());
        let quote = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'\\' as i8));
        // Unsigned `byte < 0x20`: the larger of it and 0x1f is 0x1f.
        let low = _mm_set1_epi8(0x1f);
        let control = _mm_cmpeq_epi8(_mm_max_epu8(bytes, low), low);
        let stops = _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control)) as u32;
        if HIGH {
            // The mask of the bytes' own high bits.
            stops | _mm_movemask_epi8(bytes) as u32
        } else {
            stops
        }
    }
}

/// Where the text of `bytes` from `at` stops: the first `"`, `\\` or
/// control character (log strings are short, too short to set up a general
/// vector search for each).
pub fn text_end(bytes: &[u8], at: usize) -> Option<usize> {
    stop::<false>(bytes, at)
}

/// `text_end`, stopping at the first byte of a non-ASCII character too:
/// the summary's line scanner checks those characters itself, so a line
/// need not be checked as UTF-8 whole before it is read.
#[inline(always)]
pub fn text_or_non_ascii_end(bytes: &[u8], at: usize) -> Option<usize> {
    stop::<true>(bytes, at)
}

#[inline(always)]
fn stop<const HIGH: bool>(bytes: &[u8], at: usize) -> Option<usize> {
    let mut at = at;
    #[cfg(target_arch = "x86_64")]
    while let Some(block) = bytes.get(at..at + 16) {
        let stops = sse2_stops::<HIGH>(block.try_into().ok()?);
        if stops != 0 {
            return Some(at + stops.trailing_zeros() as usize);
        }
        at += 16;
    }
    while let Some(word) = bytes.get(at..at + 8) {
        let word = u64::from_le_bytes(word.try_into().ok()?);
        let stops = stops_in::<HIGH>(word);
        if stops != 0 {
            return Some(at + (stops.trailing_zeros() / 8) as usize);
        }
        at += 8;
    }
    let rest = bytes.get(at..)?;
    rest.iter()
        .position(|&b| matches!(b, b'"' | b'\\' | 0..=0x1f) || (HIGH && b >= 0x80))
        .map(|n| at + n)
}

/// `text` as a JSON string onto `out`, quotes and all, escaped as
/// `serde_json` escapes it (`\"`, `\\`, `\b`, `\f`, `\n`, `\r`, `\t`, any other
/// control character as `\u00xx`): the runs between the bytes to escape are
/// copied whole.
pub fn write(out: &mut Vec<u8>, text: &str) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    // A short string is looked at byte by byte (most lines a program
    // prints are short and need no escape).
    if bytes.len() < 16 && !bytes.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\') {
        out.extend_from_slice(bytes);
        out.push(b'"');
        return;
    }
    let mut from = 0;
    while let Some(stop) = text_end(bytes, from) {
        out.extend_from_slice(&bytes[from..stop]);
        let byte = bytes[stop];
        match byte {
            b'"' => out.extend_from_slice(b"\\\""),
            b'\\' => out.extend_from_slice(b"\\\\"),
            0x08 => out.extend_from_slice(b"\\b"),
            0x0c => out.extend_from_slice(b"\\f"),
            b'\n' => out.extend_from_slice(b"\\n"),
            b'\r' => out.extend_from_slice(b"\\r"),
            b'\t' => out.extend_from_slice(b"\\t"),
            _ => out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xf)],
            ]),
        }
        from = stop + 1;
    }
    out.extend_from_slice(&bytes[from..]);
    out.push(b'"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn naive_end(text: &str, at: usize) -> Option<usize> {
        text.as_bytes()[at..]
            .iter()
            .position(|b| matches!(b, b'"' | b'\\' | 0..=0x1f))
            .map(|n| at + n)
    }

    proptest! {
        /// Sixteen or eight bytes at a time finds the byte one at a time does,
        /// whatever stands before or after it (borrows, high bytes).
        #[test]
        fn a_strings_end_is_found_many_bytes_at_a_time(
            text in "[ -~\u{1}\u{1f}\u{7f}\u{80}-\u{7ff}\u{fffd}\"\\\\]{0,60}",
            at in 0usize..60,
        ) {
            let at = at.min(text.len());
            prop_assume!(text.is_char_boundary(at));
            prop_assert_eq!(text_end(text.as_bytes(), at), naive_end(&text, at));
            let non_ascii = text.as_bytes()[at..]
                .iter()
                .position(|&b| matches!(b, b'"' | b'\\' | 0..=0x1f | 0x80..))
                .map(|n| at + n);
            prop_assert_eq!(text_or_non_ascii_end(text.as_bytes(), at), non_ascii);
        }
    }

    #[test]
    fn every_byte_below_a_space_ends_a_string_and_no_other_but_quote_and_backslash() {
        for byte in 0u8..=0x7f {
            let text = format!("abcdefghij{}klmnopqrstu", byte as char);
            let stops = byte < 0x20 || byte == b'"' || byte == b'\\';
            assert_eq!(
                text_end(text.as_bytes(), 0),
                stops.then_some(10),
                "byte {byte:#x}"
            );
        }
    }

    proptest! {
        /// Byte for byte what serde_json writes, for any text.
        #[test]
        fn a_string_is_written_as_serde_json_writes_it(
            text in "[ -~\u{0}-\u{1f}\u{7f}\u{80}-\u{7ff}\u{fffd}\u{2028}\"\\\\]{0,80}",
        ) {
            let mut out = Vec::new();
            write(&mut out, &text);
            prop_assert_eq!(out, serde_json::to_vec(&text).unwrap());
        }
    }
}
