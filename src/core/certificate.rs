//! The fix certificate (issue 31, DESIGN section 8): one JSON document a
//! reviewer or CI reads once a session ended with its cleanup verified. It
//! holds the problem, each hypothesis with its verdict and the run lines it
//! cites, the runs before and after the fix, their hit tables, and the
//! cleanup receipt, sealed by a hash of its own content.
//!
//! Pure: the document's types, how citations are read from a hypothesis's
//! evidence, and the canonical form the hash is taken over.

use super::hits::NoHit;
use super::model::HypothesisStatus;
use super::rates::Attempts;
use super::reproduction::Ending;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

/// What the document says it is, in its `format` field.
pub const FORMAT: &str = "debug-sidecar/fix-certificate";
pub const VERSION: u32 = 1;
/// Citations read from one hypothesis's evidence.
pub const CITES_PER_HYPOTHESIS: usize = 50;
/// Lines one cited range may span (`r1-x:10-30` is cut to 20 lines).
pub const CITED_RANGE: u64 = 20;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Certificate {
    /// Always `debug-sidecar/fix-certificate`.
    pub format: String,
    pub version: u32,
    pub session_id: String,
    /// What was wrong, in the person's words.
    pub problem: String,
    /// When the session started and when its cleanup was verified (ms since
    /// the epoch).
    pub started_at: u64,
    pub ended_at: u64,
    pub rounds: u32,
    pub hypotheses: Vec<CertifiedHypothesis>,
    /// What the person reported, per round, in their words.
    pub observations: Vec<CertifiedObservation>,
    /// Every run of the session, in order.
    pub runs: Vec<CertifiedRun>,
    pub fix: FixRecord,
    pub cleanup: CleanupReceipt,
    /// `sha256:` and the hex digest of the document's canonical form
    /// without this field (`core::certificate::content_hash`).
    pub content_hash: String,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CertifiedHypothesis {
    pub id: String,
    pub statement: String,
    /// The final verdict.
    pub status: HypothesisStatus,
    /// The evidence as recorded.
    pub evidence: Vec<String>,
    /// The run lines the evidence cites (`<runId>:<line>`).
    pub cites: Vec<CitedLine>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CitedLine {
    pub run: String,
    /// 1-based line of the run's file.
    pub line: u64,
    /// `sha256:` digest of the line as the run held it when the certificate
    /// was written, redacted as every face shows it (a record with its
    /// secrets replaced, compact; other text as text); null when the run
    /// held no such line.
    pub sha256: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CertifiedObservation {
    pub round: u32,
    pub text: String,
}

/// Where a run stands against the fix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum Phase {
    /// A round before the one the person marked fixed in.
    BeforeFix,
    /// The round the person marked fixed in: the fix verified.
    AfterFix,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CertifiedRun {
    pub id: String,
    pub round: u32,
    pub phase: Phase,
    /// The agent ran it (`run_reproduction`), not the person.
    pub agent: bool,
    /// Non-blank lines of the run's file.
    pub lines: u64,
    /// The recorded programs (`debug-sidecar run`, `run_reproduction`), at
    /// most the last 256.
    pub programs: Vec<ProgramRecord>,
    /// How many of them failed, with the rate's 95% interval.
    pub attempts: Option<RateRecord>,
    /// Per probe of the run's round: lines with values, lines recording its
    /// own failure, and the reason when it logged no value.
    pub hits: Vec<HitRecord>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ProgramRecord {
    /// The exit record's line in the run's file.
    pub line: u64,
    pub command: String,
    pub ending: Ending,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RateRecord {
    pub failed: u64,
    pub total: u64,
    pub rate: f64,
    /// The Wilson 95% interval of the rate.
    pub low: f64,
    pub high: f64,
}

impl RateRecord {
    pub fn of(attempts: Attempts) -> Self {
        let (low, high) = attempts.interval();
        RateRecord {
            failed: attempts.failed,
            total: attempts.total,
            rate: round4(attempts.rate()),
            low: round4(low),
            high: round4(high),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct HitRecord {
    pub probe_id: String,
    pub hits: u64,
    pub failed: u64,
    /// Why it logged no value (`notReached`, `staleBuild`, ...); null when
    /// it did.
    pub reason: Option<NoHit>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FixRecord {
    /// The round the person marked fixed in.
    pub round: u32,
    /// The person marked it fixed over the evidence ("fixed anyway").
    pub anyway: bool,
    /// For a flaky bug: the failure rate before the fix against the attempts
    /// after it, and the one-sided exact test's p; null when no round's
    /// reproduction failed only some of the time.
    pub flaky: Option<FlakyRecord>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FlakyRecord {
    pub before: RateRecord,
    pub after: RateRecord,
    pub p: f64,
    /// p < 0.01.
    pub significant: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CleanupReceipt {
    /// When the scan that found no probe left ran (ms since the epoch).
    pub verified_at: u64,
    /// Files that scan read: the whole walk of the workspace and every file
    /// a probe was issued for or found in.
    pub files_scanned: usize,
    /// Every probe the session placed, all gone at the end.
    pub probes: Vec<RemovedProbe>,
    /// Texts only this session put in the tree (its probes' start markers,
    /// its run ids): `check --certificate` fails while any is in a file.
    pub fingerprints: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct RemovedProbe {
    pub id: String,
    /// `source` (a block in a file) or `logpoint` (in no file).
    pub kind: String,
    pub file: String,
    pub line: Option<u32>,
    pub round: u32,
    pub hypothesis_id: Option<String>,
}

fn round4(x: f64) -> f64 {
    (x * 10_000.0).round() / 10_000.0
}

/// The run lines a piece of evidence cites: `<runId>:<line>`,
/// `<runId>:<first>-<last>` or `<runId>#L<line>`, where the run id is one
/// of `runs`. A range gives each of its lines, at most `CITED_RANGE`.
pub fn citations(evidence: &str, runs: &[&str]) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let bytes = evidence.as_bytes();
    let mut at = 0;
    while let Some(found) = evidence[at..].find('r') {
        let start = at + found;
        at = start + 1;
        // A run id starts a word.
        if start > 0 && (bytes[start - 1].is_ascii_alphanumeric() || bytes[start - 1] == b'-') {
            continue;
        }
        let id_len = evidence[start..]
            .bytes()
            .take_while(|b| b.is_ascii_alphanumeric() || *b == b'-')
            .count();
        let id = &evidence[start..start + id_len];
        let Some(run) = runs.iter().find(|run| **run == id) else {
            continue;
        };
        let rest = &evidence[start + id_len..];
        let numbers = rest.strip_prefix(':').or_else(|| rest.strip_prefix("#L"));
        let Some(numbers) = numbers else {
            continue;
        };
        let (first, after) = leading_number(numbers);
        let Some(first) = first.filter(|n| *n > 0) else {
            continue;
        };
        let last = after
            .strip_prefix('-')
            .and_then(|tail| leading_number(tail.strip_prefix('L').unwrap_or(tail)).0)
            .filter(|last| *last >= first)
            .unwrap_or(first)
            .min(first.saturating_add(CITED_RANGE - 1));
        for line in first..=last {
            out.push((run.to_string(), line));
        }
        at = start + id_len;
    }
    out
}

fn leading_number(text: &str) -> (Option<u64>, &str) {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    (text[..digits].parse().ok(), &text[digits..])
}

/// `sha256:` and the hex digest of `bytes`.
pub fn digest(bytes: &[u8]) -> String {
    let sum = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for byte in sum.iter() {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// The document's canonical form: compact JSON with every object's keys
/// in byte order, so a reformatted or re-keyed copy hashes the same.
pub fn canonical(value: &Value) -> String {
    let mut out = String::new();
    write_canonical(value, &mut out);
    out
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(key.clone()).to_string());
                out.push(':');
                write_canonical(&map[key], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(item, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// The content hash of a certificate given as JSON: the digest of its
/// canonical form without `contentHash`.
pub fn content_hash(document: &Value) -> String {
    let mut body = document.clone();
    if let Some(map) = body.as_object_mut() {
        map.remove("contentHash");
    }
    digest(canonical(&body).as_bytes())
}

/// Seals a certificate: fills in its content hash.
pub fn seal(mut certificate: Certificate) -> Certificate {
    certificate.content_hash = String::new();
    let value = serde_json::to_value(&certificate).unwrap_or(Value::Null);
    certificate.content_hash = content_hash(&value);
    certificate
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn citations_name_known_runs_with_a_line_or_a_range() {
        let runs = ["r1-abc", "r2-def"];
        let text = "r1-abc:12 shows total=0; see r2-def:3-5, r2-def#L9, xr1-abc:4, r9-zzz:1, r1-abc:0, r1-abc: 7";
        assert_eq!(
            citations(text, &runs),
            vec![
                ("r1-abc".to_string(), 12),
                ("r2-def".to_string(), 3),
                ("r2-def".to_string(), 4),
                ("r2-def".to_string(), 5),
                ("r2-def".to_string(), 9),
            ]
        );
        // A range is cut, never walked to its end.
        assert_eq!(
            citations("r1-abc:1-1000000000000", &runs).len() as u64,
            CITED_RANGE
        );
        // A backwards range is its first line.
        assert_eq!(
            citations("r1-abc:9-3", &runs),
            vec![("r1-abc".to_string(), 9)]
        );
        assert!(citations("nothing here, ráté r", &runs).is_empty());
        // The largest line number neither overflows nor is lost.
        assert_eq!(
            citations("r1-abc:18446744073709551615", &runs),
            vec![("r1-abc".to_string(), u64::MAX)]
        );
    }

    #[test]
    fn the_hash_ignores_layout_and_key_order_but_not_content() {
        let a = json!({"b": [1, {"y": "x", "x": null}], "a": "é\n", "contentHash": "old"});
        let b: Value =
            serde_json::from_str("{ \"a\" : \"é\\n\", \"b\": [1, {\"x\": null, \"y\": \"x\"}] }")
                .unwrap();
        assert_eq!(content_hash(&a), content_hash(&b));
        assert_eq!(canonical(&b), r#"{"a":"é\n","b":[1,{"x":null,"y":"x"}]}"#);
        let c = json!({"b": [1, {"y": "x", "x": null}], "a": "é"});
        assert_ne!(content_hash(&a), content_hash(&c));
        assert!(content_hash(&a).starts_with("sha256:") && content_hash(&a).len() == 71);
    }

    #[test]
    fn the_digest_is_sha256() {
        assert_eq!(
            digest(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
