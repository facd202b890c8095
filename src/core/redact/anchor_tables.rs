//! The anchor scan's tables, made from its words: the dense automaton that
//! `scan.rs` runs and the nibble tables of the filter `starts.rs` runs.
//!
//! Pure (std and aho-corasick only), so the build script includes this
//! file too and compiles the built-in words' tables into the binary
//! (`built_in_source`). Made when a process first scanned, they took 4.1M
//! instructions, three times all the rest of a `run -- echo hi`, and
//! 1.5-2.5 ms of the processor time of every `run` whose program prints
//! (issue 32). The library makes tables itself only in its tests.

use aho_corasick::automaton::Automaton as _;
use aho_corasick::Anchored;
use std::borrow::Cow;

/// The filter's width: a word's first four bytes.
pub(super) const WIDTH: usize = 4;
/// Two halves of eight buckets, a byte's bits each.
pub(super) const HALVES: usize = 2;
#[cfg_attr(not(test), allow(dead_code))]
const BUCKETS: usize = 8 * HALVES;

/// Everything a scan for some words needs but the processor's features.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Tables {
    pub(super) automaton: Automaton,
    /// None when there are no words or one is empty (any place starts it).
    pub(super) filter: Option<Filter>,
}

/// aho-corasick's DFA for the words, made dense.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Automaton {
    /// A byte's class: bytes every state moves on alike share one.
    pub(super) classes: [u8; 256],
    /// `state + class` -> the next state; states are premultiplied by the
    /// number of classes, match states last.
    pub(super) table: Cow<'static, [u16]>,
    pub(super) start: u16,
    /// The first match state: a state at or past it ends a word.
    pub(super) matches_from: u16,
    /// The longest word, in bytes.
    pub(super) longest: usize,
}

/// The filter's tables: which of a half's eight buckets a nibble allows at
/// each of a word's first `WIDTH` places.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Filter {
    /// `[half][position][low nibble]` -> the half's buckets that nibble
    /// allows there.
    pub(super) low: [[[u8; 16]; WIDTH]; HALVES],
    /// `[half][position][high nibble]` -> the same for high nibbles.
    pub(super) high: [[[u8; 16]; WIDTH]; HALVES],
}

#[cfg_attr(not(test), allow(dead_code))]
impl Tables {
    /// The tables for `words`, compared without ASCII case; `None` when the
    /// automaton does not fit 16-bit states.
    pub(super) fn new<W: AsRef<[u8]>>(words: &[W]) -> Option<Tables> {
        Some(Tables {
            automaton: Automaton::new(words)?,
            filter: Filter::new(words),
        })
    }
}

#[cfg_attr(not(test), allow(dead_code))]
impl Automaton {
    fn new<W: AsRef<[u8]>>(words: &[W]) -> Option<Automaton> {
        let dfa = aho_corasick::dfa::Builder::new()
            .ascii_case_insensitive(true)
            .build(words)
            .ok()?;
        // A byte's class: its own for each byte the words hold (ASCII case
        // folded), one for every other byte (the automaton moves on all of
        // them alike). The first byte of each class stands for it.
        let mut classes = [0u8; 256];
        let mut representatives = vec![0u8];
        for word in words {
            for &byte in word.as_ref() {
                let folded = byte.to_ascii_lowercase();
                if classes[usize::from(folded)] == 0 {
                    let class = u8::try_from(representatives.len()).ok()?;
                    representatives.push(folded);
                    classes[usize::from(folded)] = class;
                    classes[usize::from(folded.to_ascii_uppercase())] = class;
                }
            }
        }
        if let Some(other) = (0..=255u8).find(|&b| classes[usize::from(b)] == 0) {
            representatives[0] = other;
        }
        let stride = representatives.len();
        // Every state the unanchored search reaches, breadth first, by its
        // id in aho-corasick's DFA.
        let start = dfa.start_state(Anchored::No).ok()?;
        let mut index: Vec<Option<usize>> = vec![None; start.as_usize() + 1];
        index[start.as_usize()] = Some(0);
        let mut states = vec![start];
        let mut rows: Vec<Vec<usize>> = Vec::new();
        while let Some(&state) = states.get(rows.len()) {
            let mut row = Vec::with_capacity(stride);
            for &byte in &representatives {
                let next = dfa.next_state(Anchored::No, state, byte);
                if dfa.is_dead(next) {
                    return None;
                }
                if index.len() <= next.as_usize() {
                    index.resize(next.as_usize() + 1, None);
                }
                let id = *index[next.as_usize()].get_or_insert_with(|| {
                    states.push(next);
                    states.len() - 1
                });
                row.push(id);
            }
            rows.push(row);
        }
        if states.len() * stride > usize::from(u16::MAX) {
            return None;
        }
        // Match states last, so one comparison tells them.
        let mut renumbered = vec![0usize; states.len()];
        let mut next = 0;
        let mut matches_from = None;
        for matching in [false, true] {
            for (old, &state) in states.iter().enumerate() {
                if dfa.is_match(state) == matching {
                    renumbered[old] = next * stride;
                    if matching && matches_from.is_none() {
                        matches_from = Some(next * stride);
                    }
                    next += 1;
                }
            }
        }
        let mut table = vec![0u16; states.len() * stride];
        for (old, row) in rows.iter().enumerate() {
            for (class, &to) in row.iter().enumerate() {
                table[renumbered[old] + class] = u16::try_from(renumbered[to]).ok()?;
            }
        }
        Some(Automaton {
            classes,
            table: Cow::Owned(table),
            start: u16::try_from(renumbered[0]).ok()?,
            matches_from: u16::try_from(matches_from.unwrap_or(usize::from(u16::MAX))).ok()?,
            longest: words.iter().map(|w| w.as_ref().len()).max().unwrap_or(1),
        })
    }
}

