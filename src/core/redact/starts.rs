//! Where an anchor may start, 32 or 64 bytes at a time: a fingerprint of
//! the anchors' first four bytes, the filter Hyperscan calls Teddy (the
//! aho-corasick crate's packed search is one; it compares case exactly and
//! takes at most 64 words, so it cannot serve these).
//!
//! The words are shared out among sixteen buckets, one bit each in one of
//! two halves. For each of the first four positions of a word, two
//! 16-entry tables per half give the buckets a byte's low nibble allows
//! and those its high nibble allows; a byte's bits are the two looked up
//! and combined (a `pshufb` each). A place may start a word of a bucket
//! when its byte and the next three all keep that bucket's bit. Bytes are
//! compared with their `0x20` bit set, which folds ASCII case (and a few
//! rare bytes onto others, which only lets more through). The filter
//! misses no start; what it lets through that starts no word (a nibble of
//! one word's byte paired with another's) the automaton behind it turns
//! away within a byte or two.
//!
//! On the README, eight buckets over three bytes let 35 places a KiB
//! through; sixteen over four let 4.6, where 3.4 start an anchor's first
//! four bytes. The tables are made in `anchor_tables.rs` (the built-in
//! words' by the build script).
//!
//! Needs AVX2 (64 places a block with AVX-512 BW), found when the process
//! runs; without it there is no filter and the automaton reads every byte.

use super::anchor_tables::{Filter, HALVES, WIDTH};

#[derive(Clone)]
pub(super) struct Starts {
    filter: Filter,
    /// The processor has AVX-512 (BW): 64 places a block.
    wide: bool,
}

impl Starts {
    /// The search with `filter`'s tables; `None` when the processor lacks
    /// AVX2.
    pub(super) fn new(filter: &Filter) -> Option<Starts> {
        has_avx2().then(|| Starts {
            filter: *filter,
            wide: has_avx512(),
        })
    }

    /// Calls `start` with each place in `bytes` where a word may start, in
    /// order, until it answers false; whether every answer was true.
    pub(super) fn each(&self, bytes: &[u8], start: impl FnMut(usize) -> bool) -> bool {
        #[cfg(target_arch = "x86_64")]
        {
            // SAFETY: `new` built `self` only where the processor has AVX2,
            // and set `wide` only where it has AVX-512 BW.
            unsafe {
                if self.wide {
                    self.each_avx512(bytes, start)
                } else {
                    self.each_avx2(bytes, start)
                }
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            // Never built here (`new` finds no AVX2); every place would do.
            let (mut start, _) = (start, self.wide);
            (0..bytes.len()).all(|place| start(place))
        }
    }

    /// Whether a place may start a word, as the vector search finds it,
    /// past the end as if zero bytes followed (for the tests).
    #[cfg(test)]
    fn lets_through(&self, bytes: &[u8], at: usize) -> bool {
        (0..HALVES).any(|half| {
            let bits = (0..WIDTH).fold(0xff, |bits, position| {
                let byte = bytes.get(at + position).copied().unwrap_or(0) | 0x20;
                bits & self.filter.low[half][position][usize::from(byte & 0x0f)]
                    & self.filter.high[half][position][usize::from(byte >> 4)]
            });
            bits != 0
        })
    }
}

/// The blocks of `bytes` the AVX2 search reads, `BLOCK` places each with
/// the `WIDTH - 1` bytes after them: in place, then the last places (up to
/// `BLOCK + WIDTH - 2` of them, one block or two) copied into `padded`, zero
/// bytes after them, which must hold two blocks and what follows them.
/// Each comes with the places in it that are in `bytes`.
#[cfg(target_arch = "x86_64")]
fn blocks<'a>(
    bytes: &'a [u8],
    padded: &'a mut [u8; PADDED],
) -> impl Iterator<Item = (usize, *const u8, usize)> + 'a {
    let whole = (bytes.len() + 1).saturating_sub(BLOCK + WIDTH - 1);
    let in_place = (0..whole).step_by(BLOCK);
    let last = whole.div_ceil(BLOCK) * BLOCK;
    let rest = bytes.get(last..).unwrap_or_default();
    padded[..rest.len()].copy_from_slice(rest);
    let padded = padded.as_ptr();
    in_place
        .map(move |at| (at, bytes[at..].as_ptr(), BLOCK))
        .chain((0..rest.len()).step_by(BLOCK).map(move |offset| {
            // SAFETY: `rest.len() <= BLOCK + WIDTH - 2 < 2 * BLOCK`, so
            // `offset` is 0 or `BLOCK`, and a block there reads up to
            // `2 * BLOCK + WIDTH - 1 <= PADDED` bytes of `padded`.
            (
                last + offset,
                unsafe { padded.add(offset) },
                (rest.len() - offset).min(BLOCK),
            )
        }))
}

