//! What a body must be before the server sees it: UTF-8, JSON of a bounded
//! shape, one JSON-RPC 2.0 message that tower-lsp-server will parse. A body
//! the server fails to parse ends its input stream (an id that is not an
//! i64, a lone surrogate, deep nesting), so every rule of its types is
//! checked here, by one pass of serde_json over the text that decodes every
//! string and keeps nothing but the few top-level fields it judges.

use super::{BadFrame, FRAME_ERROR_METHOD};
use crate::core::message_shape::Shape;
use serde::de::{self, Deserialize, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

pub(super) fn check_body(body: Vec<u8>) -> Result<Vec<u8>, BadFrame> {
    let text = std::str::from_utf8(&body)
        .map_err(|e| BadFrame::parse(format!("message body is not UTF-8: {e}")))?;
    let parsed = serde_json::from_str::<Top>(text);
    if let Some(why) = Shape::of(text.as_bytes()).refusal() {
        let id = match &parsed {
            Ok(Top::Message(message)) => message.id_value(),
            // Too deep for the parser: the id is still a top-level member.
            _ => crate::core::json_skim::top_level_id(text.as_bytes()).unwrap_or(Value::Null),
        };
        return Err(BadFrame::invalid(id, why));
    }
    let message = match parsed {
        Ok(Top::Message(message)) => message,
        Ok(Top::Batch) => return Err(BadFrame::invalid(Value::Null, "batches are not supported")),
        Ok(Top::Scalar) => {
            return Err(BadFrame::invalid(
                Value::Null,
                "a message must be a JSON object",
            ))
        }
        Err(e) => return Err(BadFrame::parse(format!("message body is not JSON: {e}"))),
    };
    message.check().map(|()| body)
}

/// The ids the server's own types accept.
pub(super) fn valid_id(id: &Value) -> bool {
    id.is_null() || id.is_string() || id.as_i64().is_some()
}

/// A top-level field, kept only as far as the checks need it.
#[derive(Debug, PartialEq)]
enum Field<'a> {
    Null,
    Int(i64),
    Str(Cow<'a, str>),
    /// Anything else, by what it is ("a number", "an array").
    Other(&'static str),
}

impl Field<'_> {
    fn what(&self) -> &'static str {
        match self {
            Field::Null => "null",
            Field::Int(_) => "an integer",
            Field::Str(_) => "a string",
            Field::Other(what) => what,
        }
    }
}

/// The members of a message object that tower-lsp-server's `Request` and
/// `Response` read; every other member is checked and skipped.
#[derive(Debug, Default)]
struct Message<'a> {
    jsonrpc: Option<Field<'a>>,
    method: Option<Field<'a>>,
    id: Option<Field<'a>>,
    params: bool,
    result: bool,
    error: Option<&'a RawValue>,
    /// A member given twice, which the server's types refuse.
    duplicate: Option<&'static str>,
}

enum Top<'a> {
    Message(Message<'a>),
    Batch,
    Scalar,
}

