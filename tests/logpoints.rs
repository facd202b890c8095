//! Logpoints end to end, through the real binary: placed with
//! `debug/probeSnippet` (`kind: "logpoint"`), set by `debug-sidecar run` in
//! real Python programs (under every Python 3.8+ scripts/test finds), hits
//! recorded with their values, the source unchanged byte for byte, the exit
//! status passed through, a failing expression recorded, a moved or changed
//! line reported; imported modules, a real pytest (whose loader compiles
//! test files itself) and a Python started by a shell; the hook invisible to
//! the program; and the ledger side: bounds, removal as cleanup, revival.

mod support;

use debug_sidecar::rpc::client::Connection;
use serde_json::{json, Value};
use std::process::Command;
use support::*;

const CART: &str = r#"import sys

def total(items, discount):
    s = 0
    for price, qty in items:
        s += price * qty
    if discount > 100:
        s = s - discount
    return s

print("total:", total([(10, 2), (5, 1)], 150))
sys.exit(2)
"#;

/// The interpreters the Python tests run under: every Python 3.8+ scripts/test
/// found (DEBUG_SIDECAR_TEST_PYTHONS, `:`-separated), else `python3`.
fn pythons() -> Vec<String> {
    match std::env::var("DEBUG_SIDECAR_TEST_PYTHONS") {
        Ok(list) if !list.is_empty() => list.split(':').map(String::from).collect(),
        _ => {
            assert!(
                std::env::var_os("CI").is_none(),
                "DEBUG_SIDECAR_TEST_PYTHONS is not set; run the tests through scripts/test"
            );
            vec!["python3".to_string()]
        }
    }
}

