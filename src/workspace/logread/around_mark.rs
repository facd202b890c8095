//! The person's last mark as a divide (issue 31): each probe's count and
//! values before it and after it, from two summaries of the run's lines on
//! either side.

use super::summary::{summarize_between, LogSummary};
use crate::core::redact::Redactor;
use serde::Serialize;
use serde_json::Value;
use std::io;
use std::path::Path;

/// One probe's lines and values on either side of the person's mark.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct AroundMark {
    pub probe_id: String,
    pub before: u64,
    pub after: u64,
    /// Up to five distinct `data` values on each side.
    pub values_before: Vec<Value>,
    pub values_after: Vec<Value>,
}

/// Every probe's values before and after the person's last mark.
#[derive(Debug, Clone, PartialEq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct MarkComparison {
    /// The mark's line and words.
    pub line: u64,
    pub words: String,
    /// Per probe, in order of first appearance (at most 20).
    pub probes: Vec<AroundMark>,
}

/// Probes a mark comparison holds, and lists in words (each side's values
/// cut to 160 bytes there).
const AROUND_MARK_PROBES: usize = 20;
const AROUND_MARK_LISTED: usize = 8;
const AROUND_MARK_VALUES: usize = 160;

impl MarkComparison {
    /// The comparison around `mark` of `file`'s lines.
    pub fn of(file: &Path, redactor: &Redactor, mark: &super::marks::Mark) -> io::Result<Self> {
        let before = summarize_between(file, redactor, 0, Some(mark.line))?;
        let after = summarize_between(file, redactor, mark.line, None)?;
        let mut probes: Vec<AroundMark> = Vec::new();
        for figures in before.probes.iter().chain(&after.probes) {
            if probes.len() >= AROUND_MARK_PROBES {
                break;
            }
            if probes.iter().any(|p| p.probe_id == figures.probe_id) {
                continue;
            }
            let side = |summary: &LogSummary| {
                summary
                    .probes
                    .iter()
                    .find(|f| f.probe_id == figures.probe_id)
                    .map_or((0, Vec::new()), |f| (f.count, f.values.clone()))
            };
            let ((before, values_before), (after, values_after)) = (side(&before), side(&after));
            probes.push(AroundMark {
                probe_id: figures.probe_id.clone(),
                before,
                after,
                values_before,
                values_after,
            });
        }
        Ok(MarkComparison {
            line: mark.line,
            words: mark.words.clone(),
            probes,
        })
    }

    /// Lines for a reader: `around the mark at line 42 "clicked Save":`, then
    /// `  p1: x3 before {"n":1} | {"n":2}; x1 after {"n":7}`.
    pub fn describe(&self) -> Vec<String> {
        use crate::core::budget::ID;
        use crate::core::escape::inline_cut;
        let values = |values: &[Value]| {
            let shown: Vec<String> = values.iter().map(Value::to_string).collect();
            inline_cut(&shown.join(" | "), AROUND_MARK_VALUES)
        };
        let mut lines = vec![format!(
            "around the person's mark at line {} \"{}\", per probe:",
            self.line,
            inline_cut(&self.words, 120)
        )];
        for p in self.probes.iter().take(AROUND_MARK_LISTED) {
            lines.push(format!(
                "  {}: x{} before {}; x{} after {}",
                inline_cut(&p.probe_id, ID),
                p.before,
                values(&p.values_before),
                p.after,
                values(&p.values_after)
            ));
        }
        if self.probes.len() > AROUND_MARK_LISTED {
            lines.push(format!(
                "  +{} more: read_logs with `beforeLine` / `afterLine` {} reads either side",
                self.probes.len() - AROUND_MARK_LISTED,
                self.line
            ));
        }
        lines
    }
}
