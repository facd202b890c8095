//! Reading a few top-level members of a JSON object without parsing the
//! rest: a body too deep for the parser (a JSON-RPC request refused for its
//! nesting still has its `id`) or too large to read whole (a hook input cut
//! at its read limit still has its `cwd`). Nested values are skipped by
//! counting brackets outside strings; nothing recurses.

use serde_json::Value;

/// The message's top-level `id`, read by skimming only the outer object's
/// members: a JSON-RPC body refused for its depth is still answered with
/// its id. `None` when there is no top-level `id` that is a string or an
/// integer.
pub fn top_level_id(bytes: &[u8]) -> Option<Value> {
    let (members, _) = top_level_members(bytes, |key| key == "id", 1024);
    let (_, value) = members.into_iter().next()?;
    (value.is_string() || value.as_i64().is_some()).then_some(value)
}

/// The members of the outer object that `wanted` names and whose values
/// take at most `max_value` bytes, in order, read from a prefix of the
/// text: other values are skipped by counting brackets, never parsed, and
/// the text may end anywhere (a body cut at a read limit). The flag says
/// whether the object was read to its end.
pub fn top_level_members(
    bytes: &[u8],
    wanted: impl Fn(&str) -> bool,
    max_value: usize,
) -> (Vec<(String, Value)>, bool) {
    let mut members = Vec::new();
    let mut at = skip_ws(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return (members, false);
    }
    at += 1;
    loop {
        at = skip_ws(bytes, at);
        match bytes.get(at) {
            Some(b'"') => {}
            Some(b'}') => return (members, true),
            _ => return (members, false),
        }
        let key_end = string_end(bytes, at + 1);
        let Ok(key) = serde_json::from_slice::<String>(&bytes[at..key_end]) else {
            return (members, false);
        };
        at = skip_ws(bytes, key_end);
        if bytes.get(at) != Some(&b':') {
            return (members, false);
        }
        at = skip_ws(bytes, at + 1);
        let end = value_end(bytes, at);
        if wanted(&key) && end - at <= max_value {
            // A value the text cut short does not parse: it is left out.
            if let Ok(value) = serde_json::from_slice::<Value>(&bytes[at..end]) {
                members.push((key, value));
            }
        }
        at = skip_ws(bytes, end);
        match bytes.get(at) {
            Some(b',') => at += 1,
            Some(b'}') => return (members, true),
            _ => return (members, false),
        }
    }
}

/// Where the JSON value starting at `from` ends: a string, a container
/// (brackets counted outside strings) or a scalar up to its delimiter.
fn value_end(bytes: &[u8], from: usize) -> usize {
    match bytes.get(from) {
        Some(b'"') => string_end(bytes, from + 1),
        Some(b'{' | b'[') => {
            let mut depth = 0usize;
            let mut at = from;
            while at < bytes.len() {
                match bytes[at] {
                    b'"' => {
                        at = string_end(bytes, at + 1);
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return at + 1;
                        }
                    }
                    _ => {}
                }
                at += 1;
            }
            bytes.len()
        }
        _ => bytes[from.min(bytes.len())..]
            .iter()
            .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
            .map_or(bytes.len(), |n| from + n),
    }
}

fn skip_ws(bytes: &[u8], from: usize) -> usize {
    bytes[from.min(bytes.len())..]
        .iter()
        .position(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
        .map_or(bytes.len(), |n| from + n)
}

/// Just past the quote that closes a string whose content starts at `from`
/// (the end of `bytes` when it is never closed).
pub fn string_end(bytes: &[u8], mut from: usize) -> usize {
    while let Some(found) = memchr::memchr2(b'"', b'\\', bytes.get(from..).unwrap_or_default()) {
        let at = from + found;
        if bytes[at] == b'"' {
            return at + 1;
        }
        // An escape: whatever follows the backslash is not a quote of ours.
        from = at + 2;
    }
    bytes.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_top_level_id_is_read_however_deep_the_rest_nests() {
        use serde_json::json;
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        let body = format!(
            r#"{{"jsonrpc":"2.0","params":{{"a":{deep},"id":"inner"}},"id":7,"method":"m"}}"#
        );
        assert_eq!(top_level_id(body.as_bytes()), Some(json!(7)));
        let body = format!(r#"{{ "params" : {deep} , "id" : "a\"b" }}"#);
        assert_eq!(top_level_id(body.as_bytes()), Some(json!("a\"b")));
        assert_eq!(top_level_id(br#"{"id":1.5}"#), None);
        assert_eq!(top_level_id(br#"{"params":{"id":3}}"#), None);
        assert_eq!(top_level_id(br#"[{"id":3}]"#), None);
        assert_eq!(top_level_id(br#"{"id":"#), None);
        assert_eq!(top_level_id(b""), None);
    }

    #[test]
    fn members_are_read_from_a_prefix_cut_anywhere() {
        use serde_json::json;
        let text = format!(
            r#"{{"session_id":"c1","cwd":"/w","nested":{{"cwd":"no"}},"stop_hook_active":true,"prompt":"{}"}}"#,
            "x".repeat(10_000)
        );
        let wanted = |k: &str| k != "nested";
        let (members, whole) = top_level_members(text.as_bytes(), wanted, 1024);
        assert!(whole);
        assert_eq!(
            members,
            [
                ("session_id".to_string(), json!("c1")),
                ("cwd".to_string(), json!("/w")),
                ("stop_hook_active".to_string(), json!(true)),
            ]
        );
        for cut in 0..text.len().min(200) {
            let (members, whole) = top_level_members(&text.as_bytes()[..cut], wanted, 1024);
            assert!(!whole);
            assert!(members.len() <= 3);
            if cut > 30 {
                assert_eq!(members[1].1, json!("/w"), "cut at {cut}");
            }
        }
    }
}
