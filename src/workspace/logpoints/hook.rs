//! Logpoints set from inside the program's own processes (DESIGN section 7):
//! Node's and Python's work the same way on this side.
//!
//! `run` writes a private folder with the logpoints (`spec.json`) and the
//! runtime's hook, and puts the folder in the environment the runtime reads
//! first (`NODE_OPTIONS`, `PYTHONPATH`), so every process of that runtime the
//! command starts loads the hook before its own code. The hook sets each
//! line, never pauses the program, and writes one JSON line per hit or
//! placement to this process's file in memory (Linux), else to a `*.jsonl`
//! file in the folder. This side reads them while the program runs and
//! turns their lines into hits and notes. What they say is bounded and
//! parsed, never trusted: the program could write there too.

use super::{AdapterEvent, RunNote, SetLogpoint};
use crate::core::logpoint::{MAX_HITS_PER_LOGPOINT, VALUE_CAP};
use serde::Deserialize;
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashSet};
use std::ffi::OsString;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How often the hit files are read while the program runs.
const POLL: Duration = Duration::from_millis(20);
/// Hit files (processes and threads) one run reads.
const MAX_FILES: usize = 256;
/// A line of a hit file longer than this is skipped.
const MAX_LINE: usize = 256 * 1024;
/// Bytes read from one hit file per poll: a program writing without end
/// cannot take this side's memory.
const MAX_READ: u64 = 4 * 1024 * 1024;
/// Notes one run makes from the hook's reports.
const MAX_NOTES: usize = 32;

/// One line of the program: the logpoints on it (indexes into the set).
struct Breakpoint {
    line: u32,
    probes: Vec<usize>,
}

/// A runtime that takes logpoints through a hook of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Runtime {
    Node,
    Python,
}

impl Runtime {
    /// As the person knows it.
    pub fn name(self) -> &'static str {
        match self {
            Runtime::Node => "Node",
            Runtime::Python => "Python",
        }
    }

    /// The language its logpoints are placed in.
    pub fn language(self) -> &'static str {
        match self {
            Runtime::Node => "JavaScript",
            Runtime::Python => "Python",
        }
    }

    /// The ledger's name for that language.
    pub fn ledger_language(self) -> &'static str {
        match self {
            Runtime::Node => "javascript",
            Runtime::Python => "python",
        }
    }

    /// The files the hook folder holds besides the spec.
    fn files(self) -> &'static [(&'static str, &'static str)] {
        match self {
            Runtime::Node => super::node::FILES,
            Runtime::Python => super::python::FILES,
        }
    }

    /// Where a line that runs is not the line asked for.
    fn moved(self) -> &'static str {
        match self {
            Runtime::Node => "the next line that runs",
            Runtime::Python => "the statement that line is part of, or the next one",
        }
    }

    fn no_code(self) -> &'static str {
        match self {
            Runtime::Node => "Node found no code to run on or after that line",
            Runtime::Python => "Python found no statement on or after that line",
        }
    }

    /// Why no process of it took the logpoints.
    fn none_ran(self) -> &'static str {
        match self {
            Runtime::Node => {
                "no Node process ran (the command started no `node`, or a `node` that ignores \
                 NODE_OPTIONS)"
            }
            Runtime::Python => {
                "no Python process ran (the command started no Python 3.8 or newer, or one that \
                 ignores PYTHONPATH or skips site: -E, -I, -S)"
            }
        }
    }
}

/// One runtime's logpoints in one run and their private folder (removed
/// when dropped).
pub struct Hook {
    runtime: Runtime,
    dir: PathBuf,
    set: Vec<SetLogpoint>,
    breakpoints: Vec<Breakpoint>,
    /// Where the hooks append their records, when the system has one: an
    /// anonymous file in memory (Linux's memfd) they open through this
    /// process's `/proc/<pid>/fd/<n>`, so the values a program logs (its
    /// secrets among them) are never written to a disk, not even until the
    /// run ends. Elsewhere they write `*.jsonl` files into the folder.
    hits: Option<(std::fs::File, String)>,
}

