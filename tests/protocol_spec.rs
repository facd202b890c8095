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

#[test]
fn the_method_table_lists_every_method() {
    let readme =
        fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("protocol/README.md"))
            .expect("protocol/README.md exists");
    let documented: BTreeSet<&str> = readme
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|rest| rest.split('`').next())
        .collect();
    let defined: BTreeSet<&str> = catalogue().iter().map(|s| s.method).collect();
    assert_eq!(
        documented, defined,
        "protocol/README.md's method table and src/protocol.rs differ"
    );
}
