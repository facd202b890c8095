//! Where in a built-in shape's match its secret lies (the group `s` of its
//! pattern), read from the match's text in the forms that leave no doubt.
//! The regular expression's own captures cost about ten times finding the
//! match (its bounded backtracker runs over the whole pattern: about 3 us
//! for `Authorization: Bearer` here), and a line holding a secret paid that
//! for each shape it matched. Any other form (`None`) is left to them.

use std::ops::Range;

/// The secret's span in `whole`, a match of the built-in shape `kind`;
/// `None` when the form of the match leaves it to the captures.
pub(super) fn secret_in(kind: &str, whole: &str) -> Option<Range<usize>> {
    let to_end = |start: usize| (start < whole.len()).then_some(start..whole.len());
    match kind {
        // `bearer\s+(s)`, `basic\s+(s)`: the word and the secret hold no
        // space, so the secret starts after the first run of them.
        "bearer" | "basic-auth" => to_end(after_spaces(whole, whole.find(char::is_whitespace)?)),
        // `cookie\s*:\s*(s)`: the word holds no `:`; the value may hold
        // spaces, but not start with them while anything else follows.
        "cookie" => to_end(after_spaces(whole, whole.find(':')? + 1)),
        // `scheme://user:(s)@`: neither the scheme nor the user hold a `:`.
        "url-password" => {
            let user = whole.find("://")? + 3;
            let colon = user + whole[user..].find(':')?;
            let end = whole.len().checked_sub(1)?;
            (whole.as_bytes()[end] == b'@' && colon + 1 < end).then_some(colon + 1..end)
        }
        // `key = (s)`: the key holds no `:` or `=`, and a value that starts
        // after the spaces is the secret, unless a `(` or `{` in it may be
        // a call or an object the pattern looks into.
        // After a scheme (`Bearer abc123`): a word of letters then spaces
        // is in the match only as the scheme, and the value follows them.
        "assignment" => {
            let start = after_spaces(whole, whole.find([':', '='])? + 1);
            let value = &whole[start..];
            let word = value
                .find(|c: char| !c.is_alphabetic())
                .unwrap_or(value.len());
            let start = match value[word..].chars().next() {
                Some(c) if word > 0 && c.is_whitespace() => after_spaces(whole, start + word),
                _ => start,
            };
            to_end(start).filter(|_| !whole[start..].contains(['(', '{']))
        }
        _ => None,
    }
}

/// Where the first character at or after `from` that is not a space (as
/// the patterns' Unicode `\s` has it) is: the end of `text` if none.
fn after_spaces(text: &str, from: usize) -> usize {
    text[from..]
        .find(|c: char| !c.is_whitespace())
        .map_or(text.len(), |n| from + n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use regex::Regex;

    /// The built-in shapes with a group `s`, compiled.
    fn shapes() -> Vec<(String, Regex)> {
        super::super::shapes::all_shapes(&[], &[])
            .shapes
            .into_iter()
            .filter(|shape| shape.pattern.contains("(?P<s>"))
            .map(|shape| {
                let regex = Regex::new(&shape.pattern).unwrap();
                (shape.kind, regex)
            })
            .collect()
    }

    /// Each match of each shape in `text`: the span read from it (when it
    /// reads one) against the captures' group `s`; how many were read.
    fn agrees(text: &str) -> Result<usize, TestCaseError> {
        let mut read = 0;
        for (kind, regex) in shapes() {
            for found in regex.find_iter(text) {
                let captured = regex
                    .captures_at(text, found.start())
                    .and_then(|c| c.name("s"))
                    .map(|s| s.range());
                if let Some(span) = secret_in(&kind, found.as_str()) {
                    let span = found.start() + span.start..found.start() + span.end;
                    prop_assert_eq!(Some(span), captured, "{} in {:?}", kind, text);
                    read += 1;
                }
            }
        }
        Ok(read)
    }

    #[test]
    fn the_common_forms_are_read_from_the_match() {
        for text in [
            "request 0: Authorization: Bearer abcdef0000000000abcdef",
            "Authorization: Basic\u{a0}dXNlcjpwYXNzd29yZA==",
            "Set-Cookie:  session=abc; Path=/",
            "connect postgres://app:pw1@db:5432/shop",
            "password = \"hunter2 and more\"",
            "API_KEY=b'sk-12345'",
            "Authorization: Bearer abc123",
            "authorization = token\u{a0}9f8e7d6c",
        ] {
            let read = agrees(text).unwrap();
            assert!(read >= 1, "{text}: no span read");
        }
    }

    proptest! {
        #[test]
        fn a_span_read_from_the_match_is_the_captures_group(
            pieces in proptest::collection::vec(
                proptest::sample::select(vec![
                    "Bearer", "bearer ", "BASIC", "ba\u{17f}ic", "Cookie", "set-cookie",
                    "Authorization", "password", "api_key", "session_id", "db_", "\"", "'",
                    ":", "=", ": ", " ", "\t", "\u{a0}", "\u{3000}", "\n", "\r", "(", ")",
                    "{", "}", "@", "/", "://", "https", "user", "Some(", "b'", "u\"", "&",
                    "abcdefghijklmnop", "0123456789", "\u{212a}", "\u{17f}", "x", "==",
                    "token", "Token ", "[redacted:x#0000]",
                ]),
                0..24,
            )
        ) {
            agrees(&pieces.concat())?;
        }
    }
}
