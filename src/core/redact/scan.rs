//! The scan for a secret's anchors over every byte a door lets through:
//! aho-corasick's DFA for the anchors, made dense (a table of byte classes
//! and premultiplied 16-bit states, about 21 KiB for the built-in anchors)
//! and run in four lanes at once over a long text.
//!
//! A DFA's step waits for the one before it (a load that depends on the
//! last), which held aho-corasick's own search to about 0.5 GB/s here,
//! slower than `run` records a program's lines. Four lanes, each a quarter
//! of the text started `longest - 1` bytes early so that an anchor across
//! two quarters is found whole by the later one, give the processor four
//! independent chains: about 1.6 GB/s on 64 KiB chunks (more lanes were
//! no faster). Only where anchors end is reported, which is what the doors
//! need: which lines hold one.
//!
//! Where the processor has AVX2 a filter goes first (`starts`): it finds
//! the few places an anchor may start, 32 or 64 bytes at a time, and the
//! automaton reads only from each of them until it is back at its start
//! state (no anchor under way). Text the filter lets through densely (an
//! anchor in every line) goes back to the four lanes.

use super::anchor_tables::{Automaton, Tables};
use super::starts::Starts;

const LANES: usize = 4;
/// The shortest text the filter goes first for: a shorter one is a few
/// steps of the automaton, less than setting the filter's tables up (65-byte
/// lines took 223 ns through the automaton alone, 97 ns filtered).
const SPARSE_FROM: usize = 16;
/// The filtered scan gives way to every byte when the automaton has read
/// more than one byte in this many, past the first `DENSE_SLACK`.
const DENSE_SHARE: usize = 8;
const DENSE_SLACK: usize = 4096;

pub(super) struct AnchorScan {
    automaton: Automaton,
    /// Where an anchor may start, when the processor can say it fast.
    starts: Option<Starts>,
}

/// The automaton as one scan reads it: borrowed once, so a loop keeps the
/// table's address in a register rather than reading it from the scan.
#[derive(Clone, Copy)]
struct Steps<'a> {
    classes: &'a [u8; 256],
    table: &'a [u16],
    start: u16,
    matches_from: u16,
}

impl Steps<'_> {
    #[inline(always)]
    fn step(self, state: u16, byte: u8) -> u16 {
        self.table[usize::from(state) + usize::from(self.classes[usize::from(byte)])]
    }
}

impl AnchorScan {
    /// The scan with `tables`; the filter goes first where the processor
    /// can run it.
    pub(super) fn new(tables: Tables) -> AnchorScan {
        AnchorScan {
            starts: tables.filter.as_ref().and_then(Starts::new),
            automaton: tables.automaton,
        }
    }