impl Hook {
    /// Writes the folder: the hook and the logpoints it sets.
    pub fn create(runtime: Runtime, nonce: &str, set: Vec<SetLogpoint>) -> io::Result<Hook> {
        let name = runtime.name().to_ascii_lowercase();
        let dir = std::env::temp_dir().join(format!("debug-sidecar-{name}-{nonce}"));
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder.create(&dir)?;
        let hook = Hook {
            runtime,
            breakpoints: group(&set),
            dir,
            set,
            hits: hits_in_memory(),
        };
        for (name, text) in runtime.files() {
            std::fs::write(hook.dir.join(name), text)?;
        }
        std::fs::write(hook.dir.join("spec.json"), hook.spec(nonce).to_string())?;
        Ok(hook)
    }

    pub fn runtime(&self) -> Runtime {
        self.runtime
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    pub fn set(&self) -> &[SetLogpoint] {
        &self.set
    }

    /// What the hook reads: one breakpoint per line, each with its probes'
    /// expressions; the name of the function hits call. Strings, numbers,
    /// lists and maps only (no `true`, `false` or `null`): Python's hook
    /// reads it as a literal, without importing json.
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
        let hits = self.hits.as_ref().map_or("", |(_, path)| path.as_str());
        json!({
            // Ends in `__`: Python mangles a name that starts with two
            // underscores inside a class body unless it ends with two too.
            "key": format!("__debugSidecar_{nonce}__"),
            // Empty: each process writes a file of its own into the folder.
            "hits": hits,
            "tag": crate::core::budget::head(nonce, 8),
            "cap": VALUE_CAP,
            "maxHits": MAX_HITS_PER_LOGPOINT,
            "breakpoints": breakpoints,
        })
    }

    /// Reads the hook's reports until `exited` is set (the program ended),
    /// then once more; reports hits and what to say about the logpoints.
    pub fn serve(&self, exited: &super::Exited, mut report: impl FnMut(AdapterEvent)) {
        let mut reader = Reader {
            hook: self,
            files: BTreeMap::new(),
            processes: 0,
            said: HashSet::new(),
        };
        if let Some(hits) = self.hits.as_ref().and_then(|(f, _)| f.try_clone().ok()) {
            // Not a `.jsonl` name: the folder's files never take its place.
            reader
                .files
                .insert(OsString::from(IN_MEMORY), (hits, Vec::new()));
        }
        loop {
            let last = exited.is_set();
            reader.poll(&mut report);
            if last {
                break;
            }
            exited.wait(POLL);
        }
        if reader.processes == 0 {
            report(AdapterEvent::Note(RunNote::not_set(
                self.set.iter().map(|l| l.probe_id.clone()).collect(),
                format!(
                    "{} {} logpoint(s) not set: {}",
                    self.set.len(),
                    self.runtime.language(),
                    self.runtime.none_ran()
                ),
            )));
        }
    }
}

