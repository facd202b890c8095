//! Node logpoints end to end, through the real binary and the machine's
//! Node: placed with `debug/probeSnippet` (`kind: "logpoint"`) in a `.js` or
//! `.mjs` file, set by `debug-sidecar run` in every Node process the command
//! starts (`node cart.js`, `npm test`), hits recorded with their values (a
//! failing expression as an error, cycles, BigInt and long strings made safe),
//! the source unchanged byte for byte, the program's stderr untouched, the exit
//! status passed through, moved, changed and relocated lines reported.

mod support;

use debug_sidecar::rpc::client::Connection;
use serde_json::{json, Value};
use std::path::Path;
use std::process::Command;
use support::*;

const CART: &str = r#"const meta = { name: "cart" };
meta.self = meta;
const big = 2n ** 70n;
const long = "x".repeat(5000);

function total(items, discount) {
  let s = 0;
  for (const [price, qty] of items) {
    s += price * qty;
  }
  // Large discounts are taken off the sum.
  if (discount > 100) {
    s = s - discount;
  }
  return s;
}

console.log("total:", total([[10, 2], [5, 1]], 150));
process.exitCode = 2;
debugger; // would pause a program under a debugger that stops
"#;

/// Whether the machine has Node; under CI it must.
fn has_node() -> bool {
    has_command("node")
}

/// A workspace with `file` holding CART and a started session; the run log.
fn session(name: &str, file: &str) -> (Workspace, Connection, String) {
    let workspace = Workspace::new(name);
    std::fs::write(workspace.root.join(file), CART).unwrap();
    let mut server = initialized(&workspace.root);
    let started = server
        .request(
            "debug/start",
            json!({"sessionId": "s1", "problem": "total is wrong"}),
        )
        .unwrap();
    let log = started["logFile"].as_str().unwrap().to_string();
    (workspace, server, log)
}

fn hits(lines: &[Value]) -> Vec<&Value> {
    lines.iter().filter(|r| r["source"] == "logpoint").collect()
}

#[test]
fn node_logpoints_record_values_without_touching_the_source() {
    if !has_node() {
        return;
    }
    let (workspace, mut server, log) = session("logpoints-node", "cart.js");
    let root = &workspace.root;
    // The last expression tries to leave its wrapper: were it pasted into the
    // condition, the program would exit with 7.
    let escape = "s]) } catch (e) {} process.exit(7); { ([s";
    let placed = place_logpoint(
        &mut server,
        "cart.js",
        13,
        json!(["s", "discount", "missing_name", escape]),
    );
    assert_eq!(placed["probe"]["kind"], "logpoint");
    assert_eq!(placed["probe"]["language"], "javascript");
    let id = placed["probe"]["id"].as_str().unwrap().to_string();
    // A second logpoint on the same line, one in the loop, and one at the
    // top level, where the values that JSON lacks are.
    let same_line = place_logpoint(&mut server, "cart.js", 13, json!(["items.length"]));
    place_logpoint(&mut server, "cart.js", 9, json!(["price * qty"]));
    place_logpoint(&mut server, "cart.js", 18, json!(["meta", "big", "long"]));

    let out = sidecar(root, &["run", "--", "node", "cart.js"], None);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(out.stdout, b"total: -125\n", "passed through unchanged");
    assert_eq!(std::fs::read_to_string(root.join("cart.js")).unwrap(), CART);

    let lines = records(&log);
    let hits = hits(&lines);
    assert_eq!(hits.len(), 5, "{lines:#?}");
    let discount = hits.iter().find(|h| h["probeId"] == id.as_str()).unwrap();
    assert_eq!(discount["hypothesisId"], "H1");
    assert_eq!(discount["location"], "cart.js:13");
    let data = &discount["data"];
    assert_eq!((&data["s"], &data["discount"]), (&json!(25), &json!(150)));
    let error = data["missing_name"]["$error"].as_str().unwrap();
    assert!(error.starts_with("ReferenceError"), "{error}");
    let error = data[escape]["$error"].as_str().unwrap();
    assert!(error.starts_with("SyntaxError"), "{error}");
    let top = hits.iter().find(|h| h["location"] == "cart.js:18").unwrap();
    let data = &top["data"];
    assert_eq!(data["meta"], json!({"name": "cart", "self": "[Circular]"}));
    assert_eq!(data["big"], "1180591620717411303424n");
    assert_eq!(data["long"]["length"], 5000);
    assert!(data["long"]["$truncated"].as_str().unwrap().len() < 1024);
    let other = hits
        .iter()
        .find(|h| h["probeId"] == same_line["probe"]["id"])
        .unwrap();
    assert_eq!(other["data"]["items.length"], 2);
    let products: Vec<&Value> = hits
        .iter()
        .filter(|h| h["location"] == "cart.js:9")
        .map(|h| &h["data"]["price * qty"])
        .collect();
    assert_eq!(products, [&json!(20), &json!(5)]);
    let exit = lines.last().unwrap();
    assert_eq!(exit["source"], "exit");
    assert_eq!(exit["command"], json!(["node", "cart.js"]));
    assert_eq!(exit["exitCode"], 2);
    // Nothing of the inspector's reached the program's stderr.
    assert!(
        !lines
            .iter()
            .any(|r| r["source"] == "stderr" || r["source"] == "sidecar"),
        "{lines:#?}"
    );
}