    fn steps(&self) -> Steps<'_> {
        let automaton = &self.automaton;
        Steps {
            classes: &automaton.classes,
            table: &automaton.table,
            start: automaton.start,
            matches_from: automaton.matches_from,
        }
    }

    /// Whether `bytes` is long enough for the lanes: each quarter at least
    /// twice what a lane reads before it.
    fn in_lanes(&self, bytes: &[u8]) -> bool {
        bytes.len() >= LANES * 2 * self.automaton.longest
    }

    /// Whether `bytes` holds an anchor.
    pub(super) fn is_match(&self, bytes: &[u8]) -> bool {
        !self.each_end(bytes, |_| false)
    }

    /// Where each anchor in `bytes` ends (the index of its last byte), in
    /// order; an anchor that ends where another does is there once.
    pub(super) fn last_bytes(&self, bytes: &[u8]) -> Vec<usize> {
        let mut found = Vec::new();
        self.ends(bytes, |at| {
            found.push(at);
            true
        });
        found
    }

    /// `found` gets the last byte of each anchor, in order, until it
    /// answers false; whether every answer was true.
    pub(super) fn each_end(&self, bytes: &[u8], mut found: impl FnMut(usize) -> bool) -> bool {
        let mut all = true;
        self.ends(bytes, |at| {
            all = found(at);
            all
        });
        all
    }

    /// `found` gets the last byte of each anchor, in order, until it
    /// answers false: from the places the filter finds, or in one lane, or
    /// in four for a long enough text.
    fn ends(&self, bytes: &[u8], found: impl FnMut(usize) -> bool) {
        match &self.starts {
            Some(starts) if bytes.len() >= SPARSE_FROM => self.sparse(starts, bytes, found),
            _ => self.dense(bytes, found),
        }
    }

    /// The automaton over every byte: in one lane, or four.
    fn dense(&self, bytes: &[u8], mut found: impl FnMut(usize) -> bool) {
        if self.in_lanes(bytes) {
            return self.lanes(bytes, found);
        }
        let steps = self.steps();
        let mut state = steps.start;
        for (at, &byte) in bytes.iter().enumerate() {
            state = steps.step(state, byte);
            if state >= steps.matches_from && !found(at) {
                return;
            }
        }
    }

    /// The automaton from each place the filter finds until it is back at
    /// its start state: an anchor starts at such a place, and from the
    /// start state the automaton finds every anchor that starts where it
    /// reads from, so what it skips holds none. When the places keep it
    /// reading more than one byte in `DENSE_SHARE`, the rest goes to
    /// `dense`.
    fn sparse(&self, starts: &Starts, bytes: &[u8], mut found: impl FnMut(usize) -> bool) {
        let steps = self.steps();
        // The next byte the automaton reads; it is at its start state there.
        let mut next = 0;
        let mut read = 0;
        let mut stopped = false;
        let looked = starts.each(bytes, |place| {
            if place < next {
                return true; // read over already
            }
            let mut state = steps.start;
            next = place;
            loop {
                state = steps.step(state, bytes[next]);
                if state >= steps.matches_from && !found(next) {
                    stopped = true;
                    return false;
                }
                next += 1;
                read += 1;
                if state == steps.start || next == bytes.len() {
                    break;
                }
            }
            // Checked once a window is read, so `next` is where it stopped.
            read <= DENSE_SLACK || read * DENSE_SHARE <= next
        });
        // From where the places grew dense: every byte, the automaton at
        // its start state there.
        if !looked && !stopped {
            let from = next;
            self.dense(&bytes[from..], |at| found(from + at));
        }
    }

    /// The four-lane scan: `found` gets the last byte of each anchor, in
    /// order, until it answers false.
    fn lanes(&self, bytes: &[u8], mut found: impl FnMut(usize) -> bool) {
        let steps = self.steps();
        let quarter = bytes.len() / LANES;
        let warm = self.automaton.longest - 1;
        debug_assert!(quarter > warm);
        let mut states = [steps.start; LANES];
        // Lanes past the first read the `warm` bytes before their quarter.
        for i in 0..warm {
            for (k, state) in states.iter_mut().enumerate().skip(1) {
                *state = steps.step(*state, bytes[k * quarter - warm + i]);
            }
        }
        let quarters: [&[u8]; LANES] =
            std::array::from_fn(|k| &bytes[k * quarter..(k + 1) * quarter]);
        // The matches of lanes past the first wait for the earlier lanes'.
        let mut later: [Vec<usize>; LANES] = Default::default();
        // One index into the four quarters: the lanes step together.
        #[allow(clippy::needless_range_loop)]
        for i in 0..quarter {
            let mut any = false;
            for k in 0..LANES {
                states[k] = steps.step(states[k], quarters[k][i]);
                any |= states[k] >= steps.matches_from;
            }
            if any {
                if states[0] >= steps.matches_from && !found(i) {
                    return;
                }
                for k in 1..LANES {
                    if states[k] >= steps.matches_from {
                        later[k].push(k * quarter + i);
                    }
                }
            }
        }
        for at in later.iter().flatten() {
            if !found(*at) {
                return;
            }
        }
        // What is left after four quarters: the last lane goes on.
        let mut state = states[LANES - 1];
        for (at, &byte) in bytes.iter().enumerate().skip(LANES * quarter) {
            state = steps.step(state, byte);
            if state >= steps.matches_from && !found(at) {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const WORDS: &[&str] = &["ghp_", "bearer", "://", "xox", "\u{17f}", "password", "sk-"];

    fn scan_of(words: &[&str]) -> AnchorScan {
        AnchorScan::new(Tables::new(words).unwrap())
    }

    /// aho-corasick's own answer: the last byte of every overlapping match.
    fn expected(bytes: &[u8]) -> Vec<usize> {
        let ac = aho_corasick::AhoCorasick::builder()
            .ascii_case_insensitive(true)
            .build(WORDS)
            .unwrap();
        let mut ends: Vec<usize> = ac
            .find_overlapping_iter(bytes)
            .map(|m| m.end() - 1)
            .collect();
        ends.sort_unstable();
        ends.dedup();
        ends
    }

    #[test]
    fn anchors_across_the_lanes_seams_are_found_whole() {
        let scan = scan_of(WORDS);
        for length in [0, 1, 255, 256, 257, 1000, 4099] {
            for at in (0..length.max(1)).step_by(7) {
                let mut text = vec![b'a'; length];
                let word = b"BeArEr";
                if at + word.len() <= length {
                    text[at..at + word.len()].copy_from_slice(word);
                }
                assert_eq!(scan.last_bytes(&text), expected(&text), "{length} {at}");
                assert_eq!(scan.is_match(&text), !expected(&text).is_empty());
            }
        }
    }

    proptest! {
        #[test]
        fn the_scan_finds_what_aho_corasick_finds(
            pieces in proptest::collection::vec(
                prop_oneof![
                    "[a-zA-Z0-9 :/_.-]{0,40}",
                    proptest::sample::select(WORDS.to_vec()).prop_map(|w| w.to_uppercase()),
                    proptest::sample::select(WORDS.to_vec()).prop_map(str::to_string),
                ],
                0..200,
            )
        ) {
            let text = pieces.concat();
            let scan = scan_of(WORDS);
            prop_assert_eq!(scan.last_bytes(text.as_bytes()), expected(text.as_bytes()));
            prop_assert_eq!(scan.is_match(text.as_bytes()), !expected(text.as_bytes()).is_empty());
            prop_assert_eq!(every_byte(&scan, text.as_bytes()), expected(text.as_bytes()));
        }
    }

    /// The automaton over every byte, the filter left out.
    fn every_byte(scan: &AnchorScan, bytes: &[u8]) -> Vec<usize> {
        let mut found = Vec::new();
        scan.dense(bytes, |at| {
            found.push(at);
            true
        });
        found
    }

    #[test]
    fn text_dense_with_anchors_is_found_whole_after_the_filter_gives_way() {
        let scan = scan_of(WORDS);
        // Clean text first (the filter reads it), then an anchor in every
        // few bytes past the slack (the lanes read the rest).
        let mut text = "request 1: total=7 path=/cart\n".repeat(400);
        for i in 0..3000 {
            text.push_str(["password ", "x ", "Sk-", "://", "bEaReR "][i % 5]);
        }
        text.push_str(&"ok ".repeat(50));
        text.push_str("ghp_");
        let bytes = text.as_bytes();
        assert_eq!(scan.last_bytes(bytes), expected(bytes));
        assert!(scan.is_match(bytes));
        // A stop asked for inside the filtered part is kept.
        let mut first = None;
        scan.ends(
            b"....................................................................xox",
            |at| {
                first = Some(at);
                false
            },
        );
        assert_eq!(first, Some(70));
    }
}