impl Message<'_> {
    /// The id to answer with, when it is one the server's types accept.
    fn id_value(&self) -> Value {
        match &self.id {
            Some(Field::Int(id)) => Value::from(*id),
            Some(Field::Str(id)) => Value::String(id.to_string()),
            _ => Value::Null,
        }
    }

    /// The rules of `Request` (tried after `Response`: the server's message
    /// type is an untagged enum of the two) and of `Response`.
    fn check(&self) -> Result<(), BadFrame> {
        let id = self.id_value();
        if !matches!(&self.jsonrpc, Some(Field::Str(v)) if v == "2.0") {
            return Err(BadFrame::invalid(id, "`jsonrpc` must be \"2.0\""));
        }
        if let Some(name) = self.duplicate {
            return Err(BadFrame::invalid(id, format!("duplicate member `{name}`")));
        }
        let bad_id = self
            .id
            .as_ref()
            .filter(|id| matches!(id, Field::Other(_)))
            .map(|other| {
                BadFrame::invalid(
                    Value::Null,
                    format!(
                        "`id` must be an integer, a string or null, not {}",
                        other.what()
                    ),
                )
            });
        match &self.method {
            Some(Field::Str(method)) if method == FRAME_ERROR_METHOD => {
                Err(BadFrame::invalid(id, "reserved method name"))
            }
            // Else the server would take the request for a response and
            // leave it unanswered.
            Some(Field::Str(_)) if self.result || self.error.is_some() => Err(BadFrame::invalid(
                id,
                "a request carries no `result` or `error`",
            )),
            Some(Field::Str(_)) => bad_id.map_or(Ok(()), Err),
            Some(other) => Err(BadFrame::invalid(
                id,
                format!("`method` must be a string, not {}", other.what()),
            )),
            // A response to a request of ours.
            None if self.result || self.error.is_some() => self.check_response().map_err(|why| {
                BadFrame::invalid(Value::Null, format!("not a JSON-RPC 2.0 response: {why}"))
            }),
            None => Err(BadFrame::invalid(id, "neither a request nor a response")),
        }
    }

    fn check_response(&self) -> Result<(), String> {
        match &self.id {
            None => return Err("`id` is missing".into()),
            Some(Field::Other(what)) => return Err(format!("`id` is {what}")),
            Some(_) => {}
        }
        match (self.result, self.error) {
            (true, Some(_)) => Err("both `result` and `error`".into()),
            (true, None) => Ok(()),
            (false, Some(error)) => serde_json::from_str::<ErrorObject>(error.get())
                .map(|_| ())
                .map_err(|e| format!("`error`: {e}")),
            (false, None) => Err("no `result` or `error`".into()),
        }
    }
}

/// tower-lsp-server's `Error`, without keeping its data.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ErrorObject<'a> {
    #[serde(rename = "code")]
    _code: i64,
    #[serde(borrow, rename = "message")]
    _message: Cow<'a, str>,
    #[serde(default, rename = "data")]
    _data: Option<Skim>,
}

/// Any JSON value, walked the way the server's parse walks it (every
/// string decoded, so a lone surrogate fails here as it would there) and
/// dropped as it goes: memory stays flat however big the value is.
/// (`IgnoredAny` would skip strings without decoding them.)
struct Skim;

impl<'de> Deserialize<'de> for Skim {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(SkimVisitor)
    }
}

struct SkimVisitor;

impl<'de> Visitor<'de> for SkimVisitor {
    type Value = Skim;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Skim, E> {
        Ok(Skim)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Skim, E> {
        Ok(Skim)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Skim, E> {
        Ok(Skim)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Skim, E> {
        Ok(Skim)
    }
    fn visit_str<E>(self, _: &str) -> Result<Skim, E> {
        Ok(Skim)
    }
    fn visit_unit<E>(self) -> Result<Skim, E> {
        Ok(Skim)
    }
    fn visit_none<E>(self) -> Result<Skim, E> {
        Ok(Skim)
    }
    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Skim, D::Error> {
        Skim::deserialize(deserializer)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Skim, A::Error> {
        while seq.next_element::<Skim>()?.is_some() {}
        Ok(Skim)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Skim, A::Error> {
        while map.next_entry::<Skim, Skim>()?.is_some() {}
        Ok(Skim)
    }
}

impl<'de> Deserialize<'de> for Field<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(FieldVisitor)
    }
}

struct FieldVisitor;

impl<'de> Visitor<'de> for FieldVisitor {
    type Value = Field<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Field<'de>, E> {
        Ok(Field::Other("a boolean"))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Field<'de>, E> {
        Ok(Field::Int(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Field<'de>, E> {
        Ok(i64::try_from(v).map_or(Field::Other("a number beyond i64"), Field::Int))
    }
    fn visit_f64<E>(self, _: f64) -> Result<Field<'de>, E> {
        Ok(Field::Other("a fractional number"))
    }
    fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Field<'de>, E> {
        Ok(Field::Str(Cow::Borrowed(v)))
    }
    fn visit_str<E>(self, v: &str) -> Result<Field<'de>, E> {
        Ok(Field::Str(Cow::Owned(v.to_string())))
    }
    fn visit_unit<E>(self) -> Result<Field<'de>, E> {
        Ok(Field::Null)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Field<'de>, A::Error> {
        SkimVisitor.visit_seq(seq).map(|_| Field::Other("an array"))
    }
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Field<'de>, A::Error> {
        SkimVisitor
            .visit_map(map)
            .map(|_| Field::Other("an object"))
    }
}

