//! Node logpoints through the inspector, in the program's own process.
//!
//! `run` writes a private folder with the logpoints (`spec.json`) and a hook
//! script (`node_hook.cjs`), and adds `--require <hook>` to the command's
//! `NODE_OPTIONS`, so every Node process the command starts (`node app.js`,
//! `npm test` and the processes npm spawns) loads the hook before its own
//! code. The hook opens an in-process inspector session (the Chrome DevTools
//! Protocol through `node:inspector`: no port, no adapter to install, nothing
//! printed), sets each line with `Debugger.setBreakpointByUrl` and a condition
//! that records and answers false, so the program never pauses, and writes
//! one JSON line per hit to `<pid>-<thread>.jsonl` in the folder. This side
//! reads those files while the program runs and turns their lines into hits
//! and notes. What they say is bounded and parsed, never trusted: the
//! program could write there too.

use super::{AdapterEvent, SetLogpoint};
use crate::core::logpoint::{MAX_HITS_PER_LOGPOINT, VALUE_CAP};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashSet};
use std::ffi::{OsStr, OsString};
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// The script every Node process loads first.
const HOOK: &str = include_str!("node_hook.cjs");
/// How often the hit files are read while the program runs.
const POLL: Duration = Duration::from_millis(20);
/// Hit files (Node processes and threads) one run reads.
const MAX_FILES: usize = 256;
/// A line of a hit file longer than this is skipped.
const MAX_LINE: usize = 256 * 1024;
/// Notes one run makes from the hook's reports.
const MAX_NOTES: usize = 32;

/// One line of the program: the logpoints on it (indexes into the set).
struct Breakpoint {
    line: u32,
    probes: Vec<usize>,
}

/// The Node logpoints of one run and their private folder (removed when
/// dropped).
pub struct NodeHook {
    dir: PathBuf,
    set: Vec<SetLogpoint>,
    breakpoints: Vec<Breakpoint>,
}

impl NodeHook {
    /// Writes the folder: the hook and the logpoints it sets.
    pub fn create(nonce: &str, set: Vec<SetLogpoint>) -> io::Result<NodeHook> {
        let dir = std::env::temp_dir().join(format!("debug-sidecar-node-{nonce}"));
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&dir)?;
        let hook = NodeHook {
            breakpoints: group(&set),
            dir,
            set,
        };
        std::fs::write(hook.dir.join("node_hook.cjs"), HOOK)?;
        std::fs::write(hook.dir.join("spec.json"), hook.spec(nonce).to_string())?;
        Ok(hook)
    }

    pub fn set(&self) -> &[SetLogpoint] {
        &self.set
    }

    /// What the hook reads: one breakpoint per line, each with its probes'
    /// expressions; the name of the function conditions call.
    fn spec(&self, nonce: &str) -> Value {
        let breakpoints: Vec<Value> = self
            .breakpoints
            .iter()
            .map(|b| {
                let probes: Vec<Value> = b
                    .probes
                    .iter()
                    .map(|&i| json!({"index": i, "expressions": self.set[i].variables}))
                    .collect();
                let path = self.set[b.probes[0]].path.to_string_lossy();
                json!({"path": path, "line": b.line, "probes": probes})
            })
            .collect();
        json!({
            "key": format!("__debugSidecar_{nonce}"),
            "tag": crate::core::budget::head(nonce, 8),
            "cap": VALUE_CAP,
            "maxHits": MAX_HITS_PER_LOGPOINT,
            "breakpoints": breakpoints,
        })
    }

    /// The environment the command runs with: the person's `NODE_OPTIONS`
    /// and the hook, and the folder the hook reads.
    pub fn env(&self, existing: Option<&OsStr>) -> Vec<(String, OsString)> {
        let hook = self
            .dir
            .join("node_hook.cjs")
            .to_string_lossy()
            .into_owned();
        let mut options = existing.map(OsStr::to_os_string).unwrap_or_default();
        if !options.is_empty() {
            options.push(" ");
        }
        options.push(format!("--require {}", quote_option(&hook)));
        vec![
            ("NODE_OPTIONS".to_string(), options),
            (
                "DEBUG_SIDECAR_LOGPOINTS".to_string(),
                self.dir.clone().into_os_string(),
            ),
        ]
    }

    /// Reads the hook's reports until `exited` is set (the program ended),
    /// then once more; reports hits and what to say about the logpoints.
    pub fn serve(&self, exited: &AtomicBool, mut report: impl FnMut(AdapterEvent)) {
        let mut reader = Reader {
            hook: self,
            files: BTreeMap::new(),
            processes: 0,
            said: HashSet::new(),
        };
        loop {
            let last = exited.load(Ordering::Acquire);
            reader.poll(&mut report);
            if last {
                break;
            }
            std::thread::sleep(POLL);
        }
        if reader.processes == 0 {
            report(AdapterEvent::Note(format!(
                "{} JavaScript logpoint(s) not set: no Node process ran (the command started \
                 no `node`, or a `node` that ignores NODE_OPTIONS)",
                self.set.len()
            )));
        }
    }
}

