//! Probe snippets: a snapshot of every language's block for one input whose
//! message holds what string literals and JSON treat specially, and, for
//! every language whose toolchain is on this machine, the block run for real
//! inside a small program: the log line must parse and carry exactly what was
//! asked, and a log file in a missing directory must not disturb the program.
//! A missing toolchain prints `skipped: ...` (run with `--nocapture` to see).

use debug_sidecar::core::model::{Probe, ProbeState};
use debug_sidecar::workspace::snippet::{language_for, snippet, SnippetInput};
use serde_json::{json, Value};
use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Quotes, a backslash, `$`, `%`, `#{`, a trigraph, non-ASCII, a tab and a
/// line break: every one must come back exactly.
const MESSAGE: &str = "total's \"50% off\" \\ $HOME #{x} ??/ für ✓\tand\nmore";

/// Every canonical language with the extension its test file uses.
const LANGUAGES: &[(&str, &str)] = &[
    ("javascript", "js"),
    ("typescript", "ts"),
    ("browser", "jsx"),
    ("deno", "ts"),
    ("python", "py"),
    ("go", "go"),
    ("rust", "rs"),
    ("java", "java"),
    ("kotlin", "kt"),
    ("csharp", "cs"),
    ("c", "c"),
    ("cpp", "cpp"),
    ("ruby", "rb"),
    ("php", "php"),
    ("swift", "swift"),
    ("shell", "sh"),
];

fn probe(id: &str, extension: &str) -> Probe {
    Probe {
        id: id.into(),
        file: format!("src/checkout.{extension}"),
        line: Some(42),
        round: 1,
        hypothesis_id: Some("H1".into()),
        language: None,
        state: ProbeState::Issued,
        trace: None,
        kind: Default::default(),
        logpoint: None,
    }
}

fn block(language: &str, probe: &Probe, log_file: &str, ingest_url: Option<&str>) -> String {
    block_with(
        language,
        probe,
        log_file,
        ingest_url,
        &["count", "ratio", "name"],
    )
}

fn block_with(
    language: &str,
    probe: &Probe,
    log_file: &str,
    ingest_url: Option<&str>,
    variables: &[&str],
) -> String {
    snippet(
        language,
        &SnippetInput {
            probe,
            session_id: "s-demo",
            session_tag: "s-demo",
            log_file,
            message: MESSAGE,
            variables,
            ingest_url,
            post: false,
        },
    )
    .unwrap_or_else(|e| panic!("{language}: {e}"))
}

#[test]
fn every_language_has_a_snippet() {
    for (language, extension) in LANGUAGES {
        let probe = probe("p7", extension);
        let text = block(
            language,
            &probe,
            "/home/ada/shop/.debug-sidecar/sessions/s-demo/runs/active.jsonl",
            Some("http://127.0.0.1:7242/ingest/3f9c2a"),
        );
        let comment = if matches!(*language, "python" | "ruby" | "shell") {
            "#"
        } else {
            "//"
        };
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            format!("{comment} #region debug-probe p7 s-demo"),
            "{language}"
        );
        assert_eq!(
            lines[lines.len() - 1],
            format!("{comment} #endregion debug-probe p7"),
            "{language}"
        );
        insta::assert_snapshot!(format!("snippet_{language}"), text);
    }
}

/// The blocks for a program elsewhere (a container, an emulator, a device),
/// which post to the target's listener: every language that has one.
#[test]
fn every_posting_block() {
    for (language, extension) in LANGUAGES {
        if matches!(*language, "browser" | "c" | "cpp" | "swift") {
            continue;
        }
        let probe = probe("p7", extension);
        let text = posting_block(
            language,
            &probe,
            "http://172.17.0.1:7242/ingest/3f9c2a",
            &["count", "ratio", "name"],
        );
        insta::assert_snapshot!(format!("posting_{language}"), text);
    }
}

#[test]
fn file_extensions_and_aliases_pick_languages() {
    for (language, extension) in LANGUAGES {
        // Deno's code is told by its project, not its extension.
        let by_extension = if *language == "deno" {
            "typescript"
        } else {
            language
        };
        assert_eq!(
            language_for(&format!("src/checkout.{extension}"), None),
            Ok(by_extension)
        );
        assert_eq!(language_for("x", Some(language)), Ok(*language));
    }
    // An alias works wherever a name does.
    let probe = probe("p1", "sh");
    let input = SnippetInput {
        probe: &probe,
        session_id: "s",
        session_tag: "s",
        log_file: "/tmp/x",
        message: "",
        variables: &[],
        ingest_url: None,
        post: false,
    };
    assert_eq!(snippet("Bash", &input), snippet("shell", &input));
    assert!(snippet("cobol", &input)
        .unwrap_err()
        .to_string()
        .contains("supported: javascript, typescript, browser"));
}

// ------------------------------------------------------------- running

/// A scratch directory removed on drop.
struct Scratch(PathBuf);

