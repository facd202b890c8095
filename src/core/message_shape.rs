//! How much a message would cost parsed, counted from its bytes alone
//! before anything parses it, and the bounds every face holds its messages
//! to (`serve`'s frames, `mcp`'s lines). Both faces' libraries parse a
//! message into JSON values (tower-lsp-server twice over), which cost up to
//! ~100 times the bytes of small objects; bounding what a message holds
//! bounds that, and the bounds leave room for any request a client sends.

use serde_json::Value;

/// The longest message accepted, in bytes.
pub const MAX_MESSAGE: usize = 8 * 1024 * 1024;

use crate::core::json_skim::string_end;

/// Arrays and objects in one body. A message list for `debug/context` of
/// thousands of messages holds a few per message.
pub const MAX_CONTAINERS: usize = 100_000;
/// Array elements and object members in one body, all levels together.
pub const MAX_ITEMS: usize = 1_000_000;
/// How deeply arrays and objects nest (the message object is level 1).
/// serde_json refuses 128 levels; real requests nest a handful.
pub const MAX_DEPTH: usize = 64;

/// What a body holds, outside its strings. The scan does not validate: a
/// body that is not JSON is refused by the parse that follows, and on such
/// a body the counts are only approximate.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Shape {
    pub containers: usize,
    pub items: usize,
    pub depth: usize,
}

impl Shape {
    pub fn of(bytes: &[u8]) -> Shape {
        let mut shape = Shape::default();
        let mut depth = 0usize;
        let mut at = 0;
        while at < bytes.len() {
            match bytes[at] {
                b'"' => {
                    at = string_end(bytes, at + 1);
                    continue;
                }
                b'{' | b'[' => {
                    shape.containers += 1;
                    depth += 1;
                    shape.depth = shape.depth.max(depth);
                    // A container that is not empty holds one item more
                    // than it has commas.
                    if !matches!(next_token(bytes, at + 1), Some(b'}' | b']')) {
                        shape.items += 1;
                    }
                }
                b'}' | b']' => depth = depth.saturating_sub(1),
                b',' => shape.items += 1,
                _ => {}
            }
            at += 1;
        }
        shape
    }

    /// Why a body of this shape is refused, if it is.
    pub fn refusal(&self) -> Option<String> {
        if self.depth > MAX_DEPTH {
            Some(format!(
                "message nests arrays and objects {} deep; at most {MAX_DEPTH} levels are accepted",
                self.depth
            ))
        } else if self.containers > MAX_CONTAINERS {
            Some(format!(
                "message holds {} arrays and objects; at most {MAX_CONTAINERS} are accepted",
                self.containers
            ))
        } else if self.items > MAX_ITEMS {
            Some(format!(
                "message holds {} array elements and object members; at most {MAX_ITEMS} are accepted",
                self.items
            ))
        } else {
            None
        }
    }
}

/// Why a message of `len` bytes, whose first bytes are `head` (all of it
/// when it is within `MAX_MESSAGE`), is refused before anything parses
/// it: the id to answer with (from its top-level `id`, else null) and why.
pub fn refusal(head: &[u8], len: usize) -> Option<(Value, String)> {
    let why = if len > MAX_MESSAGE {
        format!("message of {len} bytes exceeds the limit of {MAX_MESSAGE} bytes")
    } else {
        Shape::of(head).refusal()?
    };
    let id = crate::core::json_skim::top_level_id(head).unwrap_or(Value::Null);
    Some((id, why))
}

/// The first byte from `from` on that is not JSON whitespace.
fn next_token(bytes: &[u8], from: usize) -> Option<u8> {
    bytes
        .get(from..)?
        .iter()
        .copied()
        .find(|b| !matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(text: &str) -> (usize, usize, usize) {
        let shape = Shape::of(text.as_bytes());
        (shape.containers, shape.items, shape.depth)
    }

    #[test]
    fn containers_items_and_depth_are_counted_outside_strings() {
        assert_eq!(shape(r#"{}"#), (1, 0, 1));
        assert_eq!(shape(r#"{"a":[1,2,{ }],"b":[ ]}"#), (4, 5, 3));
        assert_eq!(shape(r#"[[[[0]]]]"#), (4, 4, 4));
        // Brackets, commas and escaped quotes inside strings are text.
        assert_eq!(shape(r#"{"a[,{":"]\"[,{\\","b":"\\"}"#), (1, 2, 1));
        assert_eq!(shape(r#"["\u005b", "x\\\"]"]"#), (1, 2, 1));
        // Unbalanced or unterminated input never panics.
        assert_eq!(shape(r#"]]]{"#), (1, 1, 1));
        assert_eq!(shape(r#"{"never closed \"#), (1, 1, 1));
        assert_eq!(shape(r#"["\"#), (1, 1, 1));
    }

    #[test]
    fn each_limit_is_named_when_it_is_passed() {
        let deep = format!("{}{}", "[".repeat(MAX_DEPTH), "]".repeat(MAX_DEPTH));
        assert_eq!(Shape::of(deep.as_bytes()).refusal(), None);
        let deeper = format!("[{deep}]");
        let why = Shape::of(deeper.as_bytes()).refusal().unwrap();
        assert!(why.contains("deep"), "{why}");

        let many = format!("[{}{{}}]", "{},".repeat(MAX_CONTAINERS - 2));
        assert_eq!(Shape::of(many.as_bytes()).refusal(), None);
        let more = format!("[{}{{}}]", "{},".repeat(MAX_CONTAINERS - 1));
        let why = Shape::of(more.as_bytes()).refusal().unwrap();
        assert!(why.contains("arrays and objects"), "{why}");

        let items = format!("[{}0]", "0,".repeat(MAX_ITEMS - 1));
        assert_eq!(Shape::of(items.as_bytes()).refusal(), None);
        let more = format!("[{}0]", "0,".repeat(MAX_ITEMS));
        let why = Shape::of(more.as_bytes()).refusal().unwrap();
        assert!(why.contains("elements and object members"), "{why}");
    }
}
