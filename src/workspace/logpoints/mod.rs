//! Setting the session's logpoints in a program `debug-sidecar run` starts
//! (DESIGN section 7): which programs can take them (Python and Node, each
//! through a hook loaded in its own processes), which logpoints still sit on
//! the line they were placed on, and the records their hits become. No file
//! is edited.

pub mod hook;
pub mod node;
pub mod python;

use hook::{Hook, Runtime};

use crate::core::logpoint::{check_line, LineCheck, VALUE_CAP};
use crate::core::model::Probe;
use serde_json::{json, Map, Value};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// A logpoint as `run` sets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SetLogpoint {
    pub probe_id: String,
    pub hypothesis_id: Option<String>,
    /// Workspace-relative, as the ledger names it.
    pub file: String,
    /// The file's real path, as the adapter is told it.
    pub path: PathBuf,
    /// The line it is set on now (the ledger's, or where the line moved).
    pub line: u32,
    pub variables: Vec<String>,
    pub message: Option<String>,
}

impl SetLogpoint {
    pub fn location(&self) -> String {
        format!("{}:{}", self.file, self.line)
    }
}

/// What a session with a program's debugger reports to `run`.
#[derive(Debug, Clone, PartialEq)]
pub enum AdapterEvent {
    /// A logpoint's line ran: its values.
    Hit {
        probe_id: String,
        data: Map<String, Value>,
    },
    /// Something the person and the model should know (a logpoint not
    /// set, the adapter gone).
    Note(RunNote),
}

/// A sentence `run` records about its logpoints, and the logpoints it says
/// were not set (the hit table's `notSet`, read back from the record).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct RunNote {
    pub message: String,
    pub not_set: Vec<String>,
}

impl std::fmt::Display for RunNote {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl RunNote {
    pub fn said(message: String) -> Self {
        RunNote {
            message,
            not_set: Vec::new(),
        }
    }

    pub fn not_set(ids: Vec<String>, message: String) -> Self {
        RunNote {
            message,
            not_set: ids,
        }
    }
}

/// The session's logpoints as one run sets them: each runtime's through
/// the hook its processes load.
pub struct Logpoints {
    /// The command as asked for: what the run's records name.
    pub asked: Vec<String>,
    hooks: Vec<Hook>,
}

impl Logpoints {
    /// Every logpoint set, whichever its language.
    pub fn set(&self) -> Vec<SetLogpoint> {
        self.hooks
            .iter()
            .flat_map(|hook| hook.set().iter().cloned())
            .collect()
    }

    /// Variables the program runs with (each hook's).
    pub fn env(&self) -> Vec<(String, OsString)> {
        let mut env = Vec::new();
        for hook in &self.hooks {
            env.extend(match hook.runtime() {
                Runtime::Node => node::env(hook, std::env::var_os("NODE_OPTIONS").as_deref()),
                Runtime::Python => python::env(hook, std::env::var_os("PYTHONPATH").as_deref()),
            });
        }
        env
    }

    /// Hooks `serve` reads, each ending with one `done` call.
    pub fn readers(&self) -> usize {
        self.hooks.len()
    }

    /// Reads each hook on a thread of its own until `exited` is set:
    /// `report` gets hits and notes, `done` is called when one ends.
    pub fn serve(
        self,
        exited: std::sync::Arc<Exited>,
        report: impl Fn(AdapterEvent) + Send + Clone + 'static,
        done: impl Fn() + Send + Clone + 'static,
    ) {
        for hook in self.hooks {
            let (exited, report, done) = (exited.clone(), report.clone(), done.clone());
            std::thread::spawn(move || {
                hook.serve(&exited, report);
                drop(hook);
                done();
            });
        }
    }
}

/// The program's end as the hooks' readers wait for it: set once, and a
/// reader asleep between two reads wakes at once, so a run with logpoints
/// ends when its program does, not up to a poll later.
#[derive(Debug, Default)]
pub struct Exited {
    ended: Mutex<bool>,
    changed: Condvar,
}

impl Exited {
    pub fn set(&self) {
        if let Ok(mut ended) = self.ended.lock() {
            *ended = true;
        }
        self.changed.notify_all();
    }