impl Scratch {
    fn new(name: &str) -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir = std::env::temp_dir().join(format!(
            "debug-sidecar-snippet-{name}-{}-{nanos}",
            std::process::id()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// False, after saying so, when a tool is not on this machine.
fn have(language: &str, tools: &[&str]) -> bool {
    for tool in tools {
        let found = Command::new("sh")
            .args(["-c", &format!("command -v {tool}")])
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            eprintln!("skipped: {language} snippet not executed: `{tool}` is not installed");
            return false;
        }
    }
    true
}

fn run(dir: &Path, command: &[&str]) -> Output {
    Command::new(command[0])
        .args(&command[1..])
        .current_dir(dir)
        .env("LC_ALL", "C.UTF-8")
        .output()
        .unwrap_or_else(|e| panic!("{command:?}: {e}"))
}

fn check(output: &Output, what: &str) {
    assert!(
        output.status.success(),
        "{what} failed ({}):\nstdout:\n{}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

fn indent(text: &str, by: &str) -> String {
    text.lines()
        .map(|line| {
            if line.is_empty() {
                "\n".to_string()
            } else {
                format!("{by}{line}\n")
            }
        })
        .collect()
}

fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as u64
}

/// The value every program gives `name`.
const NAME: &str = "a\"b\\c é\nx";

/// The `data` most languages log: JSON values for the program's variables.
fn typed() -> Value {
    json!({"count": 3, "ratio": 0.5, "name": NAME})
}

/// A program run for real: its source around the pasted blocks, how to build
/// and run it, and the `data` its line must hold.
struct Case {
    language: &'static str,
    extension: &'static str,
    tools: &'static [&'static str],
    file: &'static str,
    /// The program, given the blocks already indented.
    program: fn(&str) -> String,
    indent: &'static str,
    build: &'static [&'static str],
    run: &'static [&'static str],
    data: Value,
    /// An expression over `count` that must log 4 (under its own text).
    expression: &'static str,
    /// Whether the run may print to stderr (a runtime's own warnings).
    quiet: bool,
}

/// Builds the program with three blocks (one logging into a directory that
/// does not exist; one logging the variables into a directory whose name
/// needs escaping; one with no variables and no hypothesis), runs it twice,
/// and checks every line.
fn execute(case: Case) {
    if !have(case.language, case.tools) {
        return;
    }
    let scratch = Scratch::new(case.language);
    let dir = &scratch.0;
    let log_dir = dir.join("it's a $dir \"q\" #{x}");
    std::fs::create_dir_all(&log_dir).unwrap();
    let log = log_dir.join("active.jsonl");
    let log_file = log.to_str().unwrap();
    let missing = dir.join("missing").join("active.jsonl");
    let lost = probe("p8", case.extension);
    let kept = probe("p7", case.extension);
    let bare = Probe {
        hypothesis_id: None,
        ..probe("p9", case.extension)
    };
    let variables = ["count", "ratio", "name", case.expression];
    let blocks = [
        block_with(
            case.language,
            &lost,
            missing.to_str().unwrap(),
            None,
            &variables,
        ),
        block_with(case.language, &kept, log_file, None, &variables),
        block_with(case.language, &bare, log_file, None, &[]),
    ]
    .concat();
    let mut data = case.data.clone();
    let four = data["count"].as_str().map_or(json!(4), |_| json!("4"));
    data[case.expression] = four;
    let source = (case.program)(&indent(&blocks, case.indent));
    std::fs::write(dir.join(case.file), &source).unwrap();
    if !case.build.is_empty() {
        let output = run(dir, case.build);
        check(&output, &format!("{} build of\n{source}", case.language));
    }
    let before = now_ms();
    for _ in 0..2 {
        let output = run(dir, case.run);
        check(&output, &format!("{} run of\n{source}", case.language));
        let (stdout, stderr) = (
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr),
        );
        assert_eq!(stdout, "done\n", "{}", case.language);
        assert!(
            !case.quiet || stderr.is_empty(),
            "{}: {stderr}",
            case.language
        );
    }
    let after = now_ms();
    assert!(!missing.parent().unwrap().exists(), "{}", case.language);
    let text = std::fs::read_to_string(&log)
        .unwrap_or_else(|e| panic!("{}: no log ({e}) from\n{source}", case.language));
    let lines: Vec<Value> = text
        .lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{}: {e} in {line}", case.language))
        })
        .collect();
    assert_eq!(lines.len(), 4, "{}: {text}", case.language);
    for (i, line) in lines.iter().enumerate() {
        let expected = if i % 2 == 0 {
            expected_line(&kept, &data)
        } else {
            expected_line(&bare, &json!({}))
        };
        assert_line(line, &expected, before, after, case.language);
    }
}

/// An ingest server played by the test: every request's head and body,
/// answered 204, until `finish` is called.
struct Collector {
    port: u16,
    done: std::sync::Arc<std::sync::atomic::AtomicBool>,
    thread: std::thread::JoinHandle<Vec<(String, String)>>,
}

