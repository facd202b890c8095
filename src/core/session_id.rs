//! Session ids name directories under the state directory, so they are
//! checked before anything uses them: a bad id is a clear error, never a path.

use super::error::DomainError;

pub const MAX_SESSION_ID_LEN: usize = 128;

/// The session used when a request names none and nothing else is known.
pub const DEFAULT_SESSION: &str = "default";

/// A session id is also the tag written into probe markers, which are read
/// back by splitting on whitespace inside any language's comment: only
/// letters, digits, `.`, `_` and `-` survive that (harness ids are UUIDs).
pub fn check_session_id(id: &str) -> Result<(), DomainError> {
    let reason = if id.is_empty() {
        "must not be empty"
    } else if id.len() > MAX_SESSION_ID_LEN {
        "must be at most 128 bytes"
    } else if !id
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    {
        "may only hold letters, digits, `.`, `_` and `-` (no spaces, no path separators)"
    } else if id.starts_with('.') {
        "must not start with a dot"
    } else {
        return Ok(());
    };
    Err(DomainError::invalid("sessionId", reason))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_that_could_escape_the_state_directory_are_refused() {
        for bad in [
            "",
            "..",
            "../../etc",
            "a/b",
            "a\\b",
            ".hidden",
            "c:x",
            "a\nb",
            "my session",
            "a\u{2028}b",
            "café",
        ] {
            assert!(check_session_id(bad).is_err(), "{bad:?} was accepted");
        }
        assert!(check_session_id(&"x".repeat(129)).is_err());
    }

    #[test]
    fn harness_ids_pass() {
        for good in [
            "default",
            "7f3c2a10-0b1e-4c4e-9d7e-2b1f0c9e8a11",
            "demo",
            "a.b_c-d",
        ] {
            assert!(check_session_id(good).is_ok(), "{good:?} was refused");
        }
    }
}
