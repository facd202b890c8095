//! Secrets through every door the sidecar keeps (issue 32): a corpus of
//! generated secret shapes (none real) is posted to the ingest server,
//! printed by a program under `debug-sidecar run`, and appended raw by a
//! source probe; none may reach a log page, a summary, the board or the
//! CLI, and the run file holds none of what the sidecar itself wrote.
//! Equal secrets keep equal markers; a control set of innocent values
//! (hashes, UUIDs, base64 images, URLs) passes unchanged, and the false
//! positives are printed.

mod support;

use serde_json::{json, Value};
use std::process::Command;
use support::*;

/// A deterministic string of `n` characters from `alphabet`.
fn chars(seed: u64, n: usize, alphabet: &str) -> String {
    let alphabet: Vec<char> = alphabet.chars().collect();
    let mut state = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..n)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            alphabet[(state % alphabet.len() as u64) as usize]
        })
        .collect()
}

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
const HEX: &str = "0123456789abcdef";
const B64URL: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/// (what, the text a program or probe writes, the secret in it).
fn corpus() -> Vec<(String, String, String)> {
    let mut out = Vec::new();
    let mut add = |what: &str, secret: String, text: String| {
        out.push((what.to_string(), text, secret));
    };
    let bare = |what: &str, secret: String| (what.to_string(), secret.clone(), secret);
    let mut shaped: Vec<(String, String, String)> = vec![
        bare("aws access key", format!("AKIA{}", chars(1, 16, UPPER))),
        bare("aws session key", format!("ASIA{}", chars(2, 16, UPPER))),
        bare("github pat", format!("ghp_{}", chars(3, 36, ALNUM))),
        bare("github oauth", format!("gho_{}", chars(4, 36, ALNUM))),
        bare("github user", format!("ghu_{}", chars(5, 36, ALNUM))),
        bare("github server", format!("ghs_{}", chars(6, 36, ALNUM))),
        bare("github refresh", format!("ghr_{}", chars(7, 36, ALNUM))),
        bare(
            "github fine-grained",
            format!("github_pat_{}_{}", chars(8, 22, ALNUM), chars(9, 59, ALNUM)),
        ),
        bare("gitlab", format!("glpat-{}", chars(10, 20, ALNUM))),
        bare(
            "slack bot",
            format!(
                "xoxb-{}-{}",
                chars(11, 12, "0123456789"),
                chars(12, 24, ALNUM)
            ),
        ),
        bare(
            "slack user",
            format!(
                "xoxp-{}-{}",
                chars(13, 12, "0123456789"),
                chars(14, 24, ALNUM)
            ),
        ),
        bare("slack app", format!("xoxa-{}", chars(15, 30, ALNUM))),
        bare(
            "slack webhook",
            format!(
                "https://hooks.slack.com/services/T{}/B{}/{}",
                chars(16, 8, UPPER),
                chars(17, 8, UPPER),
                chars(18, 24, ALNUM)
            ),
        ),
        bare("stripe live", format!("sk_live_{}", chars(19, 24, ALNUM))),
        bare("stripe test", format!("sk_test_{}", chars(20, 24, ALNUM))),
        bare(
            "stripe restricted",
            format!("rk_live_{}", chars(21, 24, ALNUM)),
        ),
        bare(
            "anthropic",
            format!("sk-ant-api03-{}", chars(22, 80, B64URL)),
        ),
        bare(
            "openai project",
            format!("sk-proj-{}", chars(23, 48, B64URL)),
        ),
        bare("openai", format!("sk-{}", chars(24, 48, ALNUM))),
        bare("google api", format!("AIza{}", chars(25, 35, B64URL))),
        bare("npm", format!("npm_{}", chars(26, 36, ALNUM))),
        bare("pypi", format!("pypi-{}", chars(27, 60, B64URL))),
        bare("hugging face", format!("hf_{}", chars(28, 34, ALNUM))),
        bare(
            "sendgrid",
            format!("SG.{}.{}", chars(29, 22, B64URL), chars(30, 43, B64URL)),
        ),
        bare("digitalocean", format!("dop_v1_{}", chars(32, 64, HEX))),
        bare("shopify", format!("shpat_{}", chars(33, 32, HEX))),
        bare(
            "telegram bot",
            format!("{}:AA{}", chars(34, 9, "123456789"), chars(35, 33, B64URL)),
        ),
        bare("mailgun", format!("key-{}", chars(36, 32, ALNUM))),
        bare(
            "jwt",
            format!(
                "eyJhbGciOiJIUzI1NiJ9.eyJ{}.{}",
                chars(37, 40, B64URL),
                chars(38, 43, B64URL)
            ),
        ),
    ];
    for (what, secret, line) in [
        (
            "bearer header",
            chars(39, 40, ALNUM),
            "Authorization: Bearer {}",
        ),
        (
            "basic auth",
            chars(40, 24, ALNUM),
            "Authorization: Basic {}=",
        ),
        // Shorter than the bearer shape takes: the assignment's, after its scheme.
        (
            "short bearer header",
            chars(61, 8, ALNUM),
            "Authorization: Bearer {}",
        ),
        (
            "token header",
            chars(62, 12, ALNUM),
            "authorization: Token {}",
        ),
        (
            "token header of digits",
            chars(63, 12, "0123456789"),
            "Authorization: Token {}",
        ),
        ("password assignment", chars(41, 14, ALNUM), "password={}"),
        ("passwd colon", chars(42, 14, ALNUM), "passwd: {}"),
        ("db password env", chars(43, 14, ALNUM), "DB_PASSWORD={}"),
        ("api key assignment", chars(44, 30, ALNUM), "api_key={}"),
        ("api key camel", chars(45, 30, ALNUM), "apiKey: {}"),
        ("client secret", chars(46, 30, ALNUM), "client_secret={}"),
        ("auth token", chars(47, 30, ALNUM), "auth_token={}"),
        ("session id", chars(48, 30, ALNUM), "session_id={}"),
        (
            "aws secret key",
            chars(49, 40, ALNUM),
            "aws_secret_access_key={}",
        ),
        (
            "private key assignment",
            chars(50, 30, ALNUM),
            "private_key={}",
        ),
        (
            "cookie header",
            chars(51, 30, ALNUM),
            "Cookie: sid={}; theme=dark",
        ),
        (
            "set-cookie header",
            chars(52, 30, ALNUM),
            "Set-Cookie: session={}; HttpOnly",
        ),
        (
            "postgres url",
            chars(53, 16, ALNUM),
            "postgres://app:{}@db.internal:5432/shop",
        ),
        (
            "mysql url",
            chars(54, 16, ALNUM),
            "mysql://root:{}@localhost/app",
        ),
        (
            "mongodb url",
            chars(55, 16, ALNUM),
            "mongodb+srv://svc:{}@cluster0.example.net/db",
        ),
        (
            "redis url",
            chars(56, 16, ALNUM),
            "redis://default:{}@cache:6379/0",
        ),
        ("amqp url", chars(57, 16, ALNUM), "amqp://guest:{}@mq:5672/"),
        (
            "https basic url",
            chars(58, 16, ALNUM),
            "https://deploy:{}@git.example.com/repo.git",
        ),
    ] {
        shaped.push((what.to_string(), line.replace("{}", &secret), secret));
    }
    for (kind, seed) in [
        ("RSA", 59),
        ("EC", 60),
        ("OPENSSH", 61),
        ("ENCRYPTED", 62),
        ("", 63),
    ] {
        let label = if kind.is_empty() {
            "PRIVATE KEY".to_string()
        } else {
            format!("{kind} PRIVATE KEY")
        };
        let body = chars(seed, 64, ALNUM);
        add(
            &format!("{label} block"),
            body.clone(),
            format!("-----BEGIN {label}-----\n{body}\n-----END {label}-----"),
        );
    }
    out.extend(shaped);
    out
}