/// The places an AVX2 block holds.
#[cfg(target_arch = "x86_64")]
const BLOCK: usize = 32;

/// The room `blocks` copies a text's last places into: two blocks and the
/// bytes a block reads after them (AVX-512 reads its last block in place,
/// masked).
#[cfg(target_arch = "x86_64")]
const PADDED: usize = 2 * BLOCK + WIDTH - 1;

impl Starts {
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn each_avx2(&self, bytes: &[u8], mut start: impl FnMut(usize) -> bool) -> bool {
        use std::arch::x86_64::*;
        let table = |entries: &[u8; 16]| {
            // SAFETY: the load reads the 16 bytes of `entries`.
            let half = unsafe { _mm_loadu_si128(entries.as_ptr().cast()) };
            _mm256_broadcastsi128_si256(half)
        };
        let low: [[__m256i; WIDTH]; HALVES] =
            std::array::from_fn(|h| std::array::from_fn(|p| table(&self.filter.low[h][p])));
        let high: [[__m256i; WIDTH]; HALVES] =
            std::array::from_fn(|h| std::array::from_fn(|p| table(&self.filter.high[h][p])));
        let nibble = _mm256_set1_epi8(0x0f);
        let case = _mm256_set1_epi8(0x20);
        let zero = _mm256_setzero_si256();
        let mut padded = [0u8; PADDED];
        for (at, block, places_in) in blocks(bytes, &mut padded) {
            let mut bits = [_mm256_set1_epi8(-1); HALVES];
            for position in 0..WIDTH {
                // SAFETY: a block is followed by `WIDTH - 1` readable bytes;
                // unaligned loads allow any address.
                let v = unsafe { _mm256_loadu_si256(block.add(position).cast()) };
                let v = _mm256_or_si256(v, case);
                let lows = _mm256_and_si256(v, nibble);
                let highs = _mm256_and_si256(_mm256_srli_epi16(v, 4), nibble);
                for half in 0..HALVES {
                    let kept = _mm256_and_si256(
                        _mm256_shuffle_epi8(low[half][position], lows),
                        _mm256_shuffle_epi8(high[half][position], highs),
                    );
                    bits[half] = _mm256_and_si256(bits[half], kept);
                }
            }
            let bits = _mm256_or_si256(bits[0], bits[1]);
            let places = !(_mm256_movemask_epi8(_mm256_cmpeq_epi8(bits, zero)) as u32);
            if !each_place(u64::from(places), at, places_in, &mut start) {
                return false;
            }
        }
        true
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw")]
    unsafe fn each_avx512(&self, bytes: &[u8], mut start: impl FnMut(usize) -> bool) -> bool {
        use std::arch::x86_64::*;
        let table = |entries: &[u8; 16]| {
            // SAFETY: the load reads the 16 bytes of `entries`.
            let quarter = unsafe { _mm_loadu_si128(entries.as_ptr().cast()) };
            _mm512_broadcast_i32x4(quarter)
        };
        let low: [[__m512i; WIDTH]; HALVES] =
            std::array::from_fn(|h| std::array::from_fn(|p| table(&self.filter.low[h][p])));
        let high: [[__m512i; WIDTH]; HALVES] =
            std::array::from_fn(|h| std::array::from_fn(|p| table(&self.filter.high[h][p])));
        let nibble = _mm512_set1_epi8(0x0f);
        let case = _mm512_set1_epi8(0x20);
        // Each block is read where it lies; a load that would pass the
        // text's end reads only the bytes before it, zeros after (a masked
        // load reads no memory where its mask is clear). Copying the last
        // block out to pad it cost a short text more than its search: the
        // loads waited on the copy's stores.
        let base = bytes.as_ptr();
        for at in (0..bytes.len()).step_by(64) {
            let left = bytes.len() - at;
            // Which bytes each load reads: all of them but near the end.
            let masks: [u64; WIDTH] = if left >= 64 + WIDTH - 1 {
                [u64::MAX; WIDTH]
            } else {
                std::array::from_fn(|position| match left.saturating_sub(position) {
                    valid @ 0..64 => (1u64 << valid) - 1,
                    _ => u64::MAX,
                })
            };
            let mut bits = [_mm512_set1_epi8(-1); HALVES];
            for (position, &mask) in masks.iter().enumerate() {
                // SAFETY: the mask covers only bytes of `bytes` (those from
                // `at + position` on); a masked load touches no other
                // memory, so the address may lie past the end.
                let v = unsafe {
                    _mm512_maskz_loadu_epi8(mask, base.wrapping_add(at + position).cast())
                };
                let v = _mm512_or_si512(v, case);
                let lows = _mm512_and_si512(v, nibble);
                let highs = _mm512_and_si512(_mm512_srli_epi16(v, 4), nibble);
                for half in 0..HALVES {
                    let kept = _mm512_and_si512(
                        _mm512_shuffle_epi8(low[half][position], lows),
                        _mm512_shuffle_epi8(high[half][position], highs),
                    );
                    bits[half] = _mm512_and_si512(bits[half], kept);
                }
            }
            let bits = _mm512_or_si512(bits[0], bits[1]);
            if !each_place(
                _mm512_test_epi8_mask(bits, bits),
                at,
                left.min(64),
                &mut start,
            ) {
                return false;
            }
        }
        true
    }
}

/// `start` gets each place a block's bits let through among its first
/// `places_in`, until it answers false; whether every answer was true.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn each_place(
    mut places: u64,
    at: usize,
    places_in: usize,
    start: &mut impl FnMut(usize) -> bool,
) -> bool {
    if places_in < 64 {
        places &= (1 << places_in) - 1;
    }
    while places != 0 {
        if !start(at + places.trailing_zeros() as usize) {
            return false;
        }
        places &= places - 1;
    }
    true
}

