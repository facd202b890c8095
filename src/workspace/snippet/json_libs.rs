//! Languages with a JSON library at hand: Python, Ruby, PHP, JavaScript and
//! TypeScript (Node and the browser), Go, Swift.

use super::text::*;
use super::SnippetInput;

/// Python's fix for what `json.dumps` writes that is not JSON: the `NaN`
/// and infinities it writes bare are quoted (outside its strings nothing
/// else in its output holds those letters). Followed by the text to fix.
pub(super) const PYTHON_JSON_FIX: &str = r#"__import__("re").sub(r'("(?:[^"\\]|\\.)*")|(-?Infinity|NaN)', lambda _dbg_m: _dbg_m[1] or '"' + _dbg_m[2] + '"', "#;

/// Python 3.7+: `json`, `re` and `time` imported in place; anything `json`
/// cannot write goes in as its `repr`, and the `NaN` and infinities it
/// writes bare (not JSON) are quoted: outside its strings nothing else in
/// its output holds those letters. A value that raises (a name not in
/// scope) makes the line a `probeError` instead of `data`: the hit table's
/// `probeFailed`. Clean under ruff's default set and `ALL` (but for line
/// length), pylint, mypy `--strict` and pyright strict with no `# noqa` (ruff
/// reports a code its set does not enable as an unused one): the handler
/// that keeps the error re-raises into a `suppress`, so it is not a blind
/// catch, and the file is opened through `io`, in an `async def` too (the
/// append is one short write). pyright strict is told that the lambda's
/// types are unknown (the module comes from `__import__`). ruff format and
/// black keep it as it is.
pub(super) fn python(input: &SnippetInput) -> String {
    let template = [
        PYTHON_GUARDS.0,
        r#"with __import__("contextlib").suppress(Exception), __import__("io").open(@@LOG@@, "a", encoding="utf-8") as _dbg_log:
"#,
        PYTHON_RECORD,
        r#"    _dbg_log.write(@@FIX@@__import__("json").dumps(_dbg_line, default=repr)) + "\n")  # pyright: ignore[reportUnknownLambdaType]
"#,
        PYTHON_GUARDS.1,
    ]
    .concat();
    fill(
        &template,
        &[
            ("LOG", &lit(Lit::Python, input.log_file)),
            ("FIX", PYTHON_JSON_FIX),
            ("HEADER", &python_header(input)),
            ("DATA", &python_data(input)),
        ],
    )
}

/// What keeps Python's formatters (ruff format, black) and pylint off a
/// block: the lines before it and after it.
pub(super) const PYTHON_GUARDS: (&str, &str) = (
    "# fmt: off\n# pylint: disable=broad-exception-caught,line-too-long,invalid-name\n",
    "# pylint: enable=broad-exception-caught,line-too-long,invalid-name\n# fmt: on\n",
);

/// The record both Python blocks build, inside their `with suppress`: its
/// `data`, or the `probeError` of the value that raised (re-raised into a
/// `suppress` of its own, so no linter reads the handler as a blind catch).
pub(super) const PYTHON_RECORD: &str = r#"    _dbg_line = {@@HEADER@@, "timestamp": __import__("time").time_ns() // 1000000}
    with __import__("contextlib").suppress(Exception):
        try:
            _dbg_line["data"] = {@@DATA@@}
        except Exception as _dbg_e:
            _dbg_line["probeError"] = f"{type(_dbg_e).__name__}: {_dbg_e}"[:300]
            raise
"#;

/// The record's header entries, as Python literals.
pub(super) fn python_header(input: &SnippetInput) -> String {
    let key = |n: &str| lit(Lit::Python, n);
    header_entries(input, key, ": ", |v| lit(Lit::Python, v), "None")
}

/// The record's `data` entries: each name's value under its literal.
pub(super) fn python_data(input: &SnippetInput) -> String {
    data_entries(input, |n| lit(Lit::Python, n), ": ", str::to_string)
}