/// Innocent values that must pass unchanged.
fn controls() -> Vec<String> {
    vec![
        chars(100, 64, HEX),
        chars(101, 40, HEX),
        "3fa85f64-5717-4562-b3fc-2c963f66afa6".into(),
        format!(
            "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAA{}",
            chars(102, 120, ALNUM)
        ),
        "https://example.com/cart?items=3&sort=price".into(),
        "ada@example.com".into(),
        "2026-12-06T01:02:03Z".into(),
        "v1.73.1".into(),
        "/home/ada/shop/src/cart.py:42".into(),
        "max_tokens=4096".into(),
        "total=12 count=3 status=ok".into(),
        "the session ended after 2 rounds".into(),
        "git 9fceb02d0ae598e95dc970b74767f19372d61af8".into(),
        chars(103, 32, ALNUM),
    ]
}

/// The shapes of which `text` holds the secret, whole or in part: any 16
/// characters of it in a row (a marker that kept a prefix, a cut that kept a
/// tail). Windows of a PEM block's fixed `-----BEGIN ... KEY-----` lines
/// (dashes or spaces in them) are no part of its secret.
fn leaked<'a>(text: &str, corpus: &'a [(String, String, String)]) -> Vec<&'a str> {
    const WINDOW: usize = 16;
    corpus
        .iter()
        .filter(|(_, _, secret)| {
            let chars: Vec<char> = secret.chars().collect();
            text.contains(secret.as_str())
                || chars.windows(WINDOW).any(|window| {
                    !window.iter().any(|c| *c == '-' || c.is_whitespace())
                        && text.contains(&window.iter().collect::<String>())
                })
        })
        .map(|(what, _, _)| what.as_str())
        .collect()
}