impl<'de> Deserialize<'de> for Top<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(TopVisitor)
    }
}

struct TopVisitor;

impl<'de> Visitor<'de> for TopVisitor {
    type Value = Top<'de>;

    fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Top<'de>, E> {
        Ok(Top::Scalar)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Top<'de>, E> {
        Ok(Top::Scalar)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Top<'de>, E> {
        Ok(Top::Scalar)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Top<'de>, E> {
        Ok(Top::Scalar)
    }
    fn visit_str<E>(self, _: &str) -> Result<Top<'de>, E> {
        Ok(Top::Scalar)
    }
    fn visit_unit<E>(self) -> Result<Top<'de>, E> {
        Ok(Top::Scalar)
    }
    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<Top<'de>, A::Error> {
        SkimVisitor.visit_seq(seq).map(|_| Top::Batch)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Top<'de>, A::Error> {
        let mut message = Message::default();
        while let Some(key) = map.next_key::<Key>()? {
            let seen = match key {
                Key::Jsonrpc => put(&mut message.jsonrpc, map.next_value()?),
                Key::Method => put(&mut message.method, map.next_value()?),
                Key::Id => put(&mut message.id, map.next_value()?),
                Key::Params => {
                    map.next_value::<Skim>()?;
                    std::mem::replace(&mut message.params, true)
                }
                Key::Result => {
                    map.next_value::<Skim>()?;
                    std::mem::replace(&mut message.result, true)
                }
                Key::Error => put(&mut message.error, map.next_value()?),
                Key::Other => map.next_value::<Skim>().map(|_| false)?,
            };
            if seen {
                message.duplicate.get_or_insert(key.name());
            }
        }
        Ok(Top::Message(message))
    }
}

/// Keeps the first value of a member; true when it was there already.
fn put<T>(slot: &mut Option<T>, value: T) -> bool {
    if slot.is_some() {
        return true;
    }
    *slot = Some(value);
    false
}

#[derive(Clone, Copy)]
enum Key {
    Jsonrpc,
    Method,
    Id,
    Params,
    Result,
    Error,
    Other,
}