/// Ruby: `json` required in place; `rescue` covers a missing gem too.
/// `rubocop:disable all` / `enable all` keep RuboCop's cops and its
/// autocorrection off the block alone.
pub(super) fn ruby(input: &SnippetInput) -> String {
    let key = |n: &str| lit(Lit::Ruby, n);
    fill(
        r#"# rubocop:disable all
begin
  require "json"
  File.open(@@LOG@@, "a") { |dbg_log| dbg_log.puts(JSON.generate({
    @@HEADER@@,
    "data" => {@@DATA@@},
    "timestamp" => Process.clock_gettime(Process::CLOCK_REALTIME, :millisecond),
  })) }
rescue StandardError, ScriptError
end
# rubocop:enable all
"#,
        &[
            ("LOG", &lit(Lit::Ruby, input.log_file)),
            (
                "HEADER",
                &header_entries(input, key, " => ", |v| lit(Lit::Ruby, v), "nil"),
            ),
            ("DATA", &data_entries(input, key, " => ", str::to_string)),
        ],
    )
}

/// PHP's `data` entries: bare names get their `$`.
pub(super) fn php_data(input: &SnippetInput) -> String {
    data_entries(
        input,
        |n| lit(Lit::Php, n),
        " => ",
        |n| {
            if is_identifier(n) {
                format!("${n}")
            } else {
                n.to_string()
            }
        },
    )
}

/// PHP 7+: `@` silences warnings (an undefined variable, a missing
/// directory), `(object)` keeps an empty `data` an object, partial output
/// writes null for what JSON cannot hold. Bare names get their `$`.
/// `phpcs:disable` / `enable` keep PHP_CodeSniffer (its line length) off
/// the block alone.
pub(super) fn php(input: &SnippetInput) -> String {
    let key = |n: &str| lit(Lit::Php, n);
    let data = php_data(input);
    fill(
        r#"// phpcs:disable
try {
    @file_put_contents(@@LOG@@, json_encode([
        @@HEADER@@,
        "data" => (object) [@@DATA@@],
        "timestamp" => (int) floor(microtime(true) * 1000),
    ], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PARTIAL_OUTPUT_ON_ERROR) . "\n", FILE_APPEND | LOCK_EX);
} catch (\Throwable $dbgError) {
}
// phpcs:enable
"#,
        &[
            ("LOG", &lit(Lit::Php, input.log_file)),
            (
                "HEADER",
                &header_entries(input, key, " => ", |v| lit(Lit::Php, v), "null"),
            ),
            ("DATA", &data),
        ],
    )
}

/// The header and `data` of a JavaScript object literal, shared by Node and
/// browser.
pub(super) fn js_fields(input: &SnippetInput) -> (String, String) {
    let header = header_entries(input, str::to_string, ": ", |v| lit(Lit::Js, v), "null");
    let data = data_entries(input, |n| lit(Lit::Js, n), ": ", str::to_string);
    let data = if data.is_empty() {
        "{}".to_string()
    } else {
        format!("{{ {data} }}")
    };
    (header, data)
}

/// Node (CommonJS or ES module): `fs` from `process.getBuiltinModule` (Node
/// 20.16+), reached through `globalThis`, since an ES module cannot import
/// inside a block and a linter or type checker may know no `require` and no
/// `process` (TypeScript without Node's types, ESLint without Node's
/// globals). A value that throws (a name not in scope) or that JSON cannot
/// write (a BigInt, a cycle) makes the line a `probeError`. Kept as it is by
/// prettier; nothing in it trips ESLint's recommended set or
/// typescript-eslint's strict one (`tests/strict_probes.rs`).
pub(super) fn node(input: &SnippetInput, typescript: bool) -> String {
    let global = if typescript {
        r#"(globalThis as unknown as { process: { getBuiltinModule(id: "fs"): { appendFileSync(path: string, text: string): void } } })"#
    } else {
        "globalThis"
    };
    let (header, data) = js_fields(input);
    fill(
        r#"// prettier-ignore
try {
  const dbgLine = { @@HEADER@@, timestamp: Date.now() };
  let dbgText = "";
  try { dbgText = JSON.stringify({ ...dbgLine, data: @@DATA@@ }); } catch (dbgE) { dbgText = JSON.stringify({ ...dbgLine, probeError: String(dbgE).slice(0, 300) }); }
  @@GLOBAL@@.process.getBuiltinModule("fs").appendFileSync(@@LOG@@, dbgText + "\n");
} catch { /* a probe never stops the program */ }
"#,
        &[
            ("GLOBAL", global),
            ("LOG", &lit(Lit::Js, input.log_file)),
            ("HEADER", &header),
            ("DATA", &data),
        ],
    )
}