impl Collector {
    fn start() -> Collector {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let stop = done.clone();
        let thread = std::thread::spawn(move || {
            let mut requests = Vec::new();
            for stream in listener.incoming() {
                if stop.load(std::sync::atomic::Ordering::SeqCst) {
                    break;
                }
                let Ok(mut stream) = stream else { continue };
                if let Some(request) = read_request(&mut stream) {
                    requests.push(request);
                }
                let _ = stream.write_all(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n");
            }
            requests
        });
        Collector { port, done, thread }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/ingest/t0k", self.port)
    }

    /// Every request received, once the programs are done.
    fn finish(self) -> Vec<(String, String)> {
        self.done.store(true, std::sync::atomic::Ordering::SeqCst);
        let _ = std::net::TcpStream::connect(("127.0.0.1", self.port));
        self.thread.join().unwrap()
    }
}

/// One HTTP request's head and body (by its `Content-Length`).
fn read_request(stream: &mut std::net::TcpStream) -> Option<(String, String)> {
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut request = Vec::new();
    let mut buffer = [0u8; 4096];
    let (head, length) = loop {
        let read = stream.read(&mut buffer).unwrap_or(0);
        if read == 0 {
            return None;
        }
        request.extend_from_slice(&buffer[..read]);
        if let Some(end) = request.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&request[..end]).to_string();
            let length = head
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            request.drain(..end + 4);
            break (head, length);
        }
    };
    while request.len() < length {
        let read = stream.read(&mut buffer).unwrap_or(0);
        if read == 0 {
            break;
        }
        request.extend_from_slice(&buffer[..read]);
    }
    Some((head, String::from_utf8_lossy(&request).to_string()))
}

/// A port nothing listens on.
fn closed_port() -> u16 {
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    closed.local_addr().unwrap().port()
}

/// The case's program with blocks that post (for a target elsewhere): one
/// to a closed port, one with the variables, one with none; run twice, the
/// ingest server played by the test must receive the four lines, each a
/// POST of one JSON record to the session's URL.
fn execute_posting(case: Case, program: Option<fn(&str) -> String>) {
    if !have(case.language, case.tools) {
        return;
    }
    let scratch = Scratch::new(&format!("{}-post", case.language));
    let dir = &scratch.0;
    let collector = Collector::start();
    let url = collector.url();
    let closed_url = format!("http://127.0.0.1:{}/ingest/t0k", closed_port());
    let lost = probe("p8", case.extension);
    let kept = probe("p7", case.extension);
    let bare = Probe {
        hypothesis_id: None,
        ..probe("p9", case.extension)
    };
    let variables = ["count", "ratio", "name", case.expression];
    let posting = |probe: &Probe, url: &str, variables: &[&str]| {
        posting_block(case.language, probe, url, variables)
    };
    let blocks = [
        posting(&lost, &closed_url, &variables),
        posting(&kept, &url, &variables),
        posting(&bare, &url, &[]),
    ]
    .concat();
    assert!(
        !blocks.contains("/unused/log"),
        "{}: {blocks}",
        case.language
    );
    let mut data = case.data.clone();
    let four = data["count"].as_str().map_or(json!(4), |_| json!("4"));
    data[case.expression] = four;
    let source = program.unwrap_or(case.program)(&indent(&blocks, case.indent));
    std::fs::write(dir.join(case.file), &source).unwrap();
    if !case.build.is_empty() {
        let output = run(dir, case.build);
        check(&output, &format!("{} build of\n{source}", case.language));
    }
    let before = now_ms();
    for _ in 0..2 {
        let output = run(dir, case.run);
        check(&output, &format!("{} run of\n{source}", case.language));
        assert_eq!(
            String::from_utf8_lossy(&output.stdout),
            "done\n",
            "{}",
            case.language
        );
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            !case.quiet || stderr.is_empty(),
            "{}: {stderr}",
            case.language
        );
    }
    let after = now_ms();
    let requests = collector.finish();
    assert_eq!(
        requests.len(),
        4,
        "{}: {requests:?}\nfrom\n{source}",
        case.language
    );
    for (i, (head, body)) in requests.iter().enumerate() {
        assert!(
            head.starts_with("POST /ingest/t0k HTTP/1."),
            "{}: {head}",
            case.language
        );
        assert!(
            head.to_ascii_lowercase()
                .contains("content-type: application/json"),
            "{}: {head}",
            case.language
        );
        let line: Value = serde_json::from_str(body.trim_end())
            .unwrap_or_else(|e| panic!("{}: {e} in {body:?}", case.language));
        let expected = if i % 2 == 0 {
            expected_line(&kept, &data)
        } else {
            expected_line(&bare, &json!({}))
        };
        assert_line(&line, &expected, before, after, case.language);
    }
}

fn posting_block(language: &str, probe: &Probe, url: &str, variables: &[&str]) -> String {
    snippet(
        language,
        &SnippetInput {
            probe,
            session_id: "s-demo",
            session_tag: "s-demo",
            log_file: "/unused/log",
            message: MESSAGE,
            variables,
            ingest_url: Some(url),
            post: true,
        },
    )
    .unwrap_or_else(|e| panic!("{language}: {e}"))
}

/// Go's program for blocks that post: the imports they name.
fn go_posting_program(blocks: &str) -> String {
    format!(
        "package main\n\nimport (\n\t\"bytes\"\n\t\"encoding/json\"\n\t\"fmt\"\n\t\"net/http\"\n\t\"time\"\n)\n\nfunc main() {{\n\tcount := 3\n\tratio := 0.5\n\tname := \"a\\\"b\\\\c é\\nx\"\n{blocks}\tfmt.Println(\"done\")\n}}\n"
    )
}