fn cli(root: &std::path::Path, args: &[&str]) -> String {
    let out = sidecar(root, args, None);
    assert!(out.status.success(), "{args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn no_secret_of_the_corpus_reaches_the_model_a_screen_or_a_file_the_sidecar_writes() {
    let corpus = corpus();
    assert!(corpus.len() >= 50, "{} shapes", corpus.len());
    let workspace = Workspace::new("redaction");
    let root = &workspace.root;
    let mut server = initialized(root);
    let started = server
        .request("debug/start", json!({"problem": "the total is wrong"}))
        .unwrap();
    let log = started["logFile"].as_str().unwrap().to_string();

    // Door 1: records posted to the ingest server, each secret twice (equal
    // values must keep equal markers), and the key rule at depth.
    let url = started["ingestUrl"].as_str().unwrap().to_string();
    let records: Vec<Value> = corpus
        .iter()
        .enumerate()
        .flat_map(|(i, (_, text, _))| {
            let record = json!({"probeId": format!("web{i}"), "data": {"v": text, "again": text}});
            [record]
        })
        .chain([json!({"probeId": "keys", "data": {"db": {"Password": "plain-pass-1", "api-key": ["k-plain-2"]}}})])
        .collect();
    assert_eq!(post(&url, "", &Value::Array(records).to_string()), 204);

    // Door 2: a program's output, recorded by `run`.
    let printed = corpus
        .iter()
        .map(|(_, text, _)| text.clone())
        .chain(controls())
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(root.join("out.txt"), format!("{printed}\n")).unwrap();
    cli(root, &["run", "--", "cat", "out.txt"]);
    let sidecar_wrote = std::fs::read_to_string(&log).unwrap();
    let in_file = leaked(&sidecar_wrote, &corpus);
    assert!(
        in_file.is_empty(),
        "the run file holds what the sidecar wrote: {in_file:?}"
    );
    assert!(!sidecar_wrote.contains("plain-pass-1") && !sidecar_wrote.contains("k-plain-2"));

    // Door 3: records a source probe appends to the run itself.
    {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        for (i, (_, text, _)) in corpus.iter().enumerate() {
            let record =
                json!({"probeId": format!("src{i}"), "data": {"v": text}, "message": text});
            writeln!(file, "{record}").unwrap();
        }
    }

    // Everything the model or a person reads.
    let mut seen = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let page = server
            .request("debug/logs", json!({"limit": 1000, "cursor": cursor}))
            .unwrap();
        seen.push(page.to_string());
        match page["nextCursor"].as_str() {
            Some(next) => cursor = json!(next),
            None => break,
        }
    }
    let summary = server.request("debug/logSummary", json!({})).unwrap();
    seen.push(summary.to_string());
    let board = server.request("debug/context", json!({})).unwrap();
    seen.push(board.to_string());
    seen.push(cli(root, &["logs", "--limit", "100000"]));
    seen.push(cli(root, &["logs", "--json", "--limit", "100000"]));
    seen.push(cli(root, &["logs", "--summary"]));
    seen.push(cli(root, &["logs", "--summary", "--json"]));
    // The agent's tools, through the MCP face.
    seen.extend(mcp_tool_texts(
        root,
        &[
            ("read_logs", json!({"limit": 1000})),
            ("log_summary", json!({})),
            ("debug_status", json!({})),
        ],
    ));
    let read_logs = &seen[seen.len() - 3];
    assert!(
        read_logs.contains("[redacted:"),
        "read_logs shows no line: {read_logs}"
    );
    for text in &seen {
        let leaks = leaked(text, &corpus);
        assert!(leaks.is_empty(), "leaked {leaks:?}");
        assert!(!text.contains("plain-pass-1") && !text.contains("k-plain-2"));
    }
    let all = seen.join("\n");
    assert!(all.contains("[redacted:"), "nothing was marked");
    let board = board["content"].as_str().unwrap();
    assert!(board.contains("Secrets redacted in this run:"), "{board}");

    // Equal secrets, equal markers: each web record's two values agree;
    // different secrets, different markers.
    let mut marked = |probe: &str| {
        let page = server
            .request("debug/logs", json!({"probe": probe}))
            .unwrap();
        page["entries"][0]["entry"]["data"].clone()
    };
    let mut markers = std::collections::HashSet::new();
    for i in 0..corpus.len() {
        let data = marked(&format!("web{i}"));
        assert_eq!(data["v"], data["again"], "{data}");
        let value = data["v"].as_str().unwrap().to_string();
        assert!(value.contains("[redacted:"), "{data}");
        markers.insert(value);
    }
    let distinct: std::collections::HashSet<&str> =
        corpus.iter().map(|(_, text, _)| text.as_str()).collect();
    assert_eq!(
        markers.len(),
        distinct.len(),
        "different secrets must get different markers"
    );

    // The controls pass unchanged.
    let cli_lines = cli(root, &["logs", "--json", "--limit", "100000"]);
    let kept = controls()
        .iter()
        .filter(|control| cli_lines.contains(control.as_str()))
        .count();
    eprintln!(
        "redaction: {} secret shapes, 0 reached a reader; {} of {} innocent values changed (false positives)",
        corpus.len(),
        controls().len() - kept,
        controls().len()
    );
    assert_eq!(kept, controls().len(), "a control was redacted");
}