fn version(python: &str) -> String {
    let out = Command::new(python)
        .args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

type Answer = Result<Value, debug_sidecar::rpc::client::ClientError>;

fn place(server: &mut Connection, line: u32, variables: Value) -> Answer {
    server.request(
        "debug/probeSnippet",
        json!({"file": "cart.py", "kind": "logpoint", "line": line,
               "hypothesisId": "H1", "variables": variables}),
    )
}

#[test]
fn python_logpoints_record_values_without_touching_the_source() {
    for python in pythons() {
        record_values_under(&python);
    }
}

fn record_values_under(python: &str) {
    let version = version(python);
    let workspace = Workspace::new(&format!("logpoints-python-{version}"));
    let root = &workspace.root;
    std::fs::write(root.join("cart.py"), CART).unwrap();
    let mut server = initialized(root);
    let started = server
        .request(
            "debug/start",
            json!({"sessionId": "s1", "problem": "total is wrong"}),
        )
        .unwrap();
    let log = started["logFile"].as_str().unwrap().to_string();
    // Line 8 (`s = s - discount`): the loop's sum and the discount, and an
    // expression that fails.
    // The last one assigns: its copy of the locals takes it, not the program.
    let placed = place(
        &mut server,
        8,
        json!(["s", "discount", "missing_name", "(s := 0)"]),
    )
    .unwrap();
    assert_eq!(placed["probe"]["kind"], "logpoint");
    assert_eq!(placed["probe"]["state"], "live");
    assert_eq!(placed["snippet"], "");
    let id = placed["probe"]["id"].as_str().unwrap().to_string();
    // In the loop, hit once per item.
    place(&mut server, 6, json!(["price * qty"])).unwrap();

    let out = sidecar(root, &["run", "--", python, "cart.py"], None);
    assert_eq!(out.status.code(), Some(2), "Python {version}: {out:?}");
    assert_eq!(out.stdout, b"total: -125\n", "passed through unchanged");
    assert_eq!(std::fs::read_to_string(root.join("cart.py")).unwrap(), CART);

    let lines = records(&log);
    let hits: Vec<&Value> = lines.iter().filter(|r| r["source"] == "logpoint").collect();
    assert_eq!(hits.len(), 3, "Python {version}: {lines:#?}");
    let discount = hits.iter().find(|h| h["probeId"] == id.as_str()).unwrap();
    assert_eq!(discount["hypothesisId"], "H1");
    assert_eq!(discount["location"], "cart.py:8");
    assert_eq!(discount["data"]["s"], 25);
    assert_eq!(discount["data"]["discount"], 150);
    assert_eq!(discount["data"]["(s := 0)"], 0);
    let error = discount["data"]["missing_name"]["$error"].as_str().unwrap();
    assert!(error.starts_with("NameError"), "{error}");
    let products: Vec<&Value> = hits
        .iter()
        .filter(|h| h["location"] == "cart.py:6")
        .map(|h| &h["data"]["price * qty"])
        .collect();
    assert_eq!(products, [&json!(20), &json!(5)]);
    // The hits come before the program's last line and the exit record.
    let exit = lines.last().unwrap();
    assert_eq!(exit["source"], "exit");
    assert_eq!(exit["command"], json!([python, "cart.py"]));

    // The ledger and the blackboard show it; removing it is its cleanup.
    let ledger = server.request("debug/probes", json!({})).unwrap();
    assert_eq!(ledger["live"], 2);
    let board = server.request("debug/context", json!({})).unwrap();
    let board = board["content"].as_str().unwrap();
    assert!(board.contains("cart.py:8 (logpoint)"), "{board}");
    let removed = server
        .request("debug/removeLogpoints", json!({"probeIds": [id]}))
        .unwrap();
    assert_eq!(removed["removed"], json!([id]));
    let ledger = server.request("debug/probes", json!({})).unwrap();
    assert_eq!(ledger["live"], 1);
}

#[test]
fn a_changed_line_is_reported_and_a_moved_one_followed() {
    let workspace = Workspace::new("logpoints-moved");
    let root = &workspace.root;
    std::fs::write(root.join("cart.py"), CART).unwrap();
    let mut server = initialized(root);
    let started = server
        .request("debug/start", json!({"sessionId": "s1", "problem": "p"}))
        .unwrap();
    let log = started["logFile"].as_str().unwrap().to_string();
    place(&mut server, 8, json!(["s"])).unwrap();
    place(&mut server, 7, json!(["discount"])).unwrap();
    // Two lines added above, and line 7 edited.
    let edited = CART
        .replace("import sys\n", "import sys\nimport os\nimport re\n")
        .replace("if discount > 100:", "if discount >= 100:");
    std::fs::write(root.join("cart.py"), &edited).unwrap();
    let out = sidecar(root, &["run", "--", "python3", "cart.py"], None);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("(cart.py:8): that line moved to line 10; set there"),
        "{stderr}"
    );
    assert!(
        stderr.contains("(cart.py:7) is not set: the line changed"),
        "{stderr}"
    );
    let lines = records(&log);
    let notes: Vec<&Value> = lines.iter().filter(|r| r["source"] == "sidecar").collect();
    assert_eq!(notes.len(), 2, "{lines:#?}");
    let hits: Vec<&Value> = lines.iter().filter(|r| r["source"] == "logpoint").collect();
    assert_eq!(hits.len(), 1, "{lines:#?}");
    assert_eq!(hits[0]["location"], "cart.py:10");
    assert_eq!(hits[0]["data"]["s"], 25);
}

const CALC: &str = "def double(x):\n    y = x * 2\n    return y\n";
const MAIN: &str = "from shop.calc import double\n\nprint(double(21))\n";
const TEST_CALC: &str =
    "from shop.calc import double\n\n\ndef test_double():\n    v = double(4)\n    assert v == 8\n";

#[test]
fn python_logpoints_reach_imports_modules_shells_and_pytest() {
    for python in pythons() {
        let version = version(&python);
        let workspace = Workspace::new(&format!("logpoints-reach-{version}"));
        let root = &workspace.root;
        std::fs::create_dir_all(root.join("shop")).unwrap();
        std::fs::write(root.join("shop/__init__.py"), "").unwrap();
        std::fs::write(root.join("shop/calc.py"), CALC).unwrap();
        std::fs::write(root.join("main.py"), MAIN).unwrap();
        let (_server, log) = with_logpoints(
            root,
            &[
                ("shop/calc.py", 3, json!(["x", "y"])),
                ("main.py", 3, json!(["double.__name__"])),
            ],
        );
        let shell = format!("{python} main.py");
        // Started directly, as a module, and by a shell `run` knows nothing of.
        for command in [
            vec![python.as_str(), "main.py"],
            vec![python.as_str(), "-m", "main"],
            vec!["sh", "-c", shell.as_str()],
        ] {
            let before = hits_of(&log).len();
            let mut args = vec!["run", "--"];
            args.extend(&command);
            let out = sidecar(root, &args, None);
            assert_eq!(out.stdout, b"42\n", "Python {version} {command:?}: {out:?}");
            let hits = hits_of(&log)[before..].to_vec();
            assert_eq!(
                hits,
                // Before the line runs, as a breakpoint would.
                [
                    (
                        "main.py:3".to_string(),
                        json!({"double.__name__": "double"})
                    ),
                    ("shop/calc.py:3".to_string(), json!({"x": 21, "y": 42})),
                ],
                "Python {version} {command:?}"
            );
        }
        assert_eq!(
            std::fs::read_to_string(root.join("shop/calc.py")).unwrap(),
            CALC
        );
        assert!(
            !root.join("shop/__pycache__").exists()
                || std::fs::read_dir(root.join("shop/__pycache__"))
                    .unwrap()
                    .all(|e| !e.unwrap().file_name().to_string_lossy().starts_with("calc")),
            "the compiled-with-logpoints module is never cached"
        );
        // No Python at all: said so.
        let out = sidecar(root, &["run", "--", "true"], None);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("2 Python logpoint(s) not set: no Python process ran"),
            "{stderr}"
        );
    }
}

