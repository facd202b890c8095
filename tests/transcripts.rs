//! Replays every example transcript in `protocol/examples/` against the built
//! server and compares each answer and notification (times, run-id stamps and
//! the workspace path redacted). `UPDATE_TRANSCRIPTS=1` records the server's
//! side afresh after a deliberate change; review the diff before committing.

mod support;

use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use support::*;

enum Entry {
    Note(Value),
    Send(Value),
    Receive(Value),
}

fn parse(path: &Path) -> Vec<Entry> {
    let text = fs::read_to_string(path).unwrap();
    text.lines()
        .filter(|line| !line.trim().is_empty())
        .enumerate()
        .map(|(i, line)| {
            let entry: Value = serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), i + 1));
            match entry["dir"].as_str() {
                Some("->") => Entry::Send(entry["msg"].clone()),
                Some("<-") => Entry::Receive(entry["msg"].clone()),
                _ if entry.get("note").is_some() => Entry::Note(entry),
                _ => panic!("{}:{}: neither a message nor a note", path.display(), i + 1),
            }
        })
        .collect()
}

/// `<workspace>` in what the client sends means this run's workspace.
fn substitute(value: &Value, root: &str) -> Value {
    match value {
        Value::String(s) => Value::String(s.replace("<workspace>", root)),
        Value::Array(items) => Value::Array(items.iter().map(|v| substitute(v, root)).collect()),
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(k, v)| (k.clone(), substitute(v, root)))
                .collect(),
        ),
        other => other.clone(),
    }
}

fn is_answer(message: &Value) -> bool {
    message.get("method").is_none()
}

/// Answers compared by id, notifications in order: a notification may
/// overtake the answer to the request that caused it.
fn same(expected: &[Value], actual: &[Value]) -> bool {
    let answers = |list: &[Value]| {
        let mut answers: Vec<String> = list
            .iter()
            .filter(|m| is_answer(m))
            .map(Value::to_string)
            .collect();
        answers.sort();
        answers
    };
    let notifications =
        |list: &[Value]| -> Vec<Value> { list.iter().filter(|m| !is_answer(m)).cloned().collect() };
    answers(expected) == answers(actual) && notifications(expected) == notifications(actual)
}

fn examples() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol/examples");
    let mut files: Vec<PathBuf> = fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    files
}

#[test]
fn the_transcripts_cover_what_the_spec_promises() {
    let names: Vec<String> = examples()
        .iter()
        .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
        .collect();
    for required in [
        "debug-session",
        "illegal-command",
        "context-sync",
        "turn-state",
        "progress",
        "subagents",
    ] {
        assert!(names.iter().any(|n| n == required), "no {required}.jsonl");
    }
}

#[test]
fn every_transcript_replays_against_the_server() {
    let update = std::env::var_os("UPDATE_TRANSCRIPTS").is_some();
    let mut failures = Vec::new();
    for path in examples() {
        let workspace = Workspace::new("transcript");
        let root = workspace.root.to_string_lossy().into_owned();
        let mut server = spawn(&workspace.root);
        let entries = parse(&path);
        let mut recorded = Vec::new();
        let mut index = 0;
        while index < entries.len() {
            let message = match &entries[index] {
                Entry::Note(note) => {
                    recorded.push(note.clone());
                    index += 1;
                    continue;
                }
                Entry::Receive(stray) => {
                    panic!("{}: an answer before any request: {stray}", path.display())
                }
                Entry::Send(message) => message.clone(),
            };
            index += 1;
            let mut expected = Vec::new();
            while let Some(Entry::Receive(m)) = entries.get(index) {
                expected.push(m.clone());
                index += 1;
            }
            recorded.push(json!({ "dir": "->", "msg": message }));
            server.send(&substitute(&message, &root)).unwrap();
            let actual = collect(&mut server, &message, &expected, update, &workspace.root);
            if !update && !same(&expected, &actual) {
                failures.push(format!(
                    "{} after {message}:\n  expected {}\n  actual   {}",
                    path.display(),
                    serde_json::to_string(&expected).unwrap(),
                    serde_json::to_string(&actual).unwrap()
                ));
            }
            recorded.extend(actual.into_iter().map(|m| json!({ "dir": "<-", "msg": m })));
        }
        let extra = server.drain(QUIET);
        if !extra.is_empty() {
            failures.push(format!(
                "{}: unexpected messages at the end: {extra:?}",
                path.display()
            ));
        }
        if update {
            let text: String = recorded.iter().map(|e| e.to_string() + "\n").collect();
            fs::write(&path, text).unwrap();
        }
    }
    assert!(
        failures.is_empty(),
        "transcripts differ from the server (UPDATE_TRANSCRIPTS=1 re-records):\n{}",
        failures.join("\n\n")
    );
}

/// What the server sends after `sent`: its answer (for a request) and the
/// notifications the transcript expects, or, when recording, everything
/// until the server goes quiet.
fn collect(
    server: &mut debug_sidecar::rpc::client::Connection,
    sent: &Value,
    expected: &[Value],
    update: bool,
    root: &Path,
) -> Vec<Value> {
    let mut actual = Vec::new();
    let wants_answer = sent.get("id").is_some() && sent["method"] != "exit";
    let mut answered = !wants_answer;
    let want = expected.len();
    loop {
        let done = answered && (update || actual.len() >= want);
        let wait = if done { QUIET } else { QUIET * 10 };
        if done && !update {
            break;
        }
        match server.next_message(wait) {
            Some(message) => {
                if is_answer(&message) && message.get("id") == sent.get("id") {
                    answered = true;
                }
                actual.push(redact(&message, root));
            }
            None => break,
        }
    }
    actual
}