/// Deno (JavaScript or TypeScript alike: nothing in it is typed): it asks
/// Deno whether it may write the log (or, with an ingest URL, reach it)
/// before it does, so it never opens Deno's permission prompt and never
/// waits there. With neither permission it logs nothing and says so once on
/// stderr, naming the flag to run with. `deno fmt` keeps it as it is;
/// nothing in it trips `deno lint`'s recommended set or `deno check`
/// (`tests/strict_probes.rs`). A posting block (`post`) only posts.
pub(super) fn deno(input: &SnippetInput) -> String {
    let (header, data) = js_fields(input);
    let write = if input.post {
        String::new()
    } else {
        fill(
            r#"if (Deno.permissions.querySync({ name: "write", path: @@LOG@@ }).state === "granted") Deno.writeTextFileSync(@@LOG@@, dbgText + "\n", { append: true });
  else "#,
            &[("LOG", &lit(Lit::Js, input.log_file))],
        )
    };
    let url = input.ingest_url.filter(|url| url.starts_with("http://"));
    let host = url.map(|url| url["http://".len()..].split('/').next().unwrap_or_default());
    let post = match (url, host) {
        (Some(url), Some(host)) => fill(
            r#"if (Deno.permissions.querySync({ name: "net", host: @@HOST@@ }).state === "granted") fetch(@@URL@@, { method: "POST", headers: { "Content-Type": "application/json" }, body: dbgText }).then((dbgR) => dbgR.body?.cancel(), () => { /* a probe never stops the program */ });
  else "#,
            &[("HOST", &lit(Lit::Js, host)), ("URL", &lit(Lit::Js, url))],
        ),
        _ => String::new(),
    };
    let log = input.log_file;
    let flags = match (input.post, host) {
        (false, Some(host)) => format!("--allow-write={log} (or --allow-net={host})"),
        (false, None) => format!("--allow-write={log}"),
        (true, Some(host)) => format!("--allow-net={host}"),
        (true, None) => "--allow-net".to_string(),
    };
    let warning = format!(
        "debug-sidecar: probe {} logged nothing: run deno with {flags}",
        input.probe.id
    );
    let warn = js_once(input, &format!("console.warn({});", lit(Lit::Js, &warning)));
    fill(
        r#"// deno-fmt-ignore
try {
  const dbgLine = { @@HEADER@@, timestamp: Date.now() };
  let dbgText = "";
  try { dbgText = JSON.stringify({ ...dbgLine, data: @@DATA@@ }); } catch (dbgE) { dbgText = JSON.stringify({ ...dbgLine, probeError: String(dbgE).slice(0, 300) }); }
  @@WRITE@@@@POST@@@@WARN@@
} catch { /* a probe never stops the program */ }
"#,
        &[
            ("HEADER", &header),
            ("DATA", &data),
            ("WRITE", &write),
            ("POST", &post),
            ("WARN", &warn),
        ],
    )
}

/// Go's `dbgData` map of the variables and the `check` that keeps it
/// writable, or nothing when the block logs no value.
pub(super) fn go_values(input: &SnippetInput, check: &str) -> String {
    if input.variables.is_empty() {
        return String::new();
    }
    format!(
        "\tdbgData := map[string]interface{{}}{{{}}}\n{check}",
        data_entries(input, |n: &str| lit(Lit::Go, n), ": ", str::to_string)
    )
}

