//! Logpoints (DESIGN section 7, "Two kinds of probe, one ledger"): a file, a
//! line and the expressions to record there; no file is edited. What a
//! logpoint may hold is bounded here, once, for every face; the line's
//! fingerprint tells `run` whether the line still reads as it did.

use super::error::DomainError;

/// Live logpoints one session may hold.
pub const MAX_LOGPOINTS: usize = 32;
/// Expressions one logpoint records.
pub const MAX_EXPRESSIONS: usize = 16;
/// Bytes of one expression.
pub const MAX_EXPRESSION_BYTES: usize = 200;
/// Bytes of a logpoint's message.
pub const MAX_MESSAGE_BYTES: usize = 200;
/// Bytes of one recorded value (its JSON); a longer one is kept as the
/// first bytes of its text and says how long it was.
pub const VALUE_CAP: usize = 1024;
/// Records one run writes for one logpoint; later hits are only counted.
pub const MAX_HITS_PER_LOGPOINT: u64 = 10_000;

/// The languages `debug-sidecar run` can set logpoints in, by file name.
pub fn language_of(file: &str) -> Option<&'static str> {
    let extension = file.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase())?;
    match extension.as_str() {
        "py" => Some("python"),
        "js" | "mjs" | "cjs" => Some("javascript"),
        _ => None,
    }
}

/// The expressions as given, checked: at least one, each on one line and
/// within its bytes, at most `MAX_EXPRESSIONS`.
pub fn checked_expressions(variables: &[String]) -> Result<Vec<String>, DomainError> {
    let expressions: Vec<String> = variables
        .iter()
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
        .collect();
    if expressions.is_empty() {
        return Err(DomainError::invalid(
            "variables",
            "a logpoint needs at least one expression to record",
        ));
    }
    if expressions.len() > MAX_EXPRESSIONS {
        return Err(DomainError::invalid(
            "variables",
            format!("a logpoint records at most {MAX_EXPRESSIONS} expressions"),
        ));
    }
    for expression in &expressions {
        if expression.len() > MAX_EXPRESSION_BYTES {
            return Err(DomainError::invalid(
                "variables",
                format!("each expression is at most {MAX_EXPRESSION_BYTES} bytes"),
            ));
        }
        if expression.chars().any(char::is_control) {
            return Err(DomainError::invalid(
                "variables",
                "an expression is one line without control characters",
            ));
        }
    }
    Ok(expressions)
}

/// The message, checked: one line within its bytes; empty is none.
pub fn checked_message(message: Option<&str>) -> Result<Option<String>, DomainError> {
    let Some(message) = message.map(str::trim).filter(|m| !m.is_empty()) else {
        return Ok(None);
    };
    if message.len() > MAX_MESSAGE_BYTES || message.chars().any(char::is_control) {
        return Err(DomainError::invalid(
            "message",
            format!("a logpoint's message is one line of at most {MAX_MESSAGE_BYTES} bytes"),
        ));
    }
    Ok(Some(message.to_string()))
}

/// The fingerprint of a line's text: FNV-1a (64 bits) of it trimmed, so
/// re-indenting keeps it and any other change does not.
pub fn line_hash(text: &str) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in text.trim().bytes() {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    format!("{hash:016x}")
}

/// Where a logpoint's line is in the file as it reads now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineCheck {
    /// The line reads as it did.
    Same,
    /// That text is now on this line, and only there.
    Moved { to: u32 },
    /// The line changed (or the file is shorter): the logpoint is not set.
    Changed,
}

/// Finds a logpoint's line in the file's current lines.
pub fn check_line(lines: &[&str], line: u32, hash: &str) -> LineCheck {
    let at = |n: usize| lines.get(n).is_some_and(|text| line_hash(text) == hash);
    let index = (line as usize).saturating_sub(1);
    if line > 0 && at(index) {
        return LineCheck::Same;
    }
    let mut found = (0..lines.len()).filter(|&n| at(n));
    match (found.next(), found.next()) {
        (Some(n), None) => LineCheck::Moved { to: n as u32 + 1 },
        _ => LineCheck::Changed,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reindented_line_keeps_its_hash_and_an_edited_one_does_not() {
        assert_eq!(line_hash("  total += x"), line_hash("total += x\t"));
        assert_ne!(line_hash("total += x"), line_hash("total -= x"));
    }

    #[test]
    fn a_line_is_found_where_it_was_where_it_moved_or_not_at_all() {
        let hash = line_hash("b = 2");
        assert_eq!(check_line(&["a = 1", "b = 2"], 2, &hash), LineCheck::Same);
        assert_eq!(
            check_line(&["x", "a = 1", "b = 2"], 2, &hash),
            LineCheck::Moved { to: 3 }
        );
        assert_eq!(
            check_line(&["a = 1", "b = 3"], 2, &hash),
            LineCheck::Changed
        );
        // Twice elsewhere: which one was meant is not known.
        assert_eq!(
            check_line(&["b = 2", "x", "b = 2"], 2, &hash),
            LineCheck::Changed
        );
        assert_eq!(check_line(&["b = 2"], 0, &hash), LineCheck::Moved { to: 1 });
    }

    #[test]
    fn expressions_are_bounded() {
        assert!(checked_expressions(&[]).is_err());
        assert!(checked_expressions(&["  ".into()]).is_err());
        assert!(checked_expressions(&["a\nb".into()]).is_err());
        assert!(checked_expressions(&["x".repeat(MAX_EXPRESSION_BYTES + 1)]).is_err());
        assert!(checked_expressions(&vec!["x".into(); MAX_EXPRESSIONS + 1]).is_err());
        assert_eq!(
            checked_expressions(&[" total ".into(), "".into(), "items[0]".into()]).unwrap(),
            vec!["total".to_string(), "items[0]".to_string()]
        );
    }

    #[test]
    fn languages_by_extension() {
        assert_eq!(language_of("app/cart.py"), Some("python"));
        assert_eq!(language_of("src/x.MJS"), Some("javascript"));
        assert_eq!(language_of("main.go"), None);
        // TypeScript needs a compiler between it and Node: a source probe.
        assert_eq!(language_of("src/app.ts"), None);
        assert_eq!(language_of("Makefile"), None);
    }
}