#[cfg(target_arch = "x86_64")]
fn has_avx512() -> bool {
    std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512bw")
}

#[cfg(not(target_arch = "x86_64"))]
fn has_avx512() -> bool {
    false
}

#[cfg(target_arch = "x86_64")]
fn has_avx2() -> bool {
    std::is_x86_feature_detected!("avx2")
}

#[cfg(not(target_arch = "x86_64"))]
fn has_avx2() -> bool {
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const WORDS: &[&str] = &[
        "ghp_", "bearer", "://", "xox", "\u{17f}", "password", "sk-", "a", "_v1_", "hf_",
    ];

    /// Every place in `bytes` with a word starting there (case aside).
    fn real_starts(bytes: &[u8]) -> Vec<usize> {
        (0..bytes.len())
            .filter(|&at| {
                WORDS.iter().any(|w| {
                    bytes
                        .get(at..at + w.len())
                        .is_some_and(|s| s.eq_ignore_ascii_case(w.as_bytes()))
                })
            })
            .collect()
    }

    /// The search for `words`, where the processor has AVX2.
    fn starts_of(words: &[&str]) -> Option<Starts> {
        Filter::new(words).and_then(|filter| Starts::new(&filter))
    }

    /// What the vector search reports.
    fn reported(starts: &Starts, bytes: &[u8]) -> Vec<usize> {
        let mut places = Vec::new();
        assert!(starts.each(bytes, |at| {
            places.push(at);
            true
        }));
        places
    }

    proptest! {
        #[test]
        fn the_filter_misses_no_start_and_reports_what_its_tables_say(
            pieces in proptest::collection::vec(
                prop_oneof![
                    "[a-zA-Z0-9 :/_.-]{0,40}",
                    "[\\x00-\\x7f]{0,10}",
                    proptest::sample::select(WORDS.to_vec()).prop_map(|w| w.to_uppercase()),
                    proptest::sample::select(WORDS.to_vec()).prop_map(str::to_string),
                ],
                0..100,
            )
        ) {
            let Some(starts) = starts_of(WORDS) else {
                return Ok(()); // no AVX2 here: nothing to hold to account
            };
            let text = pieces.concat();
            let bytes = text.as_bytes();
            let places = reported(&starts, bytes);
            // The 32-byte search alone finds the same places.
            let narrow = Starts { wide: false, ..starts.clone() };
            prop_assert_eq!(&reported(&narrow, bytes), &places);
            let expected: Vec<usize> =
                (0..bytes.len()).filter(|&at| starts.lets_through(bytes, at)).collect();
            prop_assert_eq!(&places, &expected);
            for at in real_starts(bytes) {
                prop_assert!(places.contains(&at), "missed {}", at);
            }
        }
    }

    #[test]
    fn text_with_no_word_near_it_has_no_places() {
        let Some(starts) = starts_of(&["password", "token", "bearer"]) else {
            return;
        };
        let text = "request 1234: user=ada total=8638 status=ok path=/cart/items\n".repeat(20);
        assert_eq!(reported(&starts, text.as_bytes()), Vec::<usize>::new());
    }

    /// Fills `text` with a word's start at every place near its end, the
    /// rest text, and holds both searches to reading it as if zero bytes
    /// followed.
    fn reads_as_if_zero_bytes_followed(starts: &Starts, text: &mut [u8]) {
        let length = text.len();
        for (at, byte) in text.iter_mut().enumerate() {
            *byte = if at + 5 >= length {
                b"sSa:h"[at % 5]
            } else {
                b'q'
            };
        }
        let expected: Vec<usize> = (0..length)
            .filter(|&at| starts.lets_through(text, at))
            .collect();
        let narrow = Starts {
            wide: false,
            ..starts.clone()
        };
        assert_eq!(reported(starts, text), expected, "{length}");
        assert_eq!(reported(&narrow, text), expected, "{length}");
    }

    #[test]
    fn every_length_of_tail_is_read_as_if_zero_bytes_followed() {
        let Some(starts) = starts_of(WORDS) else {
            return;
        };
        for length in 0..300 {
            reads_as_if_zero_bytes_followed(&starts, &mut vec![0; length]);
        }
    }

    /// Reads past a text's end would go unseen in a heap buffer; here the
    /// page after the text is unreadable, so one ends the test process.
    #[cfg(unix)]
    #[test]
    fn a_text_that_ends_where_readable_memory_does_is_read_no_further() {
        let Some(starts) = starts_of(WORDS) else {
            return;
        };
        // SAFETY: `sysconf` only answers; `mmap` asks for two fresh pages,
        // the second of which `mprotect` makes unreadable, and the texts
        // below lie in the first; `munmap` returns both.
        unsafe {
            let page = usize::try_from(libc::sysconf(libc::_SC_PAGESIZE)).unwrap();
            let base = libc::mmap(
                std::ptr::null_mut(),
                2 * page,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(base, libc::MAP_FAILED);
            assert_eq!(
                libc::mprotect(base.cast::<u8>().add(page).cast(), page, libc::PROT_NONE),
                0
            );
            for length in 0..300 {
                let text = base.cast::<u8>().add(page - length);
                reads_as_if_zero_bytes_followed(
                    &starts,
                    std::slice::from_raw_parts_mut(text, length),
                );
            }
            assert_eq!(libc::munmap(base, 2 * page), 0);
        }
    }

    #[test]
    fn an_answer_of_false_stops_the_search() {
        let Some(starts) = starts_of(&["x"]) else {
            return;
        };
        let mut seen = 0;
        let stopped = starts.each(&[b'x'; 100], |_| {
            seen += 1;
            seen < 3
        });
        assert_eq!((stopped, seen), (false, 3));
    }
}