#[cfg_attr(not(test), allow(dead_code))]
impl Filter {
    /// The filter for `words`, compared without ASCII case; `None` when
    /// there are none or a word is empty (any place starts it).
    pub(super) fn new<W: AsRef<[u8]>>(words: &[W]) -> Option<Filter> {
        let words = words.iter().map(AsRef::as_ref);
        if words.len() == 0 || words.clone().any(<[u8]>::is_empty) {
            return None;
        }
        // Each word goes to the bucket it widens least: a bucket lets
        // through the places whose four bytes its tables all allow, about
        // as often, in text, as the share of text's bytes each position
        // allows, multiplied; a word that starts like one already there
        // adds nothing. Ties go to the emptier bucket.
        let weights: [u32; 256] = std::array::from_fn(|b| in_text(b as u8));
        let mut buckets = [Bucket::default(); BUCKETS];
        let mut costs = [0.0f64; BUCKETS];
        // Words that start alike are one start to the filter.
        let mut starts: Vec<Vec<u8>> = words
            .map(|w| w[..w.len().min(WIDTH)].to_ascii_lowercase())
            .collect();
        starts.sort_unstable();
        starts.dedup();
        for word in &starts {
            let widened = buckets.map(|bucket| bucket.with(word).letting_through(&weights));
            let best = (0..BUCKETS).min_by(|&a, &b| {
                (widened[a] - costs[a])
                    .total_cmp(&(widened[b] - costs[b]))
                    .then(buckets[a].words.cmp(&buckets[b].words))
            });
            if let Some(best) = best {
                buckets[best] = buckets[best].with(word);
                costs[best] = widened[best];
            }
        }
        let mut low = [[[0u8; 16]; WIDTH]; HALVES];
        let mut high = [[[0u8; 16]; WIDTH]; HALVES];
        for (index, bucket) in buckets.iter().enumerate() {
            let (half, bit) = (index / 8, 1 << (index % 8));
            for position in 0..WIDTH {
                for nibble in bits(bucket.low[position]) {
                    low[half][position][nibble] |= bit;
                }
                for nibble in bits(bucket.high[position]) {
                    high[half][position][nibble] |= bit;
                }
            }
        }
        Some(Filter { low, high })
    }
}

/// One bucket's words, as the nibbles each position allows (a bit each).
#[cfg_attr(not(test), allow(dead_code))]
#[derive(Clone, Copy, Default)]
struct Bucket {
    low: [u16; WIDTH],
    high: [u16; WIDTH],
    words: usize,
}