/// Every field but the timestamp, as the probe must log it.
fn expected_line(probe: &Probe, data: &Value) -> Value {
    json!({
        "sessionId": "s-demo",
        "hypothesisId": probe.hypothesis_id,
        "probeId": probe.id,
        "location": probe.location(),
        "message": MESSAGE,
        "data": data,
    })
}

fn assert_line(line: &Value, expected: &Value, before: u64, after: u64, language: &str) {
    let mut fields = line.as_object().unwrap().clone();
    let timestamp = fields
        .remove("timestamp")
        .and_then(|t| t.as_u64())
        .unwrap_or_else(|| panic!("{language}: no numeric timestamp in {line}"));
    assert!(
        before - 1000 <= timestamp && timestamp <= after + 1000,
        "{language}: timestamp {timestamp} outside {before}..{after}"
    );
    assert_eq!(&Value::Object(fields), expected, "{language}: {line}");
}

fn shell_program(blocks: &str) -> String {
    format!("set -eu\ncount=3\nratio=0.5\nname='a\"b\\c é\nx'\n{blocks}echo done\n")
}

fn shell_case(shell: &'static str) -> Case {
    Case {
        language: "shell",
        extension: "sh",
        tools: match shell {
            "sh" => &["sh"],
            "bash" => &["bash"],
            _ => &["zsh"],
        },
        file: "main.sh",
        program: shell_program,
        indent: "",
        build: &[],
        run: match shell {
            "sh" => &["sh", "main.sh"],
            "bash" => &["bash", "main.sh"],
            _ => &["zsh", "main.sh"],
        },
        // Shell values are strings.
        data: json!({"count": "3", "ratio": "0.5", "name": NAME}),
        expression: "$((count + 1))",
        quiet: true,
    }
}

#[test]
fn shell_sh_runs() {
    execute(shell_case("sh"));
}

#[test]
fn shell_sh_posts() {
    execute_posting(shell_case("sh"), None);
}

#[test]
fn shell_bash_runs() {
    execute(shell_case("bash"));
}

#[test]
fn shell_zsh_runs() {
    execute(shell_case("zsh"));
}

fn python_case() -> Case {
    Case {
        language: "python",
        extension: "py",
        tools: &["python3"],
        file: "main.py",
        program: |blocks| {
            format!(
            "def main():\n    count = 3\n    ratio = 0.5\n    name = \"a\\\"b\\\\c é\\nx\"\n{blocks}    print(\"done\")\n\n\nmain()\n"
        )
        },
        indent: "    ",
        build: &[],
        run: &["python3", "main.py"],
        data: typed(),
        expression: "count + 1",
        quiet: true,
    }
}

#[test]
fn python_runs() {
    execute(python_case());
}

#[test]
fn python_posts() {
    execute_posting(python_case(), None);
}

fn js_program(blocks: &str) -> String {
    format!(
        "function main() {{\n  const count = 3;\n  const ratio = 0.5;\n  const name = \"a\\\"b\\\\c é\\nx\";\n{blocks}  console.log(\"done\");\n}}\nmain();\n"
    )
}

fn javascript_commonjs_case() -> Case {
    Case {
        language: "javascript",
        extension: "js",
        tools: &["node"],
        file: "main.cjs",
        program: js_program,
        indent: "  ",
        build: &[],
        run: &["node", "main.cjs"],
        data: typed(),
        expression: "count + 1",
        quiet: true,
    }
}

#[test]
fn javascript_commonjs_runs() {
    execute(javascript_commonjs_case());
}

#[test]
fn javascript_commonjs_posts() {
    execute_posting(javascript_commonjs_case(), None);
}

#[test]
fn javascript_es_module_runs() {
    execute(Case {
        language: "javascript",
        extension: "js",
        tools: &["node"],
        file: "main.mjs",
        program: js_program,
        indent: "  ",
        build: &[],
        run: &["node", "main.mjs"],
        data: typed(),
        expression: "count + 1",
        quiet: true,
    });
}