#[test]
fn python_logpoints_reach_test_files_pytest_compiles_itself() {
    let Some(python) = installed_tool("DEBUG_SIDECAR_PYTEST_PYTHON") else {
        return;
    };
    let python = python.to_string_lossy().into_owned();
    let workspace = Workspace::new("logpoints-pytest");
    let root = &workspace.root;
    std::fs::create_dir_all(root.join("shop")).unwrap();
    std::fs::write(root.join("shop/__init__.py"), "").unwrap();
    std::fs::write(root.join("shop/calc.py"), CALC).unwrap();
    std::fs::write(root.join("test_calc.py"), TEST_CALC).unwrap();
    let (_server, log) = with_logpoints(
        root,
        &[
            ("shop/calc.py", 3, json!(["x", "y"])),
            // No trace function: the call went into pytest's own tree.
            (
                "test_calc.py",
                6,
                json!(["v", "__import__('sys').gettrace()"]),
            ),
        ],
    );
    // Twice: pytest neither reads nor writes its cache of a logpoint's test
    // file, so the second run is set the same way.
    for round in 0..2 {
        let before = hits_of(&log).len();
        let out = sidecar(
            root,
            &["run", "--", &python, "-m", "pytest", "-q", "test_calc.py"],
            None,
        );
        assert_eq!(out.status.code(), Some(0), "{out:?}");
        let hits = hits_of(&log)[before..].to_vec();
        assert_eq!(
            hits,
            [
                ("shop/calc.py:3".to_string(), json!({"x": 4, "y": 8})),
                (
                    "test_calc.py:6".to_string(),
                    json!({"v": 8, "__import__('sys').gettrace()": null})
                ),
            ],
            "run {round}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(root.join("test_calc.py")).unwrap(),
        TEST_CALC
    );
    let cached = std::fs::read_dir(root.join("__pycache__"))
        .map(|entries| {
            entries
                .flatten()
                .any(|e| e.file_name().to_string_lossy().starts_with("test_calc"))
        })
        .unwrap_or(false);
    assert!(
        !cached,
        "pytest cached the test file compiled with the calls"
    );
}

const APP: &str = "import sys\nimport helper\nprint(helper.NAME)\nprint([p for p in sys.path if 'debug-sidecar' in p])\nraise ValueError('boom')\n";

#[test]
fn the_python_hook_is_invisible_to_the_program() {
    for python in pythons() {
        let version = version(&python);
        let workspace = Workspace::new(&format!("logpoints-invisible-{version}"));
        let root = &workspace.root;
        // The person's own PYTHONPATH, with a sitecustomize of theirs.
        let theirs = root.join("theirs");
        std::fs::create_dir_all(&theirs).unwrap();
        std::fs::write(theirs.join("helper.py"), "NAME = 'helper'\n").unwrap();
        std::fs::write(
            theirs.join("sitecustomize.py"),
            "import sys\nprint('PERSON SITE', file=sys.stderr)\n",
        )
        .unwrap();
        std::fs::write(root.join("app.py"), APP).unwrap();
        let mut server = initialized(root);
        server
            .request("debug/start", json!({"sessionId": "s1", "problem": "p"}))
            .unwrap();
        server
            .request(
                "debug/probeSnippet",
                json!({"file": "app.py", "kind": "logpoint", "line": 3, "variables": ["helper.NAME"]}),
            )
            .unwrap();
        let log = current_log(&mut server);
        let out = Command::new(BIN)
            .args(["run", "--", &python, "app.py"])
            .current_dir(root)
            .env("PYTHONPATH", &theirs)
            .env_remove("DEBUG_SIDECAR_DIR")
            .env_remove("DEBUG_SIDECAR_SESSION")
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(1), "Python {version}: {out:?}");
        assert_eq!(out.stdout, b"helper\n[]\n", "Python {version}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.starts_with("PERSON SITE\n"),
            "Python {version}: {stderr}"
        );
        let traceback = stderr.lines().skip(1).take(3).collect::<Vec<_>>();
        assert_eq!(
            traceback[0], "Traceback (most recent call last):",
            "{stderr}"
        );
        assert!(
            traceback[1].trim_start().starts_with("File \"")
                && traceback[1].contains("app.py\", line 5, in <module>"),
            "the program's frame comes first (Python {version}): {stderr}"
        );
        assert!(
            !stderr.contains("run_main")
                && !stderr.contains("sitecustomize")
                && !stderr.contains("debug_sidecar_logpoints"),
            "{stderr}"
        );
        assert_eq!(
            hits_of(&log),
            [("app.py:3".to_string(), json!({"helper.NAME": "helper"}))],
            "Python {version}"
        );
    }
}