#[test]
fn a_workspace_setting_adds_keys_and_patterns_or_turns_redaction_off() {
    let workspace = Workspace::new("redaction-settings");
    let root = &workspace.root;
    cli(root, &["start", "the total is wrong"]);
    let settings = root.join(".debug-sidecar/redaction.json");
    std::fs::write(
        &settings,
        r#"{"keys": ["pin"], "patterns": [{"kind": "order", "regex": "ORD-[0-9]{6}"}]}"#,
    )
    .unwrap();
    std::fs::write(
        root.join("out.txt"),
        "pin: 4711x\norder ORD-123456 shipped\n",
    )
    .unwrap();
    cli(root, &["run", "--", "cat", "out.txt"]);
    let shown = cli(root, &["logs", "--json"]);
    assert!(
        !shown.contains("4711x") && !shown.contains("ORD-123456"),
        "{shown}"
    );
    assert!(shown.contains("[redacted:order#"), "{shown}");
    // Off, explicitly: what probes append raw is shown as it is.
    std::fs::write(&settings, r#"{"enabled": false}"#).unwrap();
    let log = root.join(".debug-sidecar/sessions/default/runs/active.jsonl");
    {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
        writeln!(
            file,
            "{}",
            json!({"probeId": "p1", "data": {"password": "shown-as-is"}})
        )
        .unwrap();
    }
    assert!(cli(root, &["logs", "--json"]).contains("shown-as-is"));
    // A file that does not parse keeps the built-in rules.
    std::fs::write(&settings, "{nope").unwrap();
    assert!(!cli(root, &["logs", "--json"]).contains("shown-as-is"));
}

#[test]
fn a_program_printing_a_private_key_line_by_line_is_redacted_whole() {
    let workspace = Workspace::new("redaction-pem");
    let root = &workspace.root;
    cli(root, &["start", "p"]);
    let body = chars(7, 64, ALNUM);
    std::fs::write(
        root.join("key.txt"),
        format!("-----BEGIN RSA PRIVATE KEY-----\n{body}\n{body}\n-----END RSA PRIVATE KEY-----\nafter\n"),
    )
    .unwrap();
    let out = Command::new(BIN)
        .args(["run", "--", "cat", "key.txt"])
        .current_dir(root)
        .env_remove("DEBUG_SIDECAR_DIR")
        .output()
        .unwrap();
    assert!(out.status.success());
    let log =
        std::fs::read_to_string(root.join(".debug-sidecar/sessions/default/runs/active.jsonl"))
            .unwrap();
    assert!(!log.contains(&body), "{log}");
    assert!(log.contains("after"));
}

#[test]
fn a_secret_written_a_few_bytes_at_a_time_is_still_redacted() {
    let workspace = Workspace::new("redaction-trickle");
    let root = &workspace.root;
    cli(root, &["start", "p"]);
    // Three writes, each read on its own: the key word is split across them.
    std::fs::write(
        root.join("trickle.sh"),
        "printf 'pa'; sleep 0.2; printf 'ss'; sleep 0.2; printf 'word=hunter22x\\n'\n",
    )
    .unwrap();
    let out = Command::new(BIN)
        .args(["run", "--", "sh", "trickle.sh"])
        .current_dir(root)
        .env_remove("DEBUG_SIDECAR_DIR")
        .output()
        .unwrap();
    assert!(out.status.success());
    let log =
        std::fs::read_to_string(root.join(".debug-sidecar/sessions/default/runs/active.jsonl"))
            .unwrap();
    assert!(log.contains("password="), "{log}");
    assert!(!log.contains("hunter22x"), "{log}");
}

/// A logpoint's values travel from the program to `run` through a file in
/// memory: while the program runs, no file of the hook's folder (nor any
/// other the sidecar wrote) holds the secret it logged, and the run holds
/// only its marker. Python and Node alike.
#[test]
fn logpoint_values_never_reach_a_disk() {
    let secret = format!(
        "ghp_{}",
        chars(7, 36, "abcdefghijklmnopqrstuvwxyz0123456789")
    );
    let workspace = Workspace::new("redaction-logpoints");
    let root = &workspace.root;
    // Each program logs the secret, then searches its hook's folder for it.
    let python = format!(
        "import os\ntoken = {secret:?}\nprint('set')\nhere = os.environ['PYTHONPATH'].split(os.pathsep)[0]\nfound = [n for n in os.listdir(here) if {secret:?} in open(os.path.join(here, n), errors='replace').read()]\nprint('found:', found)\n"
    );
    let node = format!(
        "const fs = require('fs');\nconst token = {secret:?};\nconsole.log('set');\nconst here = process.env.DEBUG_SIDECAR_LOGPOINTS;\nconst found = fs.readdirSync(here).filter((n) => fs.readFileSync(here + '/' + n, 'latin1').includes({secret:?}));\nconsole.log('found:', JSON.stringify(found));\n"
    );
    std::fs::write(root.join("app.py"), python).unwrap();
    std::fs::write(root.join("app.js"), node).unwrap();
    let (mut server, log) = with_logpoints(
        root,
        &[
            ("app.py", 3, json!(["token"])),
            ("app.js", 3, json!(["token"])),
        ],
    );
    let ran_python = sidecar(root, &["run", "--", "python3", "app.py"], None);
    assert_eq!(
        String::from_utf8_lossy(&ran_python.stdout),
        "set\nfound: []\n",
        "{ran_python:?}"
    );
    let node_here = Command::new("node").arg("--version").output().is_ok();
    if node_here {
        let ran_node = sidecar(root, &["run", "--", "node", "app.js"], None);
        assert_eq!(
            String::from_utf8_lossy(&ran_node.stdout),
            "set\nfound: []\n",
            "{ran_node:?}"
        );
    } else {
        eprintln!("skipped: node is not installed");
    }
    let hits = hits_of(&log);
    let places: Vec<&str> = hits.iter().map(|(at, _)| at.as_str()).collect();
    let expected: &[&str] = if node_here {
        &["app.py:3", "app.js:3"]
    } else {
        &["app.py:3"]
    };
    assert_eq!(places, expected, "{hits:?}");
    for (_, data) in &hits {
        let token = data["token"].as_str().unwrap_or_default();
        assert!(token.starts_with("[redacted:"), "{data}");
    }
    let state = std::fs::read_dir(root.join(".debug-sidecar/sessions/s1/runs")).unwrap();
    for entry in state.flatten() {
        let text = std::fs::read(entry.path()).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&text).contains(&secret),
            "{} holds the secret",
            entry.path().display()
        );
    }
    drop(server.request("debug/abort", json!({})));
}