#[test]
fn typescript_runs() {
    if !have("typescript", &["node"]) {
        return;
    }
    // Node runs TypeScript itself from 22.6 on (type stripping).
    let strips = Command::new("node")
        .args(["--experimental-strip-types", "-e", "0"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !strips {
        eprintln!(
            "skipped: typescript snippet not executed: this node cannot strip types (needs 22.6+)"
        );
        return;
    }
    execute(Case {
        language: "typescript",
        extension: "ts",
        tools: &["node"],
        file: "main.ts",
        program: js_program,
        indent: "  ",
        build: &[],
        run: &["node", "--experimental-strip-types", "main.ts"],
        data: typed(),
        expression: "count + 1",
        // Node warns that type stripping is experimental.
        quiet: false,
    });
}

/// The browser block posts to a loopback server played by this test; a
/// second block posting to a closed port must not disturb the page.
#[test]
fn browser_posts_to_the_ingest_url() {
    if !have("browser", &["node"]) {
        return;
    }
    let scratch = Scratch::new("browser");
    let dir = &scratch.0;
    let collector = Collector::start();
    let closed_port = closed_port();
    let lost = probe("p8", "jsx");
    let kept = probe("p7", "jsx");
    let variables = ["count", "ratio", "name", "count + 1"];
    let closed_url = format!("http://127.0.0.1:{closed_port}/ingest/t0k");
    let url = collector.url();
    // The lost block twice: its failure is said once.
    let blocks = [
        block_with("browser", &lost, "", Some(&closed_url), &variables),
        block_with("browser", &lost, "", Some(&closed_url), &variables),
        block_with("browser", &kept, "", Some(&url), &variables),
    ]
    .concat();
    let source = js_program(&indent(&blocks, "  "));
    std::fs::write(dir.join("main.js"), &source).unwrap();
    let before = now_ms();
    let output = run(dir, &["node", "main.js"]);
    let after = now_ms();
    let requests = collector.finish();
    check(&output, &format!("browser run of\n{source}"));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "done\n");
    // The post that failed says so, once, in the console (issue 35: a page's
    // evidence is not lost silently); the one that arrived says nothing.
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.starts_with("debug-sidecar: probe p8 could not post its line (is the ingest origin in the page's Content Security Policy connect-src?)"),
        "{stderr}"
    );
    assert_eq!(stderr.matches("debug-sidecar").count(), 1, "{stderr}");
    assert!(!stderr.contains("p7"), "{stderr}");
    assert_eq!(requests.len(), 1, "{requests:?} from\n{source}");
    let (head, body) = &requests[0];
    assert!(head.starts_with("POST /ingest/t0k HTTP/1.1"), "{head}");
    assert!(
        head.to_ascii_lowercase()
            .contains("content-type: application/json"),
        "{head}"
    );
    let line: Value = serde_json::from_str(body).unwrap();
    let mut data = typed();
    data["count + 1"] = json!(4);
    assert_line(
        &line,
        &expected_line(&kept, &data),
        before,
        after,
        "browser",
    );
}

fn go_case() -> Case {
    Case {
        language: "go",
        extension: "go",
        tools: &["go"],
        file: "main.go",
        program: |blocks| {
            format!(
            "package main\n\nimport (\n\t\"encoding/json\"\n\t\"fmt\"\n\t\"os\"\n\t\"time\"\n)\n\nfunc main() {{\n\tcount := 3\n\tratio := 0.5\n\tname := \"a\\\"b\\\\c é\\nx\"\n{blocks}\tfmt.Println(\"done\")\n}}\n"
        )
        },
        indent: "\t",
        build: &["go", "build", "-o", "prog", "main.go"],
        run: &["./prog"],
        data: typed(),
        expression: "count + 1",
        quiet: true,
    }
}

#[test]
fn go_runs() {
    execute(go_case());
}

#[test]
fn go_posts() {
    execute_posting(go_case(), Some(go_posting_program));
}

fn rust_case() -> Case {
    Case {
        language: "rust",
        extension: "rs",
        tools: &["rustc"],
        file: "main.rs",
        program: |blocks| {
            format!(
            "fn main() {{\n    let count = 3;\n    let ratio = 0.5;\n    let name = \"a\\\"b\\\\c é\\nx\";\n{blocks}    println!(\"done\");\n}}\n"
        )
        },
        indent: "    ",
        build: &[
            "rustc",
            "--edition",
            "2021",
            "-D",
            "warnings",
            "-o",
            "prog",
            "main.rs",
        ],
        run: &["./prog"],
        // Rust values are their `{:?}` text.
        data: json!({"count": "3", "ratio": "0.5", "name": format!("{NAME:?}")}),
        expression: "count + 1",
        quiet: true,
    }
}

#[test]
fn rust_runs() {
    execute(rust_case());
}

#[test]
fn rust_posts() {
    execute_posting(rust_case(), None);
}

fn java_case() -> Case {
    Case {
        language: "java",
        extension: "java",
        tools: &["javac", "java"],
        file: "Main.java",
        program: |blocks| {
            format!(
            "public class Main {{\n    public static void main(String[] args) {{\n        int count = 3;\n        double ratio = 0.5;\n        String name = \"a\\\"b\\\\c é\\nx\";\n{blocks}        System.out.println(\"done\");\n    }}\n}}\n"
        )
        },
        indent: "        ",
        // Issue 35: every lint javac has, as errors.
        build: &["javac", "-Xlint:all", "-Werror", "Main.java"],
        run: &["java", "Main"],
        data: typed(),
        expression: "count + 1",
        quiet: true,
    }
}

#[test]
fn java_runs() {
    execute(java_case());
}

#[test]
fn java_posts() {
    execute_posting(java_case(), None);
}

fn kotlin_case() -> Case {
    Case {
        language: "kotlin",
        extension: "kt",
        tools: &["kotlinc", "java"],
        file: "main.kt",
        program: |blocks| {
            format!(
            "fun main() {{\n    val count = 3\n    val ratio = 0.5\n    val name = \"a\\\"b\\\\c é\\nx\"\n{blocks}    println(\"done\")\n}}\n"
        )
        },
        indent: "    ",
        build: &[
            "kotlinc",
            "-Werror",
            "main.kt",
            "-include-runtime",
            "-d",
            "main.jar",
        ],
        run: &["java", "-jar", "main.jar"],
        data: typed(),
        expression: "count + 1",
        quiet: true,
    }
}