#[test]
fn logpoints_are_bounded_and_only_removal_cleans_them_up() {
    let workspace = Workspace::new("logpoints-ledger");
    let root = &workspace.root;
    std::fs::write(root.join("cart.py"), CART).unwrap();
    std::fs::write(root.join("main.go"), "package main\n").unwrap();
    let mut server = initialized(root);
    server
        .request("debug/start", json!({"sessionId": "s1", "problem": "p"}))
        .unwrap();
    let refused = |result: Answer| -> String { result.unwrap_err().to_string() };
    assert!(refused(place(&mut server, 99, json!(["s"]))).contains("12 line(s)"));
    assert!(refused(place(&mut server, 2, json!(["s"]))).contains("blank"));
    assert!(refused(place(&mut server, 8, json!([]))).contains("at least one"));
    assert!(refused(place(&mut server, 8, json!(["a\nb"]))).contains("one line"));
    let many: Vec<String> = (0..17).map(|i| format!("x{i}")).collect();
    assert!(refused(place(&mut server, 8, json!(many))).contains("at most 16"));
    let outside = server.request(
        "debug/probeSnippet",
        json!({"file": "../cart.py", "kind": "logpoint", "line": 1, "variables": ["s"]}),
    );
    assert!(refused(outside).contains("outside the workspace"));
    let go = server.request(
        "debug/probeSnippet",
        json!({"file": "main.go", "kind": "logpoint", "line": 1, "variables": ["s"]}),
    );
    assert!(refused(go).contains("use a source probe"));
    // TypeScript needs a compiler between it and Node: refused, not placed.
    std::fs::write(root.join("app.ts"), "const s: number = 1;\n").unwrap();
    let ts = server.request(
        "debug/probeSnippet",
        json!({"file": "app.ts", "kind": "logpoint", "line": 1, "variables": ["s"]}),
    );
    assert!(refused(ts).contains("TypeScript included"));
    for _ in 0..32 {
        place(&mut server, 8, json!(["s"])).unwrap();
    }
    assert!(refused(place(&mut server, 8, json!(["s"]))).contains("at most 32 live logpoints"));

    // A rescan does not touch them; Mark fixed waits for their removal.
    let ledger = server
        .request("debug/probes", json!({"rescan": true}))
        .unwrap();
    assert_eq!(ledger["live"], 32);
    server.request("debug/done", json!({})).unwrap();
    let stop = server.request("debug/stop", json!({})).unwrap();
    assert_eq!(stop["decision"], "block");
    let reason = stop["reason"].as_str().unwrap();
    assert!(reason.contains("remove_logpoints"), "{reason}");
    let source = server.request("debug/removeLogpoints", json!({"probeIds": ["p999"]}));
    assert!(refused(source).contains("not in the ledger"));
    let ids: Vec<String> = (1..=32).map(|i| format!("p{i}")).collect();
    server
        .request("debug/removeLogpoints", json!({"probeIds": ids}))
        .unwrap();
    let stop = server.request("debug/stop", json!({})).unwrap();
    assert_eq!(stop["decision"], "allow", "{stop}");
    let notice = stop["notice"].as_str().unwrap();
    assert!(notice.contains("Cleanup verified"), "{notice}");
    assert!(notice.contains("32 probe(s) removed"), "{notice}");
}

