//! Python logpoints through debugpy (the DAP adapter from PyPI). The
//! program is started as `python -m debugpy --listen 127.0.0.1:<port>
//! --wait-for-client <target>`, so it keeps its own stdout, stderr and
//! exit status (they reach `run` as without debugpy); `run` connects, sets
//! every logpoint with a DAP `logMessage` (debugpy never suspends on one)
//! and reads each hit back as an `output` event, tagged with a nonce the
//! program cannot know. `redirectOutput` is off, so the program's own
//! output never travels the adapter's connection.
//!
//! A `logMessage` is one Python expression for debugpy; ours evaluates
//! each of the logpoint's expressions on its own (a failing one becomes an
//! `$error` value), turns each into JSON (`repr` when it is not JSON), cuts
//! it to `VALUE_CAP`, and prints one line. The helper travels hex-encoded,
//! so no expression's braces or quotes can break the message.

use super::dap::Dap;
use super::{AdapterEvent, SetLogpoint};
use crate::core::logpoint::VALUE_CAP;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::net::{Ipv4Addr, TcpListener, TcpStream};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long the adapter may take to listen once the program started.
const CONNECT_WITHIN: Duration = Duration::from_secs(20);

/// A Python program as `run` was asked to start it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PythonLaunch {
    pub interpreter: String,
    /// Interpreter options before the target (`-u`, `-X dev`).
    pub options: Vec<String>,
    /// `-m module args...` or `script args...`.
    pub target: Vec<String>,
}

/// Whether `name` is a Python interpreter's name: `python`, `python3`,
/// `python3.12` (any directory).
fn is_python(name: &str) -> bool {
    let base = Path::new(name)
        .file_name()
        .map(|b| b.to_string_lossy().into_owned())
        .unwrap_or_default();
    base.strip_prefix("python")
        .is_some_and(|rest| rest.chars().all(|c| c.is_ascii_digit() || c == '.'))
}

/// The interpreter a script's `#!` line names, when it names Python.
fn shebang_python(script: &Path) -> Option<String> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let read = std::fs::File::open(script).ok()?.read(&mut head).ok()?;
    let first = String::from_utf8_lossy(&head[..read]);
    let line = first.lines().next()?.strip_prefix("#!")?.trim().to_string();
    let mut words = line.split_whitespace();
    let first = words.next()?;
    let program = if Path::new(first).file_name().is_some_and(|n| n == "env") {
        words.find(|w| !w.starts_with('-'))?
    } else {
        first
    };
    is_python(program).then(|| program.to_string())
}

/// Options of the interpreter that take a value as the next word.
const OPTIONS_WITH_VALUE: &[&str] = &["-X", "-W", "--check-hash-based-pycs"];

/// A Python program: `python[X.Y] [options] script.py|-m module [args]`,
/// or a `.py` script whose `#!` line names Python. `-c` code and a bare
/// interactive interpreter are not (no file to set a logpoint in).
pub fn python_launch(command: &[String], cwd: &Path) -> Option<PythonLaunch> {
    let (program, args) = command.split_first()?;
    if !is_python(program) {
        if program.ends_with(".py") {
            let interpreter = shebang_python(&cwd.join(program))?;
            return Some(PythonLaunch {
                interpreter,
                options: Vec::new(),
                target: command.to_vec(),
            });
        }
        return None;
    }
    let mut options = Vec::new();
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if word == "-m" {
            let module = words.next()?;
            let mut target = vec!["-m".to_string(), module.clone()];
            target.extend(words.cloned());
            return Some(launch(program, options, target));
        }
        if word == "-c" || word == "-" {
            return None;
        }
        if word.starts_with('-') {
            options.push(word.clone());
            if OPTIONS_WITH_VALUE.contains(&word.as_str()) {
                options.push(words.next()?.clone());
            }
            continue;
        }
        let mut target = vec![word.clone()];
        target.extend(words.cloned());
        return Some(launch(program, options, target));
    }
    None
}

fn launch(interpreter: &str, options: Vec<String>, target: Vec<String>) -> PythonLaunch {
    PythonLaunch {
        interpreter: interpreter.to_string(),
        options,
        target,
    }
}

