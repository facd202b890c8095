//! The activity line of a session with nothing to measure: the model's own
//! words, or a phase line saying what the harness is doing. Four rules keep
//! it honest (seed dsh-pet-progress): it only serves unmeasured sessions
//! (the view's folds), silence beats boilerplate (quiet phases say nothing
//! unless the model said something), a nameless tool call says nothing, and
//! the line's lead names its source.

use super::MAX_ACTIVITY_CHARS;
use serde::{Deserialize, Deserializer, Serialize};

/// Phases that publish nothing on their own: between tool calls they would
/// only make the bubble flicker between the model's words and "thinking".
pub const QUIET_PHASES: [&str; 2] = ["thinking", "review"];

/// Who an activity line comes from.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum ActivitySource {
    /// What the harness is doing (a phase, a named tool call).
    Phase,
    /// The model's own most recent words.
    #[default]
    Output,
}

impl ActivitySource {
    /// The bubble's lead: it names the source, the only text a bubble
    /// without a number is sure to have.
    pub fn title(self) -> &'static str {
        match self {
            ActivitySource::Phase => "Current step",
            ActivitySource::Output => "Latest output",
        }
    }
}

/// One activity line and where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct ActivityLine {
    pub source: ActivitySource,
    pub text: String,
}

/// Collapses whitespace to one line and caps its length; `None` when blank.
pub(super) fn normalize_activity(line: &str) -> Option<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    if words.is_empty() {
        return None;
    }
    let single_line = words.join(" ");
    if single_line.chars().count() <= MAX_ACTIVITY_CHARS {
        return Some(single_line);
    }
    let mut cut: String = single_line.chars().take(MAX_ACTIVITY_CHARS - 1).collect();
    cut.push('\u{2026}');
    Some(cut)
}

/// The words a known phase is shown as; any other phase as given.
fn phase_words(phase: &str) -> &str {
    match phase {
        "waiting" => "waiting for the model",
        "tool" => "calling a tool",
        other => other,
    }
}

/// Reads a `progress/activity` report. The model's words (`line`) win; a
/// phase alone gives a phase line, except a quiet phase (`thinking`,
/// `review`), which says nothing; blank reports say nothing.
pub fn read_activity(phase: Option<&str>, line: Option<&str>) -> Option<ActivityLine> {
    if let Some(text) = line.and_then(normalize_activity) {
        return Some(ActivityLine {
            source: ActivitySource::Output,
            text,
        });
    }
    let phase = normalize_activity(phase?)?;
    if QUIET_PHASES.contains(&phase.to_lowercase().as_str()) {
        return None;
    }
    Some(ActivityLine {
        source: ActivitySource::Phase,
        text: phase_words(&phase).to_string(),
    })
}

/// A tool call as an activity line: `calling <name>`; a call without a
/// usable name says nothing (the line before it said more).
pub fn tool_activity(tool: Option<&str>) -> Option<ActivityLine> {
    let name = normalize_activity(tool?)?;
    normalize_activity(&format!("calling {name}")).map(|text| ActivityLine {
        source: ActivitySource::Phase,
        text,
    })
}

/// Reads a saved activity line: the current shape, or a bare string (saved
/// before lines had a source), which was the model's words or a phase the
/// harness gave; it reads as output.
pub(super) fn lenient_activity<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> Result<Option<ActivityLine>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Saved {
        Line(ActivityLine),
        Text(String),
    }
    Ok(
        match Option::<Saved>::deserialize(deserializer).unwrap_or(None) {
            Some(Saved::Line(line)) => Some(line),
            Some(Saved::Text(text)) => normalize_activity(&text).map(|text| ActivityLine {
                source: ActivitySource::Output,
                text,
            }),
            None => None,
        },
    )
}