#[test]
fn kotlin_runs() {
    execute(kotlin_case());
}

#[test]
fn kotlin_posts() {
    execute_posting(kotlin_case(), None);
}

fn csharp_case() -> Case {
    Case {
        language: "csharp",
        extension: "cs",
        tools: &["mcs", "mono"],
        file: "Program.cs",
        program: |blocks| {
            format!(
            "class Program\n{{\n    static void Main()\n    {{\n        int count = 3;\n        double ratio = 0.5;\n        string name = \"a\\\"b\\\\c é\\nx\";\n{blocks}        System.Console.WriteLine(\"done\");\n    }}\n}}\n"
        )
        },
        indent: "        ",
        build: &[
            "mcs",
            "-warn:4",
            "-warnaserror",
            "-out:prog.exe",
            "Program.cs",
        ],
        run: &["mono", "prog.exe"],
        data: typed(),
        expression: "count + 1",
        quiet: true,
    }
}

#[test]
fn csharp_runs() {
    execute(csharp_case());
}

#[test]
fn csharp_posts() {
    execute_posting(csharp_case(), None);
}

#[test]
fn c_runs() {
    execute(Case {
        language: "c",
        extension: "c",
        tools: &["gcc"],
        file: "main.c",
        program: |blocks| {
            format!(
                "#include <stdio.h>\n#include <time.h>\n\nint main(void) {{\n    int count = 3;\n    double ratio = 0.5;\n    char name[] = \"a\\\"b\\\\c é\\nx\";\n{blocks}    puts(\"done\");\n    return 0;\n}}\n"
            )
        },
        indent: "    ",
        build: &[
            "gcc",
            "-std=c11",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Wpedantic",
            "-Werror",
            "-o",
            "prog",
            "main.c",
        ],
        run: &["./prog"],
        data: typed(),
        expression: "count + 1",
        quiet: true,
    });
}

#[test]
fn cpp_runs() {
    execute(Case {
        language: "cpp",
        extension: "cpp",
        tools: &["g++"],
        file: "main.cpp",
        program: |blocks| {
            format!(
                "#include <chrono>\n#include <cstdio>\n#include <functional>\n#include <string>\n\nint main() {{\n    int count = 3;\n    double ratio = 0.5;\n    std::string name = \"a\\\"b\\\\c é\\nx\";\n{blocks}    std::puts(\"done\");\n    return 0;\n}}\n"
            )
        },
        indent: "    ",
        build: &[
            "g++",
            "-std=c++17",
            "-O2",
            "-Wall",
            "-Wextra",
            "-Wpedantic",
            "-Werror",
            "-o",
            "prog",
            "main.cpp",
        ],
        run: &["./prog"],
        data: typed(),
        expression: "count + 1",
        quiet: true,
    });
}

fn ruby_case() -> Case {
    Case {
        language: "ruby",
        extension: "rb",
        tools: &["ruby"],
        file: "main.rb",
        program: |blocks| {
            format!(
            "def main\n  count = 3\n  ratio = 0.5\n  name = \"a\\\"b\\\\c é\\nx\"\n{blocks}  puts \"done\"\nend\n\nmain\n"
        )
        },
        indent: "  ",
        build: &[],
        run: &["ruby", "-w", "main.rb"],
        data: typed(),
        expression: "count + 1",
        quiet: true,
    }
}

#[test]
fn ruby_runs() {
    execute(ruby_case());
}

#[test]
fn ruby_posts() {
    execute_posting(ruby_case(), None);
}

fn php_case() -> Case {
    Case {
        language: "php",
        extension: "php",
        tools: &["php"],
        file: "main.php",
        program: |blocks| {
            format!(
            "<?php\nfunction main() {{\n    $count = 3;\n    $ratio = 0.5;\n    $name = \"a\\\"b\\\\c é\\nx\";\n{blocks}    echo \"done\\n\";\n}}\nmain();\n"
        )
        },
        indent: "    ",
        build: &[],
        run: &[
            "php",
            "-d",
            "display_errors=stderr",
            "-d",
            "error_reporting=-1",
            "main.php",
        ],
        data: typed(),
        expression: "$count + 1",
        quiet: true,
    }
}

#[test]
fn php_runs() {
    execute(php_case());
}

#[test]
fn php_posts() {
    execute_posting(php_case(), None);
}

#[test]
fn swift_runs() {
    execute(Case {
        language: "swift",
        extension: "swift",
        tools: &["swiftc"],
        file: "main.swift",
        program: |blocks| {
            format!(
                "import Foundation\n\nlet count = 3\nlet ratio = 0.5\nlet name = \"a\\\"b\\\\c é\\nx\"\n{blocks}print(\"done\")\n"
            )
        },
        indent: "",
        build: &["swiftc", "-o", "prog", "main.swift"],
        run: &["./prog"],
        data: typed(),
        expression: "count + 1",
        quiet: true,
    });
}

/// Each line of `log` parsed: every one must be valid JSON.
fn json_lines(log: &Path, language: &str, source: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(log)
        .unwrap_or_else(|e| panic!("{language}: no log ({e}) from\n{source}"));
    text.lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{language}: {e} in {line:?} from\n{source}"))
        })
        .collect()
}

