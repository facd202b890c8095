//! Revisions of saved state (a session, an agent's activity): a counter
//! that grows by one on every write, so watchers and clients can tell a
//! newer state from one they have. Never wraps: a revision that went back to
//! 0 would read as a reset, and in a debug build the overflow would panic.

/// The largest revision: the largest integer every JSON client reads
/// exactly (2^53 - 1; a JavaScript editor parses numbers as doubles). A
/// sidecar writing one revision a millisecond reaches it in 285,000 years.
pub const MAX_REVISION: u64 = (1 << 53) - 1;

/// The revision after `revision`: one more, never past [`MAX_REVISION`].
/// At the cap it stays (saturated): a watcher then tells writes apart by
/// their time as well (`changed`).
pub fn next_revision(revision: u64) -> u64 {
    revision.saturating_add(1).min(MAX_REVISION)
}

/// A revision as read from a saved file. One above [`MAX_REVISION`] was
/// never written by a sidecar (a hostile or damaged file): the count starts
/// over from 0, as after damage, so the session still takes commands and
/// every later write is seen as new.
pub fn revived_revision(saved: u64) -> u64 {
    if saved > MAX_REVISION {
        0
    } else {
        saved
    }
}

/// Whether a state saved at `(revision, updated_at)` is news to one who
/// last saw `known`: any other revision (after a reset revisions start
/// again), or, at a saturated revision, another write time.
pub fn changed(known: (u64, u64), saved: (u64, u64)) -> bool {
    known.0 != saved.0 || (saved.0 == MAX_REVISION && known.1 != saved.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn revisions_grow_by_one_and_saturate_instead_of_wrapping() {
        assert_eq!(next_revision(0), 1);
        assert_eq!(next_revision(41), 42);
        assert_eq!(next_revision(MAX_REVISION - 1), MAX_REVISION);
        assert_eq!(next_revision(MAX_REVISION), MAX_REVISION);
        assert_eq!(next_revision(u64::MAX), MAX_REVISION, "never wraps to 0");
    }

    #[test]
    fn a_revision_no_sidecar_wrote_starts_over_and_keeps_counting() {
        assert_eq!(revived_revision(7), 7);
        assert_eq!(revived_revision(MAX_REVISION), MAX_REVISION);
        let revived = revived_revision(u64::MAX);
        assert_eq!(revived, 0);
        assert_eq!(next_revision(revived), 1);
        assert!(
            changed((u64::MAX, 5), (1, 6)),
            "the first write after it is news"
        );
    }

    #[test]
    fn a_saturated_revision_still_tells_writes_apart_by_their_time() {
        assert!(!changed((3, 10), (3, 10)));
        assert!(changed((3, 10), (4, 11)));
        assert!(
            !changed((3, 10), (3, 11)),
            "below the cap the revision decides"
        );
        assert!(changed((MAX_REVISION, 10), (MAX_REVISION, 11)));
        assert!(!changed((MAX_REVISION, 11), (MAX_REVISION, 11)));
    }
}