impl Key {
    fn name(self) -> &'static str {
        match self {
            Key::Jsonrpc => "jsonrpc",
            Key::Method => "method",
            Key::Id => "id",
            Key::Params => "params",
            Key::Result => "result",
            Key::Error => "error",
            Key::Other => "?",
        }
    }
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl Visitor<'_> for KeyVisitor {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_str<E: de::Error>(self, name: &str) -> Result<Key, E> {
                Ok(match name {
                    "jsonrpc" => Key::Jsonrpc,
                    "method" => Key::Method,
                    "id" => Key::Id,
                    "params" => Key::Params,
                    "result" => Key::Result,
                    "error" => Key::Error,
                    _ => Key::Other,
                })
            }
        }
        deserializer.deserialize_identifier(KeyVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use tower_lsp_server::jsonrpc::{Request, Response};

    fn check(text: &str) -> Result<(), BadFrame> {
        check_body(text.as_bytes().to_vec()).map(|_| ())
    }

    #[test]
    fn a_body_over_the_shape_limits_is_refused_with_its_id() {
        let many = "{\"a\":0},".repeat(crate::core::message_shape::MAX_CONTAINERS);
        let body =
            format!(r#"{{"jsonrpc":"2.0","method":"debug/status","params":[{many}0],"id":"big"}}"#);
        let refused = check(&body).unwrap_err();
        assert_eq!(
            (refused.code, refused.id.clone()),
            (-32600, Value::from("big"))
        );
        assert!(
            refused.message.contains("arrays and objects"),
            "{refused:?}"
        );
        // Too deep for serde_json itself: refused, its top-level id still
        // read (skimmed, not parsed), however deep the rest nests.
        for levels in [200, 100_000] {
            let deep = format!("{}{}", "[".repeat(levels), "]".repeat(levels));
            let body = format!(r#"{{"jsonrpc":"2.0","params":{deep},"id":3,"method":"x"}}"#);
            let refused = check(&body).unwrap_err();
            assert_eq!((refused.code, refused.id.clone()), (-32600, Value::from(3)));
        }
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let body = format!(r#"{{"jsonrpc":"2.0","id":3,"method":"x","params":{deep}}}"#);
        let refused = check(&body).unwrap_err();
        assert!(refused.message.contains("deep"), "{refused:?}");
    }

    #[test]
    fn what_the_servers_types_refuse_is_refused_with_a_reason() {
        let cases = [
            (
                r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"x"}"#,
                "duplicate member `id`",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"x","params":1,"params":2}"#,
                "`params`",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"x","result":1}"#,
                "no `result`",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
                "`method` must be a string",
            ),
            (
                r#"{"jsonrpc":"2.0","id":true,"method":"x"}"#,
                "not a boolean",
            ),
            (r#"{"jsonrpc":"2.0","result":1}"#, "`id` is missing"),
            (r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{}}"#, "both"),
            (r#"{"jsonrpc":"2.0","id":1,"error":{"code":1}}"#, "`error`"),
            (
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m","x":0}}"#,
                "`error`",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"\ud800"}}"#,
                "`error`",
            ),
        ];
        for (body, words) in cases {
            let refused = check(body).expect_err(body);
            assert_eq!(refused.code, -32600, "{body}: {refused:?}");
            assert!(refused.message.contains(words), "{body}: {refused:?}");
        }
        let error = r#"{"jsonrpc":"2.0","id":null,"error":{"code":1,"message":"m","data":[1]}}"#;
        assert_eq!(check(error), Ok(()));
    }

    /// Pieces a hostile client builds messages from.
    const KEYS: &[&str] = &["jsonrpc", "method", "id", "params", "result", "error", "x"];
    const VALUES: &[&str] = &[
        r#""2.0""#,
        r#""1.0""#,
        "1",
        "-3",
        "1.5",
        "9223372036854775808",
        "null",
        "true",
        r#""debug/status""#,
        r#""$/debugSidecar/frameError""#,
        r#""\u00e9\n""#,
        r#""\ud800""#,
        r#"[1,{"a":"\udc00"}]"#,
        r#"[1,{"a":"\u00e9"},[[]]]"#,
        "{}",
        r#"{"code":1,"message":"m"}"#,
        r#"{"code":"1","message":"m"}"#,
        r#"{"code":1,"message":"m","data":{"\ud800":1}}"#,
    ];

    /// The body as the server's message type (an untagged enum, `Response`
    /// tried first) would read it.
    fn read_by_server(text: &str) -> Option<&'static str> {
        if serde_json::from_str::<Response>(text).is_ok() {
            Some("response")
        } else if serde_json::from_str::<Request>(text).is_ok() {
            Some("request")
        } else {
            None
        }
    }

    proptest! {
        #[test]
        fn a_forwarded_body_is_read_by_the_server_as_what_it_is(
            versioned in prop::bool::weighted(0.8),
            request in prop::bool::weighted(0.5),
            more in prop::collection::vec((0..KEYS.len(), 0..VALUES.len()), 0..5)
        ) {
            // Mostly near-valid messages, so the rules past the first are reached.
            let mut members = Vec::new();
            if versioned {
                members.push((0, 0));
            }
            if request {
                members.push((1, 8));
            }
            members.extend(more);
            let text = format!(
                "{{{}}}",
                members
                    .iter()
                    .map(|(k, v)| format!("\"{}\":{}", KEYS[*k], VALUES[*v]))
                    .collect::<Vec<_>>()
                    .join(",")
            );
            let has = |key: &str| members.iter().any(|(k, _)| KEYS[*k] == key);
            let forwarded = check(&text).is_ok();
            if forwarded {
                let want = if has("method") { "request" } else { "response" };
                prop_assert_eq!(read_by_server(&text), Some(want), "{}", text);
            }
            // Whatever the old full parse let through as a request still
            // passes, unless it also carried `result` or `error`.
            let old = serde_json::from_str::<Value>(&text).ok().filter(|value| {
                value["jsonrpc"] == "2.0"
                    && value["method"].as_str().is_some_and(|m| m != FRAME_ERROR_METHOD)
                    && serde_json::from_str::<Request>(&text).is_ok()
            });
            if old.is_some() && !has("result") && !has("error") {
                prop_assert!(forwarded, "{} was refused: {:?}", text, check(&text));
            }
        }
    }
}
