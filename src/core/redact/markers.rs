//! The marker a secret is replaced by (`[redacted:<kind>#<4 hex>]`), and
//! the searches for markers already in a text.

use std::sync::OnceLock;

/// A kind as a marker shows it: letters, digits and `-`, at most 32.
pub(super) fn kind_name(kind: &str) -> String {
    let name: String = kind
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .take(32)
        .collect();
    if name.trim_matches('-').is_empty() {
        "custom".into()
    } else {
        name
    }
}

pub(super) const MARKER_START: &str = "[redacted:";
/// What a marker usually takes: its start, a kind, the hash and `]`.
pub(super) const MARKER_ROOM: usize = MARKER_START.len() + 20 + 6;

pub(super) fn is_marker_at(text: &str, at: usize) -> bool {
    text.get(at..)
        .is_some_and(|rest| rest.starts_with(MARKER_START))
}

/// `[redacted:<kind>#<4 hex>]`: the hash is FNV-1a of the secret, stable
/// across processes and versions, so equal secrets keep equal markers; 16
/// bits say too little to confirm a guess.
pub fn marker(kind: &str, secret: &str) -> String {
    let mut out = String::with_capacity(MARKER_START.len() + kind.len() + 6);
    push_marker(&mut out, kind, secret);
    out
}

/// `marker` written at the end of `out` (no formatting machinery: a line
/// of secrets writes one per secret).
pub(super) fn push_marker(out: &mut String, kind: &str, secret: &str) {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in secret.bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    let short = (hash ^ (hash >> 32)) as u16;
    let digit = |shift: u16| b"0123456789abcdef"[usize::from((short >> shift) & 0xf)];
    out.push_str(MARKER_START);
    out.push_str(kind);
    for byte in [b'#', digit(12), digit(8), digit(4), digit(0), b']'] {
        out.push(char::from(byte));
    }
}

/// Whether `bytes` holds a marker (its searcher built once).
pub(super) fn holds_marker(bytes: &[u8]) -> bool {
    marker_finder().find(bytes).is_some()
}

pub(super) fn marker_finder() -> &'static memchr::memmem::Finder<'static> {
    static FINDER: OnceLock<memchr::memmem::Finder<'static>> = OnceLock::new();
    FINDER.get_or_init(|| memchr::memmem::Finder::new(MARKER_START.as_bytes()))
}

/// Markers already in a text (what the doors on the way in replaced).
pub fn markers_in(bytes: &[u8]) -> usize {
    // Built once: a counter calls this for every line of a run.
    marker_finder().find_iter(bytes).count()
}