impl Drop for NodeHook {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Logpoints on the same line share one breakpoint (the inspector takes one
/// per line).
fn group(set: &[SetLogpoint]) -> Vec<Breakpoint> {
    let mut lines: BTreeMap<(&Path, u32), Vec<usize>> = BTreeMap::new();
    for (i, logpoint) in set.iter().enumerate() {
        lines
            .entry((&logpoint.path, logpoint.line))
            .or_default()
            .push(i);
    }
    lines
        .into_iter()
        .map(|((_, line), probes)| Breakpoint { line, probes })
        .collect()
}

/// A word of `NODE_OPTIONS`: in double quotes, with `\` and `"` escaped.
fn quote_option(word: &str) -> String {
    let mut quoted = String::from("\"");
    for c in word.chars() {
        if c == '"' || c == '\\' {
            quoted.push('\\');
        }
        quoted.push(c);
    }
    quoted.push('"');
    quoted
}

/// A line the hook writes.
#[derive(Deserialize)]
#[serde(tag = "t", rename_all = "lowercase")]
enum Report {
    Start,
    Hit { p: usize, v: Vec<Value> },
    Resolved { b: usize, line: u64 },
    Unresolved { b: usize },
    Error { b: Option<usize>, m: String },
}

struct Reader<'a> {
    hook: &'a NodeHook,
    /// Each hit file and its unfinished line.
    files: BTreeMap<OsString, (std::fs::File, Vec<u8>)>,
    processes: u64,
    said: HashSet<String>,
}

impl Reader<'_> {
    fn poll(&mut self, report: &mut impl FnMut(AdapterEvent)) {
        if let Ok(entries) = std::fs::read_dir(&self.hook.dir) {
            for entry in entries.flatten() {
                let name = entry.file_name();
                if self.files.len() >= MAX_FILES
                    || self.files.contains_key(&name)
                    || !name.to_string_lossy().ends_with(".jsonl")
                {
                    continue;
                }
                if let Ok(file) = std::fs::File::open(entry.path()) {
                    self.files.insert(name, (file, Vec::new()));
                }
            }
        }
        let mut lines = Vec::new();
        for (file, partial) in self.files.values_mut() {
            let mut chunk = Vec::new();
            if file.read_to_end(&mut chunk).is_err() || chunk.is_empty() {
                continue;
            }
            let mut rest = chunk.as_slice();
            while let Some(n) = memchr::memchr(b'\n', rest) {
                if partial.len() + n <= MAX_LINE {
                    partial.extend_from_slice(&rest[..n]);
                    lines.push(std::mem::take(partial));
                } else {
                    partial.clear();
                }
                rest = &rest[n + 1..];
            }
            if partial.len() + rest.len() <= MAX_LINE {
                partial.extend_from_slice(rest);
            } else {
                // Too long: dropped up to its end.
                partial.clear();
            }
        }
        for line in lines {
            if let Ok(line) = serde_json::from_slice::<Report>(&line) {
                self.take(line, report);
            }
        }
    }

