//! Python logpoints, in the program's own processes, with no debugger.
//!
//! The hook (`python_hook.py`, written as `sitecustomize.py`) is loaded by
//! every Python 3.8+ process the command starts, through `PYTHONPATH`
//! (`python app.py`, `python -m pytest`, `pytest`, what they spawn). A file
//! with a logpoint is compiled from its source with one call added before
//! the statement on the logpoint's line: the file is not edited, no bytecode
//! is cached, and between hits the program runs as it would. A script `run`
//! starts directly is started through `run_main.py` so that the main script
//! is compiled the same way, and pytest's test files get the calls in
//! pytest's own tree. A file some other loader runs (the main script of a
//! process `run` did not start, runpy) is followed with `sys.monitoring`
//! (3.12+) or a trace function (3.8 to 3.11, slower).
//! Hits are written to the hook's folder and read by `hook.rs`.
//!
//! Why not debugpy, which the first version used: pydevd took about 2 s to
//! start and stop and traced every line of a logpoint's function, 77 times
//! the bare program on a 1M-iteration loop (the `run` benchmark); this hook
//! costs one call per hit.

use super::hook::Hook;
use std::ffi::{OsStr, OsString};
use std::path::Path;

/// The files of the hook's folder.
pub(super) const FILES: &[(&str, &str)] = &[
    ("sitecustomize.py", include_str!("python_hook.py")),
    (
        "debug_sidecar_logpoints.py",
        include_str!("python_logpoints.py"),
    ),
    ("run_main.py", include_str!("run_main.py")),
];

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

/// Whether `run_main.py` can start the target: a source file. A module
/// (`-m`), a folder or zip with `__main__.py`, or a file that is not there is
/// left to Python, which says what it says without the hook in between (the
/// import finder still compiles the files it imports).
pub fn runs_through_runner(launch: &PythonLaunch, cwd: &Path) -> bool {
    use std::io::Read;
    let Some(script) = launch.target.first().filter(|t| *t != "-m") else {
        return false;
    };
    let Ok(mut file) = std::fs::File::open(cwd.join(script)) else {
        return false;
    };
    if !file.metadata().is_ok_and(|m| m.is_file()) {
        return false;
    }
    let mut magic = [0u8; 4];
    let read = file.read(&mut magic).unwrap_or(0);
    !(read == 4 && &magic == b"PK\x03\x04")
}

/// The command as it runs: a script through the hook's `run_main.py` (so
/// the main script gets its logpoints at full speed) when
/// [`runs_through_runner`], anything else as asked.
pub fn command(launch: &PythonLaunch, runner: &Path, cwd: &Path) -> Vec<String> {
    let mut command = vec![launch.interpreter.clone()];
    command.extend(launch.options.iter().cloned());
    if runs_through_runner(launch, cwd) {
        command.push(runner.to_string_lossy().into_owned());
    }
    command.extend(launch.target.iter().cloned());
    command
}

/// The hook's `run_main.py`.
pub fn runner(hook: &Hook) -> std::path::PathBuf {
    hook.dir().join("run_main.py")
}

/// The environment the command runs with: the hook's folder first on the
/// person's `PYTHONPATH`.
pub fn env(hook: &Hook, existing: Option<&OsStr>) -> Vec<(String, OsString)> {
    let mut paths = vec![hook.dir().to_path_buf()];
    if let Some(existing) = existing.filter(|e| !e.is_empty()) {
        paths.extend(std::env::split_paths(existing));
    }
    let joined = std::env::join_paths(paths).unwrap_or_else(|_| hook.dir().as_os_str().into());
    vec![("PYTHONPATH".to_string(), joined)]
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
    }

    #[test]
    fn only_a_source_file_goes_through_the_runner() {
        let dir = std::env::temp_dir().join(format!("py-runner-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("pkg")).unwrap();
        std::fs::write(dir.join("app.py"), "print(1)\n").unwrap();
        std::fs::write(dir.join("app.pyz"), b"PK\x03\x04rest").unwrap();
        let runner = Path::new("/t/h/run_main.py");
        let run = |c: &str| command(&python_launch(&words(c), &dir).unwrap(), runner, &dir);
        assert_eq!(
            run("python -u app.py 1"),
            words("python -u /t/h/run_main.py app.py 1")
        );
        assert_eq!(run("python -m pytest -q"), words("python -m pytest -q"));
        assert_eq!(run("python app.pyz"), words("python app.pyz"));
        assert_eq!(run("python pkg"), words("python pkg"));
        assert_eq!(run("python missing.py"), words("python missing.py"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