#[test]
fn a_revived_session_keeps_its_logpoints() {
    let workspace = Workspace::new("logpoints-revival");
    let root = &workspace.root;
    std::fs::write(root.join("cart.py"), CART).unwrap();
    {
        let mut server = initialized(root);
        server
            .request("debug/start", json!({"sessionId": "s1", "problem": "p"}))
            .unwrap();
        place(&mut server, 8, json!(["s", "discount"])).unwrap();
    }
    // A new process reads state.json back.
    let mut server = initialized(root);
    let ledger = server
        .request("debug/probes", json!({"sessionId": "s1"}))
        .unwrap();
    let probe = &ledger["probes"][0];
    assert_eq!(probe["kind"], "logpoint");
    assert_eq!(probe["line"], 8);
    assert_eq!(probe["logpoint"]["variables"], json!(["s", "discount"]));
    assert_eq!(probe["state"], "live");
    // `check` lists it and stays clean: it is in no file.
    let out = sidecar(root, &["check", "--json"], None);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["logpoints"][0]["probeId"], probe["id"]);
}

const LINES: &str = "def f(n):\n    total = 0\n    while n > 0:\n        total += n\n        n -= 1\n    return max(\n        total,\n        0,\n    )\nif f(1) > 5:\n    pass\nelse:\n    print(f(3))\n# the end\n";

#[test]
fn python_lines_map_to_the_statements_that_run() {
    for python in pythons() {
        let version = version(&python);
        let workspace = Workspace::new(&format!("logpoints-lines-{version}"));
        let root = &workspace.root;
        std::fs::write(root.join("lines.py"), LINES).unwrap();
        let mut server = initialized(root);
        server
            .request("debug/start", json!({"sessionId": "s1", "problem": "p"}))
            .unwrap();
        // A loop's test, a continuation line, an `else:`, a last comment.
        for (line, variables) in [
            (3, json!(["n"])),
            (7, json!(["total"])),
            (12, json!(["f.__name__"])),
            (14, json!(["1"])),
        ] {
            server
                .request(
                    "debug/probeSnippet",
                    json!({"file": "lines.py", "kind": "logpoint", "line": line, "variables": variables}),
                )
                .unwrap();
        }
        let log = current_log(&mut server);
        let out = sidecar(root, &["run", "--", &python, "lines.py"], None);
        assert_eq!(out.stdout, b"6\n", "Python {version}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("(lines.py:7): Python set it on line 6"),
            "{stderr}"
        );
        assert!(
            stderr.contains("(lines.py:12): Python set it on line 13"),
            "{stderr}"
        );
        assert!(
            stderr.contains(
                "(lines.py:14) is not set: Python found no statement on or after that line"
            ),
            "{stderr}"
        );
        let hits = hits_of(&log);
        let at = |location: &str| -> Vec<Value> {
            hits.iter()
                .filter(|(l, _)| l == location)
                .map(|(_, d)| d.clone())
                .collect()
        };
        // The loop's test runs before every pass and once more at the end.
        let n: Vec<Value> = [1, 0, 3, 2, 1, 0]
            .iter()
            .map(|n| json!({ "n": n }))
            .collect();
        assert_eq!(at("lines.py:3"), n, "Python {version}");
        // Hits keep the logpoint's own location.
        assert_eq!(
            at("lines.py:7"),
            [json!({"total": 1}), json!({"total": 6})],
            "Python {version}: {hits:?}"
        );
        assert_eq!(
            at("lines.py:12"),
            [json!({"f.__name__": "f"})],
            "Python {version}: {hits:?}"
        );
    }
}

const SHOP: &str = "import importlib, os\n\n\nclass Cart:\n    def add(self, price):\n        self.total = getattr(self, 'total', 0) + price\n        return self.total\n\n\ndef main():\n    import helper\n    os.closerange(3, 256)\n    with open('data.txt', 'w') as f:\n        f.write('mine\\n')\n        cart = Cart()\n        cart.add(2)\n        cart.add(3)\n    importlib.reload(helper)\n\n\nmain()\n";