    fn take(&mut self, line: Report, report: &mut impl FnMut(AdapterEvent)) {
        let set = &self.hook.set;
        let breakpoint = |b: usize| self.hook.breakpoints.get(b);
        let note = match line {
            Report::Start => {
                self.processes += 1;
                return;
            }
            Report::Hit { p, v } => {
                if let Some(logpoint) = set.get(p) {
                    report(AdapterEvent::Hit {
                        probe_id: logpoint.probe_id.clone(),
                        data: data(logpoint, &v),
                    });
                }
                return;
            }
            Report::Resolved { b, line } => match breakpoint(b) {
                Some(bp) if line != u64::from(bp.line) => bp
                    .probes
                    .iter()
                    .map(|&i| {
                        format!(
                            "logpoint {} ({}): Node set it on line {line} (the next line that runs)",
                            set[i].probe_id,
                            set[i].location()
                        )
                    })
                    .collect(),
                _ => Vec::new(),
            },
            Report::Unresolved { b } => breakpoint(b)
                .map(|bp| {
                    bp.probes
                        .iter()
                        .map(|&i| {
                            format!(
                                "logpoint {} ({}) is not set: Node found no code to run on or \
                                 after that line",
                                set[i].probe_id,
                                set[i].location()
                            )
                        })
                        .collect()
                })
                .unwrap_or_default(),
            Report::Error { b, m } => {
                let why = crate::core::escape::inline_cut(&m, 300);
                match b.and_then(breakpoint) {
                    Some(bp) => bp
                        .probes
                        .iter()
                        .map(|&i| {
                            format!(
                                "logpoint {} ({}) is not set in a Node process: {why}",
                                set[i].probe_id,
                                set[i].location()
                            )
                        })
                        .collect(),
                    None => vec![format!("logpoints not set in a Node process: {why}")],
                }
            }
        };
        for note in note {
            if self.said.len() < MAX_NOTES && self.said.insert(note.clone()) {
                report(AdapterEvent::Note(note));
            }
        }
    }
}

/// A hit's values by expression: `[1, value]` is the value, `[0, text]` what
/// evaluating it threw.
fn data(logpoint: &SetLogpoint, values: &[Value]) -> Map<String, Value> {
    let mut data = Map::new();
    for (expression, value) in logpoint.variables.iter().zip(values) {
        let value = match value.as_array().map(Vec::as_slice) {
            Some([ok, value]) if ok == 1 => value.clone(),
            Some([_, error]) => json!({
                "$error": crate::core::budget::cut(error.as_str().unwrap_or("it failed"), 300)
            }),
            _ => continue,
        };
        data.insert(expression.clone(), value);
    }
    data
}

#[cfg(test)]
mod tests {
    use super::*;

    fn logpoint(id: &str, line: u32, variables: &[&str]) -> SetLogpoint {
        SetLogpoint {
            probe_id: id.into(),
            hypothesis_id: None,
            file: "app.js".into(),
            path: "/w/app.js".into(),
            line,
            variables: variables.iter().map(|v| v.to_string()).collect(),
            message: None,
        }
    }

    #[test]
    fn logpoints_on_one_line_share_a_breakpoint() {
        let set = [
            logpoint("p1", 4, &["a"]),
            logpoint("p2", 9, &["b"]),
            logpoint("p3", 4, &["c"]),
        ];
        let lines: Vec<(u32, Vec<usize>)> = group(&set)
            .into_iter()
            .map(|b| (b.line, b.probes))
            .collect();
        assert_eq!(lines, [(4, vec![0, 2]), (9, vec![1])]);
    }

    #[test]
    fn values_and_errors_are_read_and_anything_else_is_left_out() {
        let lp = logpoint("p1", 1, &["a", "b", "c"]);
        let out = data(
            &lp,
            &[
                json!([1, {"x": 1}]),
                json!([0, "ReferenceError: b"]),
                json!(7),
            ],
        );
        assert_eq!(out["a"], json!({"x": 1}));
        assert_eq!(out["b"]["$error"], "ReferenceError: b");
        assert!(!out.contains_key("c"));
    }

    #[test]
    fn the_hook_path_is_one_quoted_option() {
        assert_eq!(quote_option(r#"/t/a "b"\c"#), r#""/t/a \"b\"\\c""#);
        let hook = NodeHook {
            dir: "/t/x".into(),
            set: Vec::new(),
            breakpoints: Vec::new(),
        };
        let env = hook.env(Some(OsStr::new("--max-old-space-size=64")));
        assert_eq!(
            env[0].1,
            OsString::from("--max-old-space-size=64 --require \"/t/x/node_hook.cjs\"")
        );
    }
}