    /// Whether the program ended (a poisoned lock counts as ended).
    pub fn is_set(&self) -> bool {
        self.ended.lock().map_or(true, |ended| *ended)
    }

    /// Waits until the program ends, for at most `timeout`.
    pub fn wait(&self, timeout: Duration) {
        if let Ok(ended) = self.ended.lock() {
            let _ = self
                .changed
                .wait_timeout_while(ended, timeout, |ended| !*ended);
        }
    }
}

/// How `run` starts a program given the session's live logpoints: the
/// command (a Python script through the hook's runner), the logpoints to
/// set, and what to say about the ones it cannot set.
pub struct Plan {
    pub command: Vec<String>,
    pub logpoints: Option<Logpoints>,
    pub notes: Vec<RunNote>,
}

/// Plans a run of `command` in `cwd` with the live logpoints `live`.
pub fn plan(command: &[String], cwd: &Path, root: &Path, live: &[Probe]) -> Plan {
    let mut notes = Vec::new();
    let nonce = nonce();
    let mut run = command.to_vec();
    let mut hooks = Vec::new();
    for runtime in [Runtime::Python, Runtime::Node] {
        let probes: Vec<Probe> = live
            .iter()
            .filter(|p| p.language.as_deref() == Some(runtime.ledger_language()))
            .cloned()
            .collect();
        if probes.is_empty() {
            continue;
        }
        let (set, mut unset) = prepare(root, &probes);
        notes.append(&mut unset);
        if set.is_empty() {
            continue;
        }
        match Hook::create(runtime, &nonce, set) {
            Ok(hook) => {
                if runtime == Runtime::Python {
                    if let Some(launch) = python::python_launch(command, cwd) {
                        run = python::command(&launch, &python::runner(&hook), cwd);
                    }
                }
                hooks.push(hook);
            }
            Err(error) => notes.push(RunNote::not_set(
                hook_ids(&probes),
                format!(
                    "{} logpoints not set: their folder could not be written ({error})",
                    runtime.language()
                ),
            )),
        }
    }
    let logpoints = (!hooks.is_empty()).then(|| Logpoints {
        asked: command.to_vec(),
        hooks,
    });
    Plan {
        command: run,
        logpoints,
        notes,
    }
}

fn hook_ids(probes: &[Probe]) -> Vec<String> {
    probes.iter().map(|p| p.id.clone()).collect()
}

/// A tag the program cannot guess: the hook folders' names and the name the
/// hooks' calls go by.
fn nonce() -> String {
    use std::hash::{BuildHasher, Hasher};
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    hasher.write_u32(std::process::id());
    format!("{:016x}", hasher.finish())
}

/// Which of `probes` (live logpoints of one language) can be set: each
/// file read, each line found where it was placed, or where its text moved
/// to. Answers the ones to set and a sentence for each that moved or is
/// not set.
pub fn prepare(root: &Path, probes: &[Probe]) -> (Vec<SetLogpoint>, Vec<RunNote>) {
    let root_real = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let mut set = Vec::new();
    let mut notes = Vec::new();
    for probe in probes {
        let (Some(spec), Some(line)) = (&probe.logpoint, probe.line) else {
            continue;
        };
        let id = crate::core::escape::inline_cut(&probe.id, crate::core::budget::ID);
        let placed = probe.location();
        let real = root.join(&probe.file).canonicalize().ok();
        let Some(path) = real.filter(|p| p.starts_with(&root_real) && p.is_file()) else {
            notes.push(RunNote::not_set(
                vec![probe.id.clone()],
                format!(
                    "logpoint {id} ({placed}) is not set: its file is gone (or now outside the workspace)"
                ),
            ));
            continue;
        };
        let text = std::fs::read(&path)
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        let line = match check_line(&lines, line, &spec.line_hash) {
            LineCheck::Same => line,
            LineCheck::Moved { to } => {
                notes.push(RunNote::said(format!(
                    "logpoint {id} ({placed}): that line moved to line {to}; set there"
                )));
                to
            }
            LineCheck::Changed => {
                notes.push(RunNote::not_set(
                    vec![probe.id.clone()],
                    format!(
                        "logpoint {id} ({placed}) is not set: the line changed since it was placed \
                         (remove it and place it again)"
                    ),
                ));
                continue;
            }
        };
        set.push(SetLogpoint {
            probe_id: probe.id.clone(),
            hypothesis_id: probe.hypothesis_id.clone(),
            file: probe.file.clone(),
            path,
            line,
            variables: spec.variables.clone(),
            message: spec.message.clone(),
        });
    }
    (set, notes)
}

/// One hit's values, bounded: each value's JSON at most `VALUE_CAP` bytes
/// (a longer one is kept as the start of its text, with its length), at
/// most the logpoint's own expressions.
pub fn bounded_data(logpoint: &SetLogpoint, data: Map<String, Value>) -> Map<String, Value> {
    let mut out = Map::new();
    for expression in &logpoint.variables {
        let value = match data.get(expression) {
            Some(value) => value.clone(),
            None => json!({"$error": "no value was reported"}),
        };
        let text = value.to_string();
        let value = if text.len() > VALUE_CAP {
            json!({
                "$truncated": crate::core::budget::head(&text, VALUE_CAP),
                "length": text.len(),
            })
        } else {
            value
        };
        out.insert(expression.clone(), value);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::logpoint::line_hash;
    use crate::core::model::{LogpointSpec, ProbeKind, ProbeState};

    #[test]
    fn a_reader_waiting_between_polls_wakes_when_the_program_ends() {
        let exited = std::sync::Arc::new(Exited::default());
        assert!(!exited.is_set());
        let setter = {
            let exited = exited.clone();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(50));
                exited.set();
            })
        };
        // A reader that slept its whole poll would hang this test.
        exited.wait(Duration::from_secs(3600));
        assert!(exited.is_set());
        setter.join().unwrap();
        // Once set, a wait returns at once.
        exited.wait(Duration::from_secs(3600));
    }

    fn logpoint(file: &str, line: u32, text: &str) -> Probe {
        Probe {
            id: "p1".into(),
            kind: ProbeKind::Logpoint,
            file: file.into(),
            line: Some(line),
            round: 1,
            hypothesis_id: Some("H1".into()),
            language: Some("python".into()),
            state: ProbeState::Live,
            trace: None,
            logpoint: Some(LogpointSpec {
                variables: vec!["x".into()],
                message: None,
                line_hash: line_hash(text),
            }),
        }
    }

    #[test]
    fn a_moved_line_is_followed_a_changed_one_is_not_set() {
        let dir = std::env::temp_dir().join(format!("lp-prepare-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("a.py"), "import os\nx = 1\ny = x\n").unwrap();
        let (set, notes) = prepare(&dir, &[logpoint("a.py", 1, "y = x")]);
        assert_eq!(set[0].line, 3);
        assert!(notes[0].message.contains("moved to line 3"), "{notes:?}");
        assert!(notes[0].not_set.is_empty());
        let (set, notes) = prepare(&dir, &[logpoint("a.py", 2, "x = 2")]);
        assert!(set.is_empty());
        assert!(notes[0].message.contains("the line changed"), "{notes:?}");
        assert_eq!(notes[0].not_set, ["p1"]);
        let (set, notes) = prepare(&dir, &[logpoint("../a.py", 2, "x = 1")]);
        assert!(
            set.is_empty() && notes[0].message.contains("gone"),
            "{notes:?}"
        );
        assert_eq!(notes[0].not_set, ["p1"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn values_are_capped_and_missing_ones_are_errors() {
        let set = SetLogpoint {
            probe_id: "p1".into(),
            hypothesis_id: None,
            file: "a.py".into(),
            path: "/a.py".into(),
            line: 1,
            variables: vec!["big".into(), "gone".into()],
            message: None,
        };
        let mut data = Map::new();
        data.insert("big".into(), json!("x".repeat(VALUE_CAP * 2)));
        data.insert("extra".into(), json!(1));
        let out = bounded_data(&set, data);
        assert_eq!(out.len(), 2);
        assert_eq!(out["big"]["length"], json!(VALUE_CAP * 2 + 2));
        assert!(out["gone"]["$error"].is_string());
    }
}