/// Go's value check: a value `encoding/json` cannot write goes in as
/// `fmt.Sprint`.
pub(super) const GO_VALUE_CHECK: &str = "\tfor dbgKey, dbgValue := range dbgData {
\t\tif _, dbgErr := json.Marshal(dbgValue); dbgErr != nil {
\t\t\tdbgData[dbgKey] = fmt.Sprint(dbgValue)
\t\t}
\t}
";

/// Go: imports are per file, so the block names the ones it needs (goimports
/// adds them). The func literal takes the opened file as its arguments, so
/// its names stay local; the deferred func swallows a panic and closes the
/// file (a nil one too: its methods only return an error). The encoder
/// writes the line and its newline in one write. The block is gofmt's
/// layout, so formatting on save leaves it as it is.
pub(super) fn go(input: &SnippetInput) -> String {
    let key = |n: &str| lit(Lit::Go, n);
    let header = header_entries(input, key, ": ", |v| lit(Lit::Go, v), "nil");
    let (imports, data) = if input.variables.is_empty() {
        (
            r#""encoding/json", "os", "time""#,
            "map[string]interface{}{}",
        )
    } else {
        (r#""encoding/json", "fmt", "os", "time""#, "dbgData")
    };
    let values = go_values(input, GO_VALUE_CHECK);
    fill(
        r#"func(dbgFile *os.File, _ error) { // needs imports @@IMPORTS@@
	defer func() { _ = recover(); _ = dbgFile.Close() }()
@@VALUES@@	_ = json.NewEncoder(dbgFile).Encode(map[string]interface{}{@@HEADER@@, "data": @@DATA@@, "timestamp": time.Now().UnixNano() / int64(time.Millisecond)})
}(os.OpenFile(@@LOG@@, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0644))
"#,
        &[
            ("IMPORTS", imports),
            ("VALUES", &values),
            ("HEADER", &header),
            ("DATA", data),
            ("LOG", &lit(Lit::Go, input.log_file)),
        ],
    )
}

/// Swift's value check.
pub(super) const SWIFT_VALUE_FN: &str = "    let dbgValue: (Any) -> Any = { JSONSerialization.isValidJSONObject([$0]) ? $0 : String(describing: $0) }\n";

/// Swift: Foundation cannot be imported inside a block, so the comment names
/// it. `JSONSerialization` raises an uncatchable exception on values it
/// cannot write, so each value is checked first and described otherwise.
pub(super) fn swift(input: &SnippetInput) -> String {
    let data = if input.variables.is_empty() {
        "[String: Any]()".to_string()
    } else {
        let entries = data_entries(
            input,
            |n| lit(Lit::Swift, n),
            ": ",
            |n| format!("dbgValue({n})"),
        );
        format!("[{entries}]")
    };
    fill(
        r#"do { // needs `import Foundation`
@@VALUE_FN@@    let dbgLine: [String: Any] = [@@HEADER@@,
        "data": @@DATA@@, "timestamp": Int(Date().timeIntervalSince1970 * 1000)]
    if JSONSerialization.isValidJSONObject(dbgLine), var dbgBytes = try? JSONSerialization.data(withJSONObject: dbgLine) {
        let dbgPath = @@LOG@@; dbgBytes.append(0x0A)
        if !FileManager.default.fileExists(atPath: dbgPath) { FileManager.default.createFile(atPath: dbgPath, contents: nil) }
        if let dbgFile = FileHandle(forWritingAtPath: dbgPath) { dbgFile.seekToEndOfFile(); dbgFile.write(dbgBytes); dbgFile.closeFile() }
    }
}
"#,
        &[
            ("LOG", &lit(Lit::Swift, input.log_file)),
            ("VALUE_FN", with_values(input, SWIFT_VALUE_FN)),
            (
                "HEADER",
                &header_entries(
                    input,
                    |n| lit(Lit::Swift, n),
                    ": ",
                    |v| lit(Lit::Swift, v),
                    "NSNull()",
                ),
            ),
            ("DATA", &data),
        ],
    )
}