#[test]
fn moved_changed_and_relocated_lines_are_reported() {
    if !has_node() {
        return;
    }
    let (workspace, mut server, log) = session("logpoints-node-moved", "cart.js");
    let root = &workspace.root;
    place_logpoint(&mut server, "cart.js", 13, json!(["s"]));
    place_logpoint(&mut server, "cart.js", 12, json!(["discount"]));
    // A comment: no code there, Node sets it on the next line that runs.
    place_logpoint(&mut server, "cart.js", 11, json!(["s"]));
    let edited = format!("'use strict';\n\n{CART}").replace("discount > 100", "discount >= 100");
    std::fs::write(root.join("cart.js"), &edited).unwrap();
    let out = sidecar(root, &["run", "--", "node", "cart.js"], None);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("(cart.js:13): that line moved to line 15; set there"),
        "{stderr}"
    );
    assert!(
        stderr.contains("(cart.js:12) is not set: the line changed"),
        "{stderr}"
    );
    assert!(
        stderr.contains("(cart.js:13): Node set it on line 14 (the next line that runs)"),
        "{stderr}"
    );
    let lines = records(&log);
    let notes = lines.iter().filter(|r| r["source"] == "sidecar").count();
    assert_eq!(notes, 4, "{lines:#?}");
    let hits = hits(&lines);
    let at = |location: &str| hits.iter().filter(|h| h["location"] == location).count();
    assert_eq!((at("cart.js:15"), at("cart.js:13")), (1, 1), "{hits:#?}");
    assert_eq!(
        std::fs::read_to_string(root.join("cart.js")).unwrap(),
        edited
    );
}

#[test]
fn an_npm_script_running_an_esm_file_gets_its_logpoints() {
    if !has_node() {
        return;
    }
    let (workspace, mut server, log) = session("logpoints-npm", "cart.mjs");
    let root = &workspace.root;
    std::fs::write(
        root.join("package.json"),
        r#"{"name": "cart", "version": "1.0.0", "private": true,
            "scripts": {"test": "node cart.mjs"}}"#,
    )
    .unwrap();
    place_logpoint(&mut server, "cart.mjs", 13, json!(["s", "discount"]));
    let out = sidecar_offline(root, &["run", "--", "npm", "test"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("total: -125"), "{stdout}");
    let lines = records(&log);
    let hits = hits(&lines);
    assert_eq!(hits.len(), 1, "{lines:#?}");
    assert_eq!(hits[0]["location"], "cart.mjs:13");
    assert_eq!(hits[0]["data"], json!({"s": 25, "discount": 150}));
    assert_eq!(lines.last().unwrap()["command"], json!(["npm", "test"]));
}

#[test]
fn a_command_that_runs_no_node_says_its_logpoints_were_not_set() {
    if !has_node() {
        return;
    }
    let (workspace, mut server, log) = session("logpoints-no-node", "cart.js");
    place_logpoint(&mut server, "cart.js", 13, json!(["s"]));
    let out = sidecar(&workspace.root, &["run", "--", "true"], None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("1 JavaScript logpoint(s) not set: no Node process ran"),
        "{stderr}"
    );
    let lines = records(&log);
    assert!(lines.iter().any(|r| r["source"] == "sidecar"));
    assert!(hits(&lines).is_empty());
}

/// `run` with npm kept off the network (no update check, no registry).
fn sidecar_offline(root: &Path, args: &[&str]) -> std::process::Output {
    let mut command = Command::new(BIN);
    command
        .args(args)
        .current_dir(root)
        .env_remove("DEBUG_SIDECAR_DIR")
        .env_remove("DEBUG_SIDECAR_SESSION")
        .env("npm_config_update_notifier", "false")
        .env("npm_config_offline", "true")
        .env("npm_config_fund", "false");
    output_within_10s(&mut command)
}

