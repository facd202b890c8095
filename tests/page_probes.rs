//! Issue 35: the block page code gets, run in a real page. A `.ts` file
//! that uses `document` gets the posting block from a live session's
//! `debug/probeSnippet`; esbuild bundles it into a page served on
//! 127.0.0.1, and Debian's Chromium (headless, driven by playwright-core)
//! loads it. Without a Content Security Policy the line reaches the
//! session's run through the ingest server; with one whose `connect-src`
//! leaves the ingest origin out, the browser blocks the post, the note said
//! so beforehand, and the block says so once in the console however often
//! it runs. The tools are pinned and installed by `scripts/test`
//! (`DEBUG_SIDECAR_LINT_JS`; Chromium through `scripts/snippet-toolchains`).

mod support;

use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use support::{current_log, has_command, initialized, installed_tool, records, Workspace};

/// Serves the folder on 127.0.0.1, opens index.html in Chromium, waits for
/// the page's title to say it ran and for its posts to settle, and prints
/// the console's messages as JSON.
const DRIVER: &str = r#"
const http = require("http");
const fs = require("fs");
const path = require("path");
const { chromium } = require(process.argv[2]);
const dir = process.argv[3];
const server = http.createServer((req, res) => {
  const file = path.join(dir, req.url === "/" ? "index.html" : req.url.slice(1));
  fs.readFile(file, (err, body) => {
    if (err) { res.writeHead(404); res.end(); return; }
    res.writeHead(200, { "Content-Type": file.endsWith(".js") ? "text/javascript" : "text/html" });
    res.end(body);
  });
});
server.listen(0, "127.0.0.1", async () => {
  const browser = await chromium.launch({ executablePath: process.argv[4], args: ["--no-sandbox"] });
  try {
    const page = await browser.newPage();
    const messages = [];
    page.on("console", (m) => messages.push(m.type() + ": " + m.text()));
    await page.goto("http://127.0.0.1:" + server.address().port + "/");
    await page.waitForFunction(() => document.title === "ran", null, { timeout: 20000 });
    await page.waitForTimeout(1500);
    console.log(JSON.stringify(messages));
  } finally {
    await browser.close();
    server.close();
  }
});
"#;

fn chromium() -> Option<PathBuf> {
    has_command("chromium").then(|| PathBuf::from("/usr/bin/chromium"))
}

/// The page's code: the block runs three times.
fn page_source(block: &str) -> String {
    format!(
        "export function total(prices: number[]): number {{\n  const count = prices.length;\n  const name = document.title;\n{block}  return count + name.length;\n}}\n\ndocument.title = \"cart\";\nfor (let i = 0; i < 3; i++) total([1, 2, 3]);\ndocument.title = \"ran\";\n"
    )
}

/// Bundles `web/src/app.ts` into `web/bundle.js`, writes `web/index.html`
/// (with `csp` as its policy when given), runs the page, and returns the
/// console's messages.
fn run_page(modules: &Path, chromium: &Path, root: &Path, csp: Option<&str>) -> Vec<String> {
    let web = root.join("web");
    let out = Command::new(modules.join(".bin/esbuild"))
        .args([
            "src/app.ts",
            "--bundle",
            "--format=iife",
            "--outfile=bundle.js",
        ])
        .current_dir(&web)
        .output()
        .unwrap();
    assert!(out.status.success(), "esbuild: {out:?}");
    let meta = csp.map_or(String::new(), |policy| {
        format!("<meta http-equiv=\"Content-Security-Policy\" content=\"{policy}\">")
    });
    std::fs::write(
        web.join("index.html"),
        format!("<!doctype html><html><head>{meta}<title>-</title></head><body><script src=\"bundle.js\"></script></body></html>\n"),
    )
    .unwrap();
    let driver = root.join("drive.cjs");
    std::fs::write(&driver, DRIVER).unwrap();
    let out = support::output_within_seconds(
        Command::new("node")
            .arg(&driver)
            .arg(modules.join("playwright-core"))
            .arg(&web)
            .arg(chromium)
            .current_dir(root),
        60,
    );
    assert!(out.status.success(), "the page did not run: {out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
fn a_page_block_posts_its_line_and_says_once_when_a_csp_blocks_it() {
    let (Some(modules), Some(chromium)) = (
        installed_tool("DEBUG_SIDECAR_LINT_JS").map(PathBuf::from),
        chromium(),
    ) else {
        return;
    };
    let workspace = Workspace::new("page-probe");
    let root = &workspace.root;
    std::fs::create_dir_all(root.join("web/src")).unwrap();
    std::fs::write(root.join("web/src/app.ts"), page_source("")).unwrap();
    let mut server = initialized(root);
    server
        .request("debug/start", json!({"problem": "the cart's total"}))
        .unwrap();
    let placed = server
        .request(
            "debug/probeSnippet",
            json!({"file": "web/src/app.ts", "hypothesisId": "H1",
                   "variables": ["count", "name"]}),
        )
        .unwrap();
    assert_eq!(placed["language"], "browser", "{placed}");
    let block: String = placed["snippet"]
        .as_str()
        .unwrap()
        .lines()
        .map(|line| format!("  {line}\n"))
        .collect();
    std::fs::write(root.join("web/src/app.ts"), page_source(&block)).unwrap();
    let log = current_log(&mut server);

    // No policy: every run of the block reaches the session's run.
    let console = run_page(&modules, &chromium, root, None);
    assert!(
        !console.iter().any(|m| m.contains("debug-sidecar")),
        "{console:?}"
    );
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let lines = loop {
        let lines: Vec<Value> = records(&log)
            .into_iter()
            .filter(|r| r["probeId"] == "p1")
            .collect();
        if lines.len() >= 3 || std::time::Instant::now() > deadline {
            break lines;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    assert_eq!(lines.len(), 3, "{lines:?}");
    assert_eq!(lines[0]["data"], json!({"count": 3, "name": "cart"}));
    assert!(lines[0]["location"]
        .as_str()
        .unwrap()
        .starts_with("web/src/app.ts"));

    // A policy without the ingest origin: the browser blocks each post and
    // the block says so once; the run gains nothing.
    std::fs::write(
        root.join("web/index.html"),
        "<meta http-equiv=\"Content-Security-Policy\" content=\"connect-src 'self'\">\n",
    )
    .unwrap();
    let replaced = server
        .request(
            "debug/probeSnippet",
            json!({"file": "web/src/app.ts", "variables": ["count"]}),
        )
        .unwrap();
    let note = replaced["note"].as_str().unwrap();
    assert!(
        note.contains("web/index.html sets a Content Security Policy: its connect-src must allow http://127.0.0.1:"),
        "{note}"
    );
    let console = run_page(&modules, &chromium, root, Some("connect-src 'self'"));
    let said: Vec<&String> = console
        .iter()
        .filter(|m| m.contains("debug-sidecar: probe p1 could not post its line"))
        .collect();
    assert_eq!(said.len(), 1, "{console:?}");
    assert!(said[0].starts_with("warning: "), "{said:?}");
    let after = records(&log)
        .into_iter()
        .filter(|r| r["probeId"] == "p1")
        .count();
    assert_eq!(after, 3, "a blocked post reached the run");
}