#[test]
fn a_subagents_texts_from_its_host_are_redacted_and_bounded_in_its_record() {
    // A subagent may quote what it read: its host's texts reach every
    // editor and the workspace's state, so each corpus secret in a result,
    // an error, a question or a task is redacted, and each text is bounded.
    let corpus = corpus();
    let workspace = Workspace::new("redaction-agents");
    let root = &workspace.root;
    let mut server = initialized(root);
    for (i, (_, text, _)) in corpus.iter().enumerate() {
        let id = format!("sub{i}");
        for event in [
            json!({"id": id, "kind": "running", "description": format!("check {text}")}),
            json!({"id": id, "kind": "update", "question": format!("is {text} right?")}),
            json!({"id": id, "kind": if i % 2 == 0 { "completed" } else { "error" },
                   "result": format!("found {text}"), "error": format!("failed on {text}")}),
        ] {
            server.notify("agents/event", event).unwrap();
        }
    }
    let long = "x".repeat(100 * 1024);
    server
        .notify(
            "agents/event",
            json!({"id": "long", "kind": "completed", "type": "t".repeat(500), "result": long}),
        )
        .unwrap();
    let listed = server.request("agents/list", json!({})).unwrap();
    let shown = listed.to_string();
    let leaks = leaked(&shown, &corpus);
    assert!(leaks.is_empty(), "agents/list shows {leaks:?}");
    let state = std::fs::read_dir(root.join(".debug-sidecar/sessions"))
        .unwrap()
        .flatten()
        .map(|dir| std::fs::read_to_string(dir.path().join("activity.json")).unwrap_or_default())
        .collect::<String>();
    assert!(state.contains("sub0"), "no activity file was read");
    let stored = leaked(&state, &corpus);
    assert!(stored.is_empty(), "the activity file holds {stored:?}");
    let records = listed["agents"].as_array().unwrap();
    let long = records.iter().find(|r| r["id"] == "long").unwrap();
    let result = long["result"].as_str().unwrap();
    assert!(
        result.len() <= 8 * 1024 && result.ends_with("bytes)"),
        "{}",
        result.len()
    );
    assert!(long["type"].as_str().unwrap().len() <= 80);
    // The words around a secret stay.
    assert!(records[0]["result"].as_str().unwrap().starts_with("found "));
}