/// A program whose lines try the places a call compiled into the source
/// could go wrong: continued expressions, a template's text, a comment, a
/// class body, an `if` without braces, a loop's head, a regular expression
/// holding quotes. The last value it prints says whether its code was
/// compiled with a logpoint's call in it.
const TRICKY: &str = r#"'use strict';
const seen = [];
function main(n) {
  let total = 0;
  for (let k = 0; k < n; k++) {
    if (k % 2 === 0) {
      total += k;
    } else total -= 1;
  }
  const f = (x) =>
    x * 2;
  const s = `a
  ${f(total)}
  c`;
  const r = [1, 2]
    .map(f)
    .filter(Boolean);
  while (n > 5) {
    n--;
  }
  switch (n) {
    case 1: seen.push('one'); break;
    default:
      seen.push('other');
  }
  if (total > 0)
    seen.push('positive');
  else
    seen.push('not');
  class A {
    x = f(1);
    m() { return 1; }
  }
  /* a comment
     total += 100; */
  const re = /[/"`]/g; const q = "}";
  return total +
    f(3) + s.length + r.length + new A().x + re.source.length + q.length;
}
console.log(main(10), seen.join(','), String(main).includes('__ds_g_'));
"#;

/// Where a lexer loses its place (a regular expression or a division next
/// to a backquote, a template continued over a line break) and what the
/// inspector treats its own way (a labelled loop, a declaration with no
/// value), a parameter that hides `globalThis`, and a stack frame's column
/// on a logged line.
const TRICKY_LEXER: &str = r#"'use strict';
const ok = true, tick = '`';
let n = 4;
if (ok) /`/.test(tick);
const half = n++ / 2 + ` per/page`;
let t;
t = `a;
b
`;
const s = `a\
b`;
n++;
let i = 0;
outer: while (i < 3) i++;
var later;
later = i;
function hidden(globalThis) {
  return globalThis;
}
function where() {
  return new Error('here').stack.split('\n')[1].replace(/.*:(\d+:\d+)\)$/, '$1');
}
console.log(JSON.stringify(t), half, s, n, i, later, hidden(1), where());
"#;

/// An ES module's own syntax around logged lines: a hashbang, imports over
/// several lines, `export` before declarations and lists, `export default`,
/// `import.meta`, top-level `await`; a line the hooks leave to the inspector
/// (an exported function's head) in the same file as lines compiled in.
const TRICKY_MODULE: &str = r#"#!/usr/bin/env node
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import def, {
  join as j,
} from 'node:path';
export const base = path.basename(import.meta.url);
export let count = 0;
export function bump(n) {
  count += n;
  return count;
}
export default function main() {
  return bump(2);
}
export { count as total };
const data = await Promise.resolve([1, 2, 3]);
for (const d of data) {
  bump(d);
}
const meta = import.meta.url.length > 0;
console.log(base, count, main(), typeof readFileSync, typeof def.join, j('a', 'b'), meta, String(bump).includes('__ds_g_'));
"#;

/// The Node programs to run: the machine's, and the later one the tests were
/// given (`DEBUG_SIDECAR_TEST_NODE`, which `scripts/test` sets to its Node 24:
/// module hooks on the program's own thread, where the machine's Node 20 runs
/// them on a thread of their own).
fn nodes() -> Vec<String> {
    let mut nodes = vec!["node".to_string()];
    match std::env::var("DEBUG_SIDECAR_TEST_NODE") {
        Ok(other) if !other.is_empty() => nodes.push(other),
        _ => assert!(
            std::env::var_os("CI").is_none(),
            "under CI, DEBUG_SIDECAR_TEST_NODE names a second Node"
        ),
    }
    nodes
}

/// The hits of running `source` as `file` under `node` with a logpoint on
/// every line that has code but the first three (at most a session's 32), by
/// location, and what it printed; `inspector` sets every logpoint through
/// the inspector alone.
fn tricky_hits(
    name: &str,
    file: &str,
    source: &str,
    node: &str,
    inspector: bool,
) -> (std::collections::BTreeMap<String, Vec<Value>>, String) {
    let workspace = Workspace::new(name);
    std::fs::write(workspace.root.join(file), source).unwrap();
    let mut server = initialized(&workspace.root);
    let started = server
        .request("debug/start", json!({"sessionId": "s1", "problem": "p"}))
        .unwrap();
    let log = started["logFile"].as_str().unwrap().to_string();
    let last = source.lines().count();
    for (i, text) in source.lines().enumerate().skip(3) {
        if text.trim().is_empty() || text.trim() == "}" {
            continue;
        }
        let values = if i + 1 < last {
            json!(["n"])
        } else {
            json!(["1"])
        };
        place_logpoint(&mut server, file, u32::try_from(i + 1).unwrap(), values);
    }
    let mut command = Command::new(BIN);
    command
        .args(["run", "--", node, file])
        .current_dir(&workspace.root)
        .env_remove("DEBUG_SIDECAR_DIR")
        .env_remove("DEBUG_SIDECAR_SESSION")
        .env(
            "DEBUG_SIDECAR_NODE_INSPECTOR",
            if inspector { "1" } else { "0" },
        );
    let out = output_within_10s(&mut command);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        std::fs::read_to_string(workspace.root.join(file)).unwrap(),
        source
    );
    let mut by_location = std::collections::BTreeMap::<String, Vec<Value>>::new();
    for hit in hits(&records(&log)) {
        let line = hit["location"]
            .as_str()
            .unwrap()
            .rsplit(':')
            .next()
            .unwrap();
        by_location
            .entry(line.to_string())
            .or_default()
            .push(hit["data"].clone());
    }
    (
        by_location,
        String::from_utf8_lossy(&out.stdout).into_owned(),
    )
}

#[test]
fn logpoints_compiled_in_hit_as_the_inspector_does() {
    if !has_node() {
        return;
    }
    for (n, node) in nodes().iter().enumerate() {
        for (name, source) in [("tricky", TRICKY), ("lexer", TRICKY_LEXER)] {
            let name = format!("{name}-{n}");
            let bare = Command::new(node).arg("-e").arg(source).output().unwrap();
            let bare = String::from_utf8_lossy(&bare.stdout).into_owned();
            // The reference: every line through the inspector.
            let (inspected, printed) = tricky_hits(
                &format!("logpoints-{name}-inspected"),
                "tricky.mjs",
                source,
                node,
                true,
            );
            assert_eq!(printed, bare, "{name}");
            // As an ES module and as CommonJS, the lines where a statement
            // surely starts get the call, the others the inspector: the same
            // hits and values.
            for file in ["tricky.mjs", "tricky.js"] {
                let (compiled, printed) = tricky_hits(
                    &format!("logpoints-{name}-{file}"),
                    file,
                    source,
                    node,
                    false,
                );
                if name.starts_with("tricky") {
                    assert!(bare.ends_with(" false\n"), "{bare}");
                    assert_eq!(
                        printed,
                        bare.replace(" false\n", " true\n"),
                        "{name} {file}"
                    );
                    // Each line that runs is there, with its values: the
                    // loop's body five times, the line after a comment as
                    // the comment's.
                    assert_eq!(compiled["7"].len(), 5, "{compiled:#?}");
                    assert_eq!(compiled["4"], [json!({"n": 10})]);
                    assert_eq!(compiled["40"], [json!({"1": 1})]);
                } else {
                    // Template text untouched, and the logged lines keep
                    // their columns (the last value printed is where()'s).
                    assert_eq!(printed, bare, "{name} {file}");
                    assert_eq!(compiled["14"].len(), 4, "{compiled:#?}");
                }
                assert_eq!(compiled, inspected, "{name} {file}");
                assert!(compiled.len() > 12, "{name} {file}: {compiled:#?}");
            }
        }
        // An ES module's own syntax.
        let name = format!("module-{n}");
        let (inspected, bare) = tricky_hits(
            &format!("logpoints-{name}-inspected"),
            "tricky.mjs",
            TRICKY_MODULE,
            node,
            true,
        );
        assert!(bare.ends_with(" false\n"), "{bare}");
        let (compiled, printed) = tricky_hits(
            &format!("logpoints-{name}"),
            "tricky.mjs",
            TRICKY_MODULE,
            node,
            false,
        );
        assert_eq!(printed, bare.replace(" false\n", " true\n"), "{name}");
        assert_eq!(compiled, inspected, "{name}");
        assert_eq!(compiled["19"].len(), 3, "{compiled:#?}");
        // Left to the inspector, set as the module starts to run.
        assert_eq!(compiled["7"].len(), 1, "{compiled:#?}");
        assert_eq!(compiled["22"], [json!({"1": 1})]);
    }
}