impl Drop for Hook {
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

/// The reader's name for the records in memory.
const IN_MEMORY: &str = "<memory>";

/// An anonymous file in memory for the records, closed on exec, and the
/// `/proc` path the hooks open it by; none where the system has no such file.
fn hits_in_memory() -> Option<(std::fs::File, String)> {
    #[cfg(target_os = "linux")]
    {
        let fd =
            rustix::fs::memfd_create("debug-sidecar-hits", rustix::fs::MemfdFlags::CLOEXEC).ok()?;
        let file = std::fs::File::from(fd);
        // Only when another process of this user can open it as the hooks will.
        let path = proc_path(&file)?;
        return Some((file, path));
    }
    #[allow(unreachable_code)]
    None
}

/// `/proc/<this process>/fd/<n>` for `file`, when that path opens it.
fn proc_path(file: &std::fs::File) -> Option<String> {
    #[cfg(target_os = "linux")]
    {
        use std::os::fd::AsRawFd;
        let path = format!("/proc/{}/fd/{}", std::process::id(), file.as_raw_fd());
        return std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .ok()
            .map(|_| path);
    }
    #[allow(unreachable_code)]
    {
        let _ = file;
        None
    }
}

/// Gives back the memory of the records read so far (the file keeps its
/// size, so the hooks' appends go on at its end).
fn release_read(file: &std::fs::File) {
    #[cfg(target_os = "linux")]
    {
        use std::io::Seek;
        let Ok(read) = (&*file).stream_position() else {
            return;
        };
        let whole_pages = read - read % 4096;
        if whole_pages > 0 {
            let _ = rustix::fs::fallocate(
                file,
                rustix::fs::FallocateFlags::PUNCH_HOLE | rustix::fs::FallocateFlags::KEEP_SIZE,
                0,
                whole_pages,
            );
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = file;
}

/// A hit file, opened only when it is a regular file and no link: the
/// program could put a link to `/dev/zero` or a fifo there.
fn open_regular(path: &Path) -> Option<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(
        &mut options,
        libc::O_NOFOLLOW | libc::O_NONBLOCK,
    );
    let file = options.open(path).ok()?;
    file.metadata().ok()?.is_file().then_some(file)
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
    hook: &'a Hook,
    /// Each hit file and its unfinished line.
    files: BTreeMap<OsString, (std::fs::File, Vec<u8>)>,
    processes: u64,
    said: HashSet<RunNote>,
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
                if let Some(file) = open_regular(&entry.path()) {
                    self.files.insert(name, (file, Vec::new()));
                }
            }
        }
        let mut lines = Vec::new();
        for (name, (file, partial)) in self.files.iter_mut() {
            let mut chunk = Vec::new();
            let read = file.by_ref().take(MAX_READ).read_to_end(&mut chunk);
            if read.is_err() || chunk.is_empty() {
                continue;
            }
            if name == IN_MEMORY {
                release_read(file);
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
        let runtime = self.hook.runtime;
        // One sentence per logpoint on breakpoint `b`: "logpoint ID (LOC)" and
        // what follows it; `not_set` when it says the logpoint is not set.
        let each = |b: usize, not_set: bool, tail: &dyn Fn() -> String| -> Vec<RunNote> {
            self.hook.breakpoints.get(b).map_or_else(Vec::new, |bp| {
                bp.probes
                    .iter()
                    .map(|&i| {
                        let message = format!(
                            "logpoint {} ({}){}",
                            set[i].probe_id,
                            set[i].location(),
                            tail()
                        );
                        if not_set {
                            RunNote::not_set(vec![set[i].probe_id.clone()], message)
                        } else {
                            RunNote::said(message)
                        }
                    })
                    .collect()
            })
        };
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
            Report::Resolved { b, line } => match self.hook.breakpoints.get(b) {
                Some(bp) if line != u64::from(bp.line) => each(b, false, &|| {
                    format!(
                        ": {} set it on line {line} ({})",
                        runtime.name(),
                        runtime.moved()
                    )
                }),
                _ => Vec::new(),
            },
            Report::Unresolved { b } => {
                each(b, true, &|| format!(" is not set: {}", runtime.no_code()))
            }
            Report::Error { b, m } => {
                let why = crate::core::escape::inline_cut(&m, 300);
                match b.filter(|&b| b < self.hook.breakpoints.len()) {
                    Some(b) => each(b, true, &|| {
                        format!(" is not set in a {} process: {why}", runtime.name())
                    }),
                    None => vec![RunNote::said(format!(
                        "logpoints not set in a {} process: {why}",
                        runtime.name()
                    ))],
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
    fn the_spec_is_a_python_literal() {
        let hook = Hook {
            runtime: Runtime::Python,
            dir: "/t/x".into(),
            breakpoints: group(&[logpoint("p1", 4, &["a"])]),
            set: vec![logpoint("p1", 4, &["a"])],
            hits: hits_in_memory(),
        };
        fn plain(v: &Value) -> bool {
            match v {
                Value::Null | Value::Bool(_) => false,
                Value::Array(items) => items.iter().all(plain),
                Value::Object(map) => map.values().all(plain),
                _ => true,
            }
        }
        assert!(plain(&hook.spec("n")));
    }
}