#[test]
fn python_logpoints_in_methods_reloads_and_a_program_that_closes_descriptors() {
    for python in pythons() {
        let version = version(&python);
        let workspace = Workspace::new(&format!("logpoints-shop-{version}"));
        let root = &workspace.root;
        std::fs::write(root.join("shop.py"), SHOP).unwrap();
        std::fs::write(root.join("helper.py"), "VALUE = 1\n").unwrap();
        let (_server, log) = with_logpoints(
            root,
            &[
                // In a method: a name with two leading underscores would be
                // mangled there.
                (
                    "shop.py",
                    6,
                    json!(["price", "b'caf\\xff'.decode('utf-8', 'surrogateescape')"]),
                ),
                ("helper.py", 1, json!(["__name__"])),
            ],
        );
        let out = sidecar(root, &["run", "--", &python, "shop.py"], None);
        assert_eq!(out.status.code(), Some(0), "Python {version}: {out:?}");
        // The program closed the hook's descriptor and opened its own file
        // on that number: no record went into it.
        assert_eq!(
            std::fs::read_to_string(root.join("data.txt")).unwrap(),
            "mine\n",
            "Python {version}"
        );
        let surrogate = "b'caf\\xff'.decode('utf-8', 'surrogateescape')";
        assert_eq!(
            hits_of(&log),
            [
                ("helper.py:1".to_string(), json!({"__name__": "helper"})),
                (
                    "shop.py:6".to_string(),
                    json!({"price": 2, surrogate: "caf\u{fffd}"})
                ),
                (
                    "shop.py:6".to_string(),
                    json!({"price": 3, surrogate: "caf\u{fffd}"})
                ),
                // Reloaded: compiled again, set again.
                ("helper.py:1".to_string(), json!({"__name__": "helper"})),
            ],
            "Python {version}"
        );
    }
}

const DEEP: &str = "import sys\nsys.setrecursionlimit(200)\n\n\ndef down(n):\n    m = n + 1\n    return down(m)\n\n\ntry:\n    down(0)\nexcept RecursionError:\n    print('caught')\n";

#[test]
fn a_program_that_recurses_to_its_limit_still_catches_it() {
    for python in pythons() {
        let version = version(&python);
        let workspace = Workspace::new(&format!("logpoints-deep-{version}"));
        let root = &workspace.root;
        std::fs::write(root.join("deep.py"), DEEP).unwrap();
        // A hit that swallowed the overflow left Python 3.8 to abort.
        let (_server, log) = with_logpoints(root, &[("deep.py", 7, json!(["m"]))]);
        let out = sidecar(root, &["run", "--", &python, "deep.py"], None);
        assert_eq!(out.status.code(), Some(0), "Python {version}: {out:?}");
        assert_eq!(out.stdout, b"caught\n", "Python {version}");
        assert!(!hits_of(&log).is_empty(), "Python {version}");
    }
}

/// Two probes on one line of a loop that runs past a logpoint's cap: each
/// is recorded for its first hits up to the cap and no more.
const LONG_LOOP: &str = "total = 0\nfor k in range(10050):\n    total += k\nprint(total)\n";

#[test]
fn a_logpoint_is_recorded_up_to_its_cap() {
    let python = pythons().remove(0);
    let version = version(&python);
    let workspace = Workspace::new(&format!("logpoints-cap-{version}"));
    let root = &workspace.root;
    std::fs::write(root.join("long.py"), LONG_LOOP).unwrap();
    let (_server, log) = with_logpoints(
        root,
        &[
            ("long.py", 3, json!(["k"])),
            ("long.py", 3, json!(["total"])),
        ],
    );
    let out = sidecar(root, &["run", "--", &python, "long.py"], None);
    assert_eq!(out.status.code(), Some(0), "Python {version}: {out:?}");
    assert_eq!(out.stdout, b"50496225\n", "Python {version}");
    let hits = hits_of(&log);
    let of = |name: &str| {
        hits.iter()
            .filter(|(_, data)| data.get(name).is_some())
            .count() as u64
    };
    assert_eq!(
        (of("k"), of("total")),
        (
            debug_sidecar::core::logpoint::MAX_HITS_PER_LOGPOINT,
            debug_sidecar::core::logpoint::MAX_HITS_PER_LOGPOINT
        ),
        "Python {version}"
    );
    let last = hits.iter().rev().find(|(_, data)| data.get("k").is_some());
    assert_eq!(last.unwrap().1["k"], json!(9999), "Python {version}");
}
