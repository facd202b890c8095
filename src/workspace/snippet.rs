//! Probe snippets: a ready block, wrapped in the marker grammar, that appends
//! one JSON line to the probe log. Only POSIX shell is written so far.

use crate::core::markers::{end_marker, start_marker};
use crate::core::model::Probe;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("no probe snippet for language `{0}` yet; supported: shell")]
pub struct UnsupportedLanguage(pub String);

pub struct SnippetInput<'a> {
    pub probe: &'a Probe,
    pub session_id: &'a str,
    pub session_tag: &'a str,
    pub log_file: &'a str,
    pub message: &'a str,
    /// Shell variable names whose values go into `data`.
    pub variables: &'a [&'a str],
}

/// The snippet language for a file: the requested one when given, else the
/// one its extension names.
pub fn language_for(
    file: &str,
    requested: Option<&str>,
) -> Result<&'static str, UnsupportedLanguage> {
    let name = match requested.map(str::trim).filter(|r| !r.is_empty()) {
        Some(requested) => requested.to_ascii_lowercase(),
        None => std::path::Path::new(file)
            .extension()
            .map(|e| e.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default(),
    };
    match name.as_str() {
        "shell" | "sh" | "bash" => Ok("shell"),
        "" => Err(UnsupportedLanguage(format!(
            "(none: {file} has no extension)"
        ))),
        _ => Err(UnsupportedLanguage(name)),
    }
}

pub fn snippet(language: &str, input: &SnippetInput) -> Result<String, UnsupportedLanguage> {
    match language {
        "shell" | "sh" | "bash" => Ok(shell(input)),
        other => Err(UnsupportedLanguage(other.to_string())),
    }
}

/// POSIX sh: printf with every dynamic value JSON-escaped by hand is fragile,
/// so values are limited to the listed variables, each emitted as a string.
fn shell(input: &SnippetInput) -> String {
    let probe = input.probe;
    let data: Vec<String> = input
        .variables
        .iter()
        .map(|name| format!("\\\"{name}\\\":\\\"%s\\\""))
        .collect();
    let args: Vec<String> = input
        .variables
        .iter()
        .map(|name| format!("\"${name}\""))
        .collect();
    let fields = format!(
        "{{\\\"sessionId\\\":\\\"{}\\\",\\\"hypothesisId\\\":\\\"{}\\\",\\\"probeId\\\":\\\"{}\\\",\\\"location\\\":\\\"{}\\\",\\\"message\\\":\\\"{}\\\",\\\"data\\\":{{{}}},\\\"timestamp\\\":%s000}}\\n",
        json_safe(input.session_id),
        json_safe(probe.hypothesis_id.as_deref().unwrap_or("")),
        json_safe(&probe.id),
        json_safe(&probe.location()),
        json_safe(input.message),
        data.join(","),
    );
    format!(
        "# {start}\nprintf \"{fields}\" {args} \"$(date +%s)\" >> '{log}' 2>/dev/null || true\n# {end}\n",
        start = start_marker(&probe.id, input.session_tag),
        args = args.join(" "),
        log = input.log_file.replace('\'', "'\\''"),
        end = end_marker(&probe.id),
    )
}

/// Keep authored text inside a JSON string and a double-quoted shell string.
fn json_safe(text: &str) -> String {
    text.chars()
        .filter(|c| !matches!(c, '"' | '\\' | '$' | '`' | '%') && !c.is_control())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_language_comes_from_the_request_or_the_extension() {
        assert_eq!(language_for("run.sh", None), Ok("shell"));
        assert_eq!(language_for("tool", Some("Bash")), Ok("shell"));
        assert_eq!(
            language_for("app.py", None),
            Err(UnsupportedLanguage("py".into()))
        );
        assert!(language_for("Makefile", None).is_err());
    }
}
