//! Node logpoints in the program's own process: compiled into a file's
//! source as it loads, else through the inspector.
//!
//! The hook (`node_hook.cjs`) is loaded by `--require <hook>` in the
//! command's `NODE_OPTIONS`, so every Node process the command starts
//! (`node app.js`, `npm test` and the processes npm spawns) loads it before
//! its own code. A logged line gets its call in the source V8 compiles,
//! where a statement surely starts (`node_compile.cjs`): a CommonJS file's
//! through `Module.prototype._compile`, an ES module's through Node's module
//! hooks (`module.registerHooks` on this thread from Node 22.15 and 23.5,
//! `module.register` and `node_esm.mjs` on a thread of their own from Node
//! 20.6). Any other line is set through an in-process inspector session (the
//! Chrome DevTools Protocol through `node:inspector`: no port, no adapter to
//! install, nothing printed) with `Debugger.setBreakpointByUrl` and a
//! condition that records and answers false, so the program never pauses.
//! The rest is `hook.rs`.

use super::hook::Hook;
use std::ffi::{OsStr, OsString};

/// The files of the hook's folder: the script every Node process loads, what
/// compiles calls into a file's source, and the module hooks that run on a
/// thread of their own.
pub(super) const FILES: &[(&str, &str)] = &[
    ("node_hook.cjs", include_str!("node_hook.cjs")),
    ("node_compile.cjs", include_str!("node_compile.cjs")),
    ("node_esm.mjs", include_str!("node_esm.mjs")),
];

/// The environment the command runs with: the person's `NODE_OPTIONS` and
/// the hook, and the folder the hook reads.
pub fn env(hook: &Hook, existing: Option<&OsStr>) -> Vec<(String, OsString)> {
    let script = hook
        .dir()
        .join("node_hook.cjs")
        .to_string_lossy()
        .into_owned();
    let mut options = existing.map(OsStr::to_os_string).unwrap_or_default();
    if !options.is_empty() {
        options.push(" ");
    }
    options.push(format!("--require {}", quote_option(&script)));
    vec![
        ("NODE_OPTIONS".to_string(), options),
        (
            "DEBUG_SIDECAR_LOGPOINTS".to_string(),
            hook.dir().to_path_buf().into_os_string(),
        ),
    ]
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workspace::logpoints::hook::Runtime;

    #[test]
    fn the_hook_path_is_one_quoted_option() {
        assert_eq!(quote_option(r#"/t/a "b"\c"#), r#""/t/a \"b\"\\c""#);
        let hook = Hook::create(Runtime::Node, "quote-test", Vec::new()).unwrap();
        let env = env(&hook, Some(OsStr::new("--max-old-space-size=64")));
        let expected = format!(
            "--max-old-space-size=64 --require \"{}/node_hook.cjs\"",
            hook.dir().display()
        );
        assert_eq!(env[0].1, OsString::from(expected));
    }
}