#[test]
fn python_writes_nan_and_infinities_as_valid_json() {
    if !have("python", &["python3"]) {
        return;
    }
    let scratch = Scratch::new("python-nan");
    let log = scratch.0.join("active.jsonl");
    let variables = ["nan", "inf", "neg", "s", "nested"];
    let block = block_with(
        "python",
        &probe("p1", "py"),
        log.to_str().unwrap(),
        None,
        &variables,
    );
    let source = format!(
        "def main():\n    nan = float('nan')\n    inf = float('inf')\n    neg = -inf\n    s = 'NaN \"Infinity\" -Infinity'\n    nested = {{'x': [nan, 1.5]}}\n{}    print(\"done\")\n\n\nmain()\n",
        indent(&block, "    ")
    );
    std::fs::write(scratch.0.join("main.py"), &source).unwrap();
    check(&run(&scratch.0, &["python3", "main.py"]), "python run");
    let lines = json_lines(&log, "python", &source);
    assert_eq!(lines.len(), 1);
    assert_eq!(
        lines[0]["data"],
        json!({"nan": "NaN", "inf": "Infinity", "neg": "-Infinity",
               "s": "NaN \"Infinity\" -Infinity", "nested": {"x": ["NaN", 1.5]}})
    );
}

#[test]
fn cpp_leaves_one_valid_line_when_a_value_throws() {
    if !have("cpp", &["g++"]) {
        return;
    }
    let scratch = Scratch::new("cpp-throw");
    let log = scratch.0.join("active.jsonl");
    let throwing = "(throw_if(count), count)";
    let cases: [&[&str]; 3] = [
        &[throwing, "count"],
        &["count", throwing],
        &["count", "name", throwing],
    ];
    let blocks: String = cases
        .iter()
        .map(|variables| {
            block_with(
                "cpp",
                &probe("p1", "cpp"),
                log.to_str().unwrap(),
                None,
                variables,
            )
        })
        .collect();
    let source = format!(
        "#include <chrono>\n#include <cstdio>\n#include <functional>\n#include <stdexcept>\n#include <string>\n\nstatic int throw_if(int n) {{ if (n > 0) throw std::runtime_error(\"no\"); return n; }}\n\nint main() {{\n    int count = 3;\n    std::string name = \"n\";\n{}    std::puts(\"done\");\n    return 0;\n}}\n",
        indent(&blocks, "    ")
    );
    std::fs::write(scratch.0.join("main.cpp"), &source).unwrap();
    check(
        &run(
            &scratch.0,
            &[
                "g++",
                "-std=c++17",
                "-Wall",
                "-Wextra",
                "-Werror",
                "-o",
                "prog",
                "main.cpp",
            ],
        ),
        &format!("cpp build of\n{source}"),
    );
    check(&run(&scratch.0, &["./prog"]), "cpp run");
    let data: Vec<Value> = json_lines(&log, "cpp", &source)
        .into_iter()
        .map(|line| line["data"].clone())
        .collect();
    assert_eq!(
        data,
        [
            json!({"(a value threw)": true}),
            json!({"count": 3, "(a value threw)": true}),
            json!({"count": 3, "name": "n", "(a value threw)": true}),
        ]
    );
}