/// Whether debugpy can be imported by that interpreter, run in `cwd`.
pub fn importable(interpreter: &str, cwd: &Path) -> bool {
    std::process::Command::new(interpreter)
        .args(["-c", "import debugpy"])
        .current_dir(cwd)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// A free loopback port for the adapter to listen on.
pub fn free_port() -> std::io::Result<u16> {
    Ok(TcpListener::bind((Ipv4Addr::LOCALHOST, 0))?
        .local_addr()?
        .port())
}

/// The command that starts the program under debugpy.
pub fn command(launch: &PythonLaunch, port: u16) -> Vec<String> {
    let mut command = vec![launch.interpreter.clone()];
    command.extend(launch.options.iter().cloned());
    // Without it debugpy warns on stderr (Python 3.11+) that frozen
    // modules may hide breakpoints; older versions ignore the option.
    command.extend(["-X".to_string(), "frozen_modules=off".to_string()]);
    command.extend(
        [
            "-m",
            "debugpy",
            "--listen",
            &format!("127.0.0.1:{port}"),
            "--wait-for-client",
        ]
        .map(String::from),
    );
    command.extend(launch.target.iter().cloned());
    command
}

/// The Python helper a logpoint's message runs: `r(globals, locals)`
/// answers one JSON object, expression to value.
fn helper(expressions: &[String]) -> String {
    // A JSON string literal is a Python string literal too.
    let expressions = serde_json::to_string(expressions).unwrap_or_else(|_| "[]".into());
    let expressions = serde_json::to_string(&expressions).unwrap_or_else(|_| "\"[]\"".into());
    format!(
        r#"import json as _j
def r(g, l):
    out = []
    for e in _j.loads({expressions}):
        try:
            v = eval(e, g, l)
        except Exception as x:
            s = _j.dumps({{"$error": (type(x).__name__ + ": " + str(x))[:300]}})
        else:
            try:
                s = _j.dumps(v)
            except Exception:
                s = None
            if s is None or len(s) > {VALUE_CAP}:
                t = repr(v) if s is None else s
                s = _j.dumps(t[:{VALUE_CAP}] if len(t) <= {VALUE_CAP} else {{"$truncated": t[:{VALUE_CAP}], "length": len(t)}})
        out.append(_j.dumps(e) + ": " + s)
    return "{{" + ", ".join(out) + "}}"
"#
    )
}

/// The `logMessage` for one logpoint: a tag, then the helper's JSON.
pub fn log_message(nonce: &str, logpoint: &SetLogpoint) -> String {
    let hex: String = helper(&logpoint.variables)
        .bytes()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!(
        "{} {} {{(lambda g, l, s: (lambda ns: (exec(s, ns), ns['r'](g, l))[1])({{}}))\
         (globals(), locals(), bytes.fromhex('{hex}').decode())}}",
        tag(nonce),
        logpoint.probe_id
    )
}

fn tag(nonce: &str) -> String {
    format!("debug-sidecar-logpoint:{nonce}")
}

/// Runs the DAP session: connects to the adapter the program started,
/// sets the logpoints, and reports hits until the program ends. Answers
/// false when no session could be had (the program is then waiting for
/// a client and should be ended).
pub fn serve(
    port: u16,
    nonce: &str,
    logpoints: &[SetLogpoint],
    mut report: impl FnMut(AdapterEvent),
) -> bool {
    let deadline = Instant::now() + CONNECT_WITHIN;
    let stream = loop {
        match TcpStream::connect((Ipv4Addr::LOCALHOST, port)) {
            Ok(stream) => break stream,
            Err(_) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(20)),
            Err(error) => {
                report(AdapterEvent::Note(format!(
                    "debugpy did not listen on 127.0.0.1:{port} ({error}); logpoints were not set"
                )));
                return false;
            }
        }
    };
    let _ = stream.set_nodelay(true);
    let Ok(mut dap) = Dap::new(stream) else {
        return false;
    };
    let mut by_file: BTreeMap<&Path, Vec<&SetLogpoint>> = BTreeMap::new();
    for logpoint in logpoints {
        by_file.entry(&logpoint.path).or_default().push(logpoint);
    }
    let initialize = json!({
        "clientID": "debug-sidecar",
        "adapterID": "debugpy",
        "linesStartAt1": true,
        "columnsStartAt1": true,
        "pathFormat": "path",
    });
    let attach = json!({"justMyCode": false, "redirectOutput": false, "subProcess": false});
    if dap.request("initialize", initialize).is_err() || dap.request("attach", attach).is_err() {
        return false;
    }
    let prefix = format!("{} ", tag(nonce));
    // setBreakpoints sequence number -> the logpoints it set, in order.
    let mut pending: BTreeMap<u64, Vec<&SetLogpoint>> = BTreeMap::new();
    let mut configured = false;
    loop {
        let message = match dap.next() {
            Ok(Some(message)) => message,
            Ok(None) => break,
            Err(error) => {
                report(AdapterEvent::Note(format!(
                    "the connection to debugpy failed ({error}); later hits were not recorded"
                )));
                break;
            }
        };
        let kind = message["type"].as_str().unwrap_or_default();
        match (kind, message["event"].as_str(), message["command"].as_str()) {
            ("event", Some("initialized"), _) if !configured => {
                configured = true;
                for (path, set) in &by_file {
                    let breakpoints: Vec<Value> = set
                        .iter()
                        .map(|lp| json!({"line": lp.line, "logMessage": log_message(nonce, lp)}))
                        .collect();
                    let arguments = json!({
                        "source": {"path": path.to_string_lossy()},
                        "breakpoints": breakpoints,
                    });
                    if let Ok(seq) = dap.request("setBreakpoints", arguments) {
                        pending.insert(seq, set.clone());
                    }
                }
                let _ = dap.request("configurationDone", json!({}));
            }
            ("event", Some("output"), _) => {
                let output = message["body"]["output"].as_str().unwrap_or_default();
                if let Some(hit) = parse_hit(&prefix, output) {
                    report(hit);
                }
            }
            ("event", Some("terminated" | "exited"), _) => break,
            ("response", _, Some("setBreakpoints")) => {
                let seq = message["request_seq"].as_u64().unwrap_or_default();
                let Some(set) = pending.remove(&seq) else {
                    continue;
                };
                let answered = message["body"]["breakpoints"].as_array();
                for (i, logpoint) in set.iter().enumerate() {
                    let answer = answered.and_then(|a| a.get(i));
                    let verified = answer.and_then(|a| a["verified"].as_bool());
                    let line = answer.and_then(|a| a["line"].as_u64());
                    if verified == Some(false) {
                        let why = answer
                            .and_then(|a| a["message"].as_str())
                            .unwrap_or("no reason given");
                        report(AdapterEvent::Note(format!(
                            "logpoint {} ({}): debugpy did not verify it: {}",
                            logpoint.probe_id,
                            logpoint.location(),
                            crate::core::budget::cut(why, 200)
                        )));
                    } else if line.is_some_and(|l| l != u64::from(logpoint.line)) {
                        report(AdapterEvent::Note(format!(
                            "logpoint {} ({}): debugpy set it on line {} (the next line that runs)",
                            logpoint.probe_id,
                            logpoint.location(),
                            line.unwrap_or_default()
                        )));
                    }
                }
            }
            _ => {}
        }
    }
    dap.shutdown();
    configured
}

