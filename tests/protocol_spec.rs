//! The protocol spec in `protocol/` must match the Rust types: the JSON
//! Schemas are generated from them and the method table lists every method.
//! Run with `UPDATE_PROTOCOL_SCHEMAS=1` to regenerate the schemas after a
//! deliberate change, then review the diff.

use debug_sidecar::protocol::{catalogue, Kind};
use serde_json::json;
use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

fn file_name(method: &str) -> String {
    format!("{}.json", method.replace('/', "."))
}

#[test]
fn schemas_match_the_types() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol/schema");
    let update = std::env::var_os("UPDATE_PROTOCOL_SCHEMAS").is_some();
    if update {
        fs::create_dir_all(&dir).unwrap();
    }
    let mut expected = BTreeSet::new();
    let mut drifted = Vec::new();
    for spec in catalogue() {
        let name = file_name(spec.method);
        expected.insert(name.clone());
        let mut document = json!({
            "method": spec.method,
            "kind": spec.kind,
            "params": spec.params,
        });
        if spec.kind == Kind::Request {
            document["result"] = serde_json::to_value(&spec.result).unwrap();
        }
        let text = serde_json::to_string_pretty(&document).unwrap() + "\n";
        let path = dir.join(&name);
        if update {
            fs::write(&path, &text).unwrap();
        } else if fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            drifted.push(name);
        }
    }
    // Documents the sidecar writes for people and CI, beside the methods.
    let documents = [(
        "fix-certificate.json",
        schemars::schema_for!(debug_sidecar::core::certificate::Certificate),
    )];
    for (name, schema) in documents {
        expected.insert(name.to_string());
        let text = serde_json::to_string_pretty(&schema).unwrap() + "\n";
        let path = dir.join(name);
        if update {
            fs::write(&path, &text).unwrap();
        } else if fs::read_to_string(&path).ok().as_deref() != Some(text.as_str()) {
            drifted.push(name.to_string());
        }
    }
    let on_disk: BTreeSet<String> = fs::read_dir(&dir)
        .map(|entries| {
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    let stale: Vec<_> = on_disk.difference(&expected).collect();
    assert!(
        drifted.is_empty() && stale.is_empty(),
        "protocol/schema drifted from the types: changed or missing {drifted:?}, stale {stale:?}. \
         Regenerate with UPDATE_PROTOCOL_SCHEMAS=1 cargo test --test protocol_spec and review."
    );
}

fn readme() -> String {
    fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol/README.md"))
        .expect("protocol/README.md exists")
}

#[test]
fn the_method_table_lists_every_method_with_its_kind() {
    let readme = readme();
    let documented: BTreeSet<(String, String)> = readme
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter(|rest| rest.split('`').next().is_some_and(|m| m.contains('/')))
        .map(|rest| {
            let cells: Vec<&str> = rest.split('|').map(str::trim).collect();
            (
                cells[0].trim_end_matches('`').to_string(),
                cells[1].to_string(),
            )
        })
        .collect();
    let defined: BTreeSet<(String, String)> = catalogue()
        .iter()
        .map(|s| {
            let kind = match s.kind {
                Kind::Request => "request",
                Kind::ClientNotification => "notification to the sidecar",
                Kind::ServerNotification => "notification from the sidecar",
            };
            (s.method.to_string(), kind.to_string())
        })
        .collect();
    assert_eq!(
        documented, defined,
        "protocol/README.md's method table and src/protocol.rs differ"
    );
}

#[test]
fn every_error_code_is_documented() {
    use debug_sidecar::rpc::errors::*;
    let readme = readme();
    for code in [
        PARSE_ERROR,
        INVALID_REQUEST,
        INVALID_PARAMS,
        INTERNAL_ERROR,
        ILLEGAL_COMMAND,
        WORKSPACE_ERROR,
        -32601,
        -32002,
    ] {
        assert!(
            readme.contains(&format!("| `{code}` |")),
            "error code {code} is missing from protocol/README.md's error table"
        );
    }
}

#[test]
fn the_documented_body_limit_is_the_real_one() {
    let limit = debug_sidecar::rpc::framing::MAX_BODY;
    assert!(
        readme().contains(&format!("**8 MiB** ({} bytes)", group(limit))),
        "protocol/README.md states a different body limit than {limit}"
    );
}

#[test]
fn the_documented_ingest_limits_are_the_real_ones() {
    use debug_sidecar::workspace::ingest::*;
    let readme = readme();
    let rows = [
        format!("| connections served at once | {MAX_CONNECTIONS}, "),
        format!("| header timeout | {} s, ", HEADER_TIMEOUT.as_secs()),
        format!("| body timeout | {} s, ", BODY_TIMEOUT.as_secs()),
        format!(
            "| connection age | {} s; then closed after its current answer, at the latest {} s later",
            MAX_CONNECTION_AGE.as_secs(),
            BODY_TIMEOUT.as_secs()
        ),
    ];
    for row in rows {
        assert!(
            readme.contains(&row),
            "protocol/README.md's ingest limits differ from the code: {row:?}"
        );
    }
}

#[test]
fn the_documented_shape_limits_are_the_real_ones() {
    use debug_sidecar::core::message_shape::{MAX_CONTAINERS, MAX_DEPTH, MAX_ITEMS};
    let readme = readme();
    for (what, limit) in [
        ("arrays and objects", MAX_CONTAINERS),
        ("array elements and object members", MAX_ITEMS),
        ("deep", MAX_DEPTH),
    ] {
        assert!(
            readme.contains(&format!("**{}**", group(limit))),
            "protocol/README.md does not state the limit on {what} ({limit})"
        );
    }
}

fn group(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// Methods an editor client's sources name: a `debug/`, `turn/`, `progress/`
/// or `agents/` name right after a quote (a TypeScript or Lua string, an
/// Emacs Lisp string or quoted symbol).
fn methods_named_in(dir: &Path) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(path) = pending.pop() {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if path.is_dir() {
            if name != "node_modules" && name != "out" && !name.starts_with('.') {
                pending.extend(fs::read_dir(&path).unwrap().flatten().map(|e| e.path()));
            }
            continue;
        }
        if !(name.ends_with(".ts") || name.ends_with(".lua") || name.ends_with(".el")) {
            continue;
        }
        let text = fs::read_to_string(&path).unwrap();
        for (at, _) in text.match_indices(['\'', '"']) {
            let rest = &text[at + 1..];
            let Some((prefix, tail)) = rest.split_once('/') else {
                continue;
            };
            if !["debug", "turn", "progress", "agents", "tools"].contains(&prefix) {
                continue;
            }
            let method: String = tail.chars().take_while(char::is_ascii_alphabetic).collect();
            let after = tail[method.len()..].chars().next();
            if !method.is_empty() && !matches!(after, Some('/' | '.' | '-' | '_')) {
                found.insert(format!("{prefix}/{method}"));
            }
        }
    }
    found
}

#[test]
fn editor_clients_use_only_protocol_methods_and_cover_the_persons_commands() {
    let defined: BTreeSet<String> = catalogue().iter().map(|s| s.method.to_string()).collect();
    let editors = Path::new(env!("CARGO_MANIFEST_DIR")).join("editors");
    let needed = [
        "debug/start",
        "debug/proceed",
        "debug/done",
        "debug/abort",
        "debug/status",
        "debug/probes",
        "debug/logs",
        "debug/stateChanged",
        "debug/logAppended",
        "turn/stateChanged",
        "progress/changed",
    ];
    for client in ["vscode", "nvim", "emacs"] {
        let named = methods_named_in(&editors.join(client));
        let unknown: Vec<_> = named.difference(&defined).collect();
        assert!(
            unknown.is_empty(),
            "editors/{client} names methods protocol v1 does not have: {unknown:?}"
        );
        let missing: Vec<_> = needed.iter().filter(|m| !named.contains(**m)).collect();
        assert!(
            missing.is_empty(),
            "editors/{client} never uses {missing:?}"
        );
    }
}

#[test]
fn the_pi_extension_uses_only_protocol_methods_and_covers_both_sides() {
    let defined: BTreeSet<String> = catalogue().iter().map(|s| s.method.to_string()).collect();
    let named = methods_named_in(&Path::new(env!("CARGO_MANIFEST_DIR")).join("editors/pi"));
    let unknown: Vec<_> = named.difference(&defined).collect();
    assert!(
        unknown.is_empty(),
        "editors/pi names methods protocol v1 does not have: {unknown:?}"
    );
    let needed = [
        "tools/list",
        "tools/call",
        "debug/context",
        "debug/stop",
        "turn/event",
        "debug/start",
        "debug/proceed",
        "debug/done",
        "debug/abort",
        "debug/status",
        "debug/stateChanged",
    ];
    let missing: Vec<_> = needed.iter().filter(|m| !named.contains(**m)).collect();
    assert!(missing.is_empty(), "editors/pi never uses {missing:?}");
}