#[cfg_attr(not(test), allow(dead_code))]
impl Bucket {
    /// The bucket with `word`'s start let through too (case folded).
    fn with(mut self, word: &[u8]) -> Bucket {
        self.words += 1;
        for position in 0..WIDTH {
            match word.get(position) {
                Some(&byte) => {
                    let byte = byte | 0x20;
                    self.low[position] |= 1 << (byte & 0x0f);
                    self.high[position] |= 1 << (byte >> 4);
                }
                // Past a short word's end, any byte.
                None => {
                    self.low[position] = u16::MAX;
                    self.high[position] = u16::MAX;
                }
            }
        }
        self
    }

    /// About how often the bucket lets a place of text through: the share
    /// of text's bytes each position allows, multiplied.
    /// An empty bucket allows no nibble, so it lets nothing through.
    fn letting_through(&self, weights: &[u32; 256]) -> f64 {
        (0..WIDTH)
            .map(|p| {
                let mut parts = 0u32;
                for high in bits(self.high[p]) {
                    for low in bits(self.low[p]) {
                        parts += weights[high << 4 | low];
                    }
                }
                f64::from(parts) / 1e6
            })
            .product()
    }
}

/// The indexes of the bits set in `mask`.
#[cfg_attr(not(test), allow(dead_code))]
fn bits(mut mask: u16) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        let bit = (mask != 0).then(|| mask.trailing_zeros() as usize)?;
        mask &= mask - 1;
        Some(bit)
    })
}

/// About how many of a million bytes of a program's text output, case
/// folded, are `byte` (English letter frequencies, with spaces, digits and
/// punctuation): only to share words out among buckets well.
#[cfg_attr(not(test), allow(dead_code))]
fn in_text(byte: u8) -> u32 {
    // Per mille of English letters, a to z.
    const LETTERS: &[u8; 26] = &[
        82, 15, 28, 43, 127, 22, 20, 61, 70, 2, 8, 40, 24, 67, 75, 19, 1, 60, 63, 91, 28, 10, 24,
        2, 20, 1,
    ];
    match byte {
        b'a'..=b'z' => 600 * u32::from(LETTERS[usize::from(byte - b'a')]),
        b'0'..=b'9' => 12_000,
        b' ' => 130_000,
        b'.' | b',' | b':' | b'=' | b'/' | 0x7f | b'-' | b'"' | b'*' => 10_000,
        // What folding leaves out: bytes with the 0x20 bit clear.
        _ if byte & 0x20 == 0 => 0,
        0x21..=0x7e => 2_000,
        _ => 500,
    }
}

/// The words of the three built-in scans, by the name of the static that
/// holds their tables: the anchors of the shapes, the key words in every
/// spelling, and both at once.
#[cfg_attr(not(test), allow(dead_code))]
pub(super) fn built_in_words() -> [(&'static str, Vec<String>); 3] {
    let anchors: Vec<String> = super::tables::anchor_union()
        .into_iter()
        .map(str::to_string)
        .collect();
    let keys = super::tables::key_spellings();
    let both = anchors.iter().chain(&keys).cloned().collect();
    [
        ("ANCHORS", anchors),
        ("KEY_WORDS", keys),
        ("ANCHORS_OR_KEY_WORDS", both),
    ]
}

/// The Rust source the build script writes: a static `Tables` for each of
/// `built_in_words`, in the form `Debug` prints arrays. Panics (failing the
/// build) if the built-in words' automaton outgrows 16-bit states.
#[cfg_attr(not(test), allow(dead_code))]
pub(super) fn built_in_source() -> String {
    let mut source = String::from(
        "// Made by build.rs from src/core/redact/tables.rs with anchor_tables.rs.\n\
         use super::anchor_tables::{Automaton, Filter, Tables};\n\
         use std::borrow::Cow;\n",
    );
    for (name, words) in built_in_words() {
        let Some(Tables { automaton, filter }) = Tables::new(&words) else {
            panic!("the {name} scan's automaton outgrew 16-bit states");
        };
        let filter = match filter {
            None => "None".to_string(),
            Some(Filter { low, high }) => {
                format!("Some(Filter {{ low: {low:?}, high: {high:?} }})")
            }
        };
        let Automaton {
            classes,
            table,
            start,
            matches_from,
            longest,
        } = automaton;
        source.push_str(&format!(
            "pub(super) static {name}: Tables = Tables {{ automaton: Automaton {{ \
             classes: {classes:?}, table: Cow::Borrowed(&{table:?}), start: {start}, \
             matches_from: {matches_from}, longest: {longest} }}, filter: {filter} }};\n"
        ));
    }
    source
}