/// A hit from an `output` event: our tag, a probe id, one JSON object.
fn parse_hit(prefix: &str, output: &str) -> Option<AdapterEvent> {
    let rest = output.strip_prefix(prefix)?;
    let (probe_id, json) = rest.split_once(' ')?;
    let data = match serde_json::from_str::<Value>(json.trim_end()) {
        Ok(Value::Object(data)) => data,
        // The helper itself failed (debugpy prints the exception instead).
        _ => {
            let mut data = Map::new();
            data.insert(
                "$error".into(),
                Value::String(crate::core::budget::cut(json.trim_end(), 300)),
            );
            data
        }
    };
    Some(AdapterEvent::Hit {
        probe_id: probe_id.to_string(),
        data,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn python_programs_are_recognised() {
        let here = Path::new(".");
        let l = python_launch(&words("python3 -u app.py --flag"), here).unwrap();
        assert_eq!(
            (l.interpreter.as_str(), l.options, l.target),
            ("python3", words("-u"), words("app.py --flag"))
        );
        let l = python_launch(&words("/usr/bin/python3.11 -X dev -m pytest -q"), here).unwrap();
        assert_eq!(
            (l.options, l.target),
            (words("-X dev"), words("-m pytest -q"))
        );
        assert!(python_launch(&words("python -c print(1)"), here).is_none());
        assert!(python_launch(&words("python"), here).is_none());
        assert!(python_launch(&words("pythonic app.py"), here).is_none());
        assert!(python_launch(&words("node app.js"), here).is_none());
        assert_eq!(
            command(&python_launch(&words("python app.py 1"), here).unwrap(), 4000),
            words("python -X frozen_modules=off -m debugpy --listen 127.0.0.1:4000 --wait-for-client app.py 1")
        );
    }

    #[test]
    fn a_hit_needs_the_tag_and_a_bad_payload_is_an_error_value() {
        let prefix = "debug-sidecar-logpoint:n1 ";
        assert_eq!(parse_hit(prefix, "debug-sidecar-logpoint:n2 p1 {}\n"), None);
        assert_eq!(parse_hit(prefix, "p1 {}\n"), None);
        let Some(AdapterEvent::Hit { probe_id, data }) =
            parse_hit(prefix, "debug-sidecar-logpoint:n1 p3 {\"x\": 1}\n")
        else {
            panic!("not a hit")
        };
        assert_eq!((probe_id.as_str(), &data["x"]), ("p3", &json!(1)));
        let Some(AdapterEvent::Hit { data, .. }) =
            parse_hit(prefix, "debug-sidecar-logpoint:n1 p3 NameError: boom\n")
        else {
            panic!("not a hit")
        };
        assert!(data["$error"].as_str().unwrap().contains("NameError"));
    }

    #[test]
    fn the_message_has_balanced_braces_whatever_the_expressions() {
        let lp = SetLogpoint {
            probe_id: "p1".into(),
            hypothesis_id: None,
            file: "a.py".into(),
            path: "/a.py".into(),
            line: 1,
            variables: vec!["'{'".into(), "d['}']".into()],
            message: None,
        };
        let message = log_message("n", &lp);
        let opens = message.matches('{').count();
        assert_eq!(opens, message.matches('}').count());
        assert!(!message.contains('%'), "debugpy formats the message with %");
    }
}