/// Issue 35: a Rust block passes the project's own strict setup with the
/// block in place: `#![deny(unused_qualifications)]` with `std::io::Write`
/// imported, clippy's pedantic set as errors, and `cargo fmt --check`; the
/// block that writes still writes its line.
#[test]
fn rust_blocks_pass_clippy_pedantic_the_qualification_lint_and_rustfmt() {
    if !have("rust", &["cargo", "cargo-clippy", "rustfmt"]) {
        return;
    }
    let dir = std::env::temp_dir().join(format!("ds-snippet-strict-rust-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let log = dir.join("log.jsonl");
    let probe = probe("p7", "rs");
    let written = block(
        "rust",
        &probe,
        log.to_str().unwrap(),
        Some("http://127.0.0.1:9/ingest/t"),
    );
    let posted = posting_block("rust", &probe, "http://127.0.0.1:9/ingest/t", &["count"]);
    let blocks = format!("{}{}", indent(&written, "    "), indent(&posted, "    "));
    std::fs::write(
        dir.join("Cargo.toml"),
        "[package]\nname = \"strict\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    // Formatted as rustfmt formats it, so only the blocks could fail it.
    let main = format!(
        "#![deny(unused_qualifications)]\nuse std::io::Write;\n\nfn main() {{\n    let count = 3;\n    let ratio = 0.5;\n    let name = \"a\\\"b\\\\c é\\nx\";\n{blocks}    std::io::stdout().flush().ok();\n    println!(\"done {{count}} {{ratio}} {{name}}\");\n}}\n"
    );
    std::fs::write(dir.join("src/main.rs"), main).unwrap();
    let cargo = |args: &[&str]| {
        Command::new("cargo")
            .args(args)
            .current_dir(&dir)
            .env("CARGO_TARGET_DIR", dir.join("target"))
            .env_remove("RUSTFLAGS")
            .output()
            .unwrap()
    };
    check(
        &cargo(&[
            "clippy",
            "--quiet",
            "--",
            "-D",
            "warnings",
            "-W",
            "clippy::pedantic",
        ]),
        "cargo clippy (pedantic, -D warnings)",
    );
    check(&cargo(&["fmt", "--check"]), "cargo fmt --check");
    let ran = cargo(&["run", "--quiet"]);
    check(&ran, "cargo run");
    let line: Value = serde_json::from_str(std::fs::read_to_string(&log).unwrap().trim()).unwrap();
    assert_eq!(line["probeId"], "p7");
    assert_eq!(line["data"]["count"], "3");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Issue 35: C and C++ blocks build under strict warning sets as errors
/// (`-Wformat=2 -Wdouble-promotion -Wdeclaration-after-statement
/// -Wsign-conversion -Wfloat-equal -Wshadow -Wconversion -Werror`), with a
/// `float` value for the promotion; their diagnostic pragmas cover the
/// block alone.
fn strict_c_case(build: &'static [&'static str]) -> Case {
    let tools: &'static [&'static str] = match build[0] {
        "gcc" => &["gcc"],
        "clang" => &["clang"],
        _ => &["tcc"],
    };
    Case {
        language: "c",
        extension: "c",
        tools,
        file: "main.c",
        program: |blocks| {
            format!(
                "#include <stdio.h>\n#include <time.h>\n\nint main(void) {{\n    int count = 3;\n    float ratio = 0.5f;\n    char name[] = \"a\\\"b\\\\c é\\nx\";\n{blocks}    puts(\"done\");\n    return 0;\n}}\n"
            )
        },
        indent: "    ",
        build,
        run: &["./prog"],
        data: typed(),
        expression: "count + 1",
        quiet: true,
    }
}

/// The warnings both strict C and C++ builds turn on (as errors).
const STRICT_WARNINGS: [&str; 9] = [
    "-Wall",
    "-Wextra",
    "-Wpedantic",
    "-Wformat=2",
    "-Wdouble-promotion",
    "-Wsign-conversion",
    "-Wfloat-equal",
    "-Wshadow",
    "-Wconversion",
];

/// `compiler`, then `flags`, then the strict warnings and `extra`, as
/// errors, building `source` into `prog`: a command line a `Case` keeps.
fn strict_build(
    compiler: &'static str,
    flags: &[&'static str],
    extra: &[&'static str],
    source: &'static str,
) -> &'static [&'static str] {
    let mut argv = vec![compiler];
    argv.extend_from_slice(flags);
    argv.extend_from_slice(&STRICT_WARNINGS);
    argv.extend_from_slice(extra);
    argv.extend_from_slice(&["-Werror", "-o", "prog", source]);
    Vec::leak(argv)
}

/// C99 to C17, GNU's and ISO's, by GCC and Clang (their type test), and by
/// TinyCC, which is not GNU C and so takes the block's `_Generic` path.
#[test]
fn c_runs_under_strict_warnings_as_errors() {
    let c_only = ["-Wdeclaration-after-statement"];
    for (compiler, standard) in [
        ("gcc", "-std=c99"),
        ("gcc", "-std=c11"),
        ("gcc", "-std=c17"),
        ("gcc", "-std=gnu99"),
        ("gcc", "-std=gnu17"),
        ("clang", "-std=c99"),
        ("clang", "-std=c17"),
    ] {
        execute(strict_c_case(strict_build(
            compiler,
            &[standard],
            &c_only,
            "main.c",
        )));
    }
    for standard in [&[][..], &["-std=c11"][..]] {
        let mut argv = vec!["tcc"];
        argv.extend_from_slice(standard);
        argv.extend_from_slice(&["-Wall", "-Werror", "-o", "prog", "main.c"]);
        execute(strict_c_case(Vec::leak(argv)));
    }
}

/// C++: the same strict set and `-Wold-style-cast`, under C++14, 17 and
/// 20, with exceptions and without (`-fno-exceptions`: the block has no
/// `try` there), by GCC and by Clang.
#[test]
fn cpp_runs_under_strict_warnings_as_errors() {
    for (compiler, flags) in [
        ("g++", &["-std=c++14"][..]),
        ("g++", &["-std=c++17"]),
        ("g++", &["-std=c++20"]),
        ("g++", &["-std=c++14", "-fno-exceptions"]),
        ("g++", &["-std=c++20", "-fno-exceptions"]),
        ("clang++", &["-std=c++14"]),
        ("clang++", &["-std=c++17", "-fno-exceptions"]),
    ] {
        let tools: &'static [&'static str] = if compiler == "g++" {
            &["g++"]
        } else {
            &["clang++"]
        };
        execute(Case {
            language: "cpp",
            extension: "cpp",
            tools,
            file: "main.cpp",
            program: |blocks| {
                format!(
                    "#include <chrono>\n#include <cstdio>\n#include <functional>\n#include <string>\n\nint main() {{\n    int count = 3;\n    float ratio = 0.5f;\n    std::string name = \"a\\\"b\\\\c é\\nx\";\n{blocks}    std::puts(\"done\");\n    return 0;\n}}\n"
                )
            },
            indent: "    ",
            build: strict_build(compiler, flags, &["-Wold-style-cast"], "main.cpp"),
            run: &["./prog"],
            data: typed(),
            expression: "count + 1",
            quiet: true,
        });
    }
}
