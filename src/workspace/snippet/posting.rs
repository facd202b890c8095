//! Blocks that post their line to the ingest server instead of appending it
//! to the run's file: a browser page always, and any program whose target
//! (`core::target`) cannot write this machine's files: a container, an
//! emulator, a device. Each posts one JSON record with a 2 s bound, through
//! no proxy (a container's `http_proxy` must not carry the line away), and
//! swallows every failure as the file blocks do.
//!
//! C, C++ and Swift have no HTTP client within a block's few lines, so they
//! have no posting block.

use super::by_hand::{
    concatenation, csharp_line, java_line, rust_data, shell_data, CSHARP_JSON_FN, JAVA_JSON_FN,
    KOTLIN_JSON_FN,
};
use super::json_libs::{
    go_values, js_fields, php_data, python_data, python_header, PYTHON_GUARDS, PYTHON_JSON_FIX,
    PYTHON_RECORD,
};
use super::text::*;
use super::{no_ingest_url, SnippetInput, UnsupportedLanguage};

/// Languages with a posting block (after `canonical`).
pub(super) fn posts(language: &str) -> bool {
    !matches!(language, "c" | "cpp" | "swift")
}

/// Why a language has no posting block, said where a target asks for one.
pub(super) fn cannot_post(language: &str) -> UnsupportedLanguage {
    UnsupportedLanguage::because(
        language,
        "its block cannot post to the ingest server, so it cannot leave a container, emulator or \
         device; mount the state directory into the container at the same path and pass target \
         `host`, or probe code in a language that can post",
    )
}

/// The posting block for `language`, which `posts`.
pub(super) fn block(language: &str, input: &SnippetInput) -> Result<String, UnsupportedLanguage> {
    let url = input.ingest_url.ok_or_else(no_ingest_url)?;
    Ok(match language {
        "javascript" | "typescript" => fetch(input, url, false),
        "browser" => fetch(input, url, true),
        "python" => python(input, url),
        "go" => go(input, url),
        "rust" => rust(input, url),
        "java" => java(input, url),
        "kotlin" => kotlin(input, url),
        "csharp" => csharp(input, url),
        "ruby" => ruby(input, url),
        "php" => php(input, url),
        "shell" => shell(input, url),
        other => return Err(cannot_post(other)),
    })
}

/// JavaScript or TypeScript, in a page or in Node 18+ (which has `fetch`).
/// In a page a failed post says so in the console, once (a Content Security
/// Policy's `connect-src` that leaves out the ingest origin is the usual
/// cause), so its evidence is not lost silently; elsewhere it is ignored,
/// as a file block's failed write is. Kept as it is by prettier.
fn fetch(input: &SnippetInput, url: &str, page: bool) -> String {
    let (header, data) = js_fields(input);
    // typescript-eslint's strict set wants the rejection typed `unknown`.
    let typed = [".ts", ".tsx", ".mts", ".cts"]
        .iter()
        .any(|extension| input.probe.file.ends_with(extension));
    let failed = if page {
        let warning = format!(
            "debug-sidecar: probe {} could not post its line (is the ingest origin in the page's Content Security Policy connect-src?)",
            input.probe.id
        );
        format!(
            "(dbgE{}) => {{ {} }}",
            if typed { ": unknown" } else { "" },
            js_once(
                input,
                &format!("globalThis.console.warn({}, dbgE);", lit(Lit::Js, &warning))
            )
        )
    } else {
        "() => { /* a probe never stops the program */ }".to_string()
    };
    fill(
        r#"// prettier-ignore
try {
  fetch(@@URL@@, { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({
    @@HEADER@@,
    data: @@DATA@@,
    timestamp: Date.now(),
  }) }).catch(@@FAILED@@);
} catch { /* a probe never stops the program */ }
"#,
        &[
            ("FAILED", &failed),
            ("URL", &lit(Lit::Js, url)),
            ("HEADER", &header),
            ("DATA", &data),
        ],
    )
}

/// Python 3.7+: `urllib` through an opener with no proxy; the line as the
/// file block writes it.
fn python(input: &SnippetInput, url: &str) -> String {
    let template = [
        PYTHON_GUARDS.0,
        "with __import__(\"contextlib\").suppress(Exception):\n",
        PYTHON_RECORD,
        r#"    _dbg_u = __import__("urllib.request").request
    _dbg_u.build_opener(_dbg_u.ProxyHandler({})).open(_dbg_u.Request(@@URL@@, headers={"Content-Type": "application/json"}, data=@@FIX@@__import__("json").dumps(_dbg_line, default=repr)).encode()), timeout=2).close()  # pyright: ignore[reportUnknownLambdaType]
"#,
        PYTHON_GUARDS.1,
    ]
    .concat();
    fill(
        &template,
        &[
            ("URL", &lit(Lit::Python, url)),
            ("FIX", PYTHON_JSON_FIX),
            ("HEADER", &python_header(input)),
            ("DATA", &python_data(input)),
        ],
    )
}

/// Go: a client of its own (no proxy from the environment, a 2 s timeout).
fn go(input: &SnippetInput, url: &str) -> String {
    let key = |n: &str| lit(Lit::Go, n);
    let header = header_entries(input, key, ": ", |v| lit(Lit::Go, v), "nil");
    let (imports, data) = if input.variables.is_empty() {
        (
            r#""bytes", "encoding/json", "net/http", "time""#,
            "map[string]interface{}{}",
        )
    } else {
        (
            r#""bytes", "encoding/json", "fmt", "net/http", "time""#,
            "dbgData",
        )
    };
    let values = go_values(input, GO_VALUE_PICK);
    // The answer's body is closed by a deferred call whose arguments are
    // the post itself; when the post failed, its nil answer panics there
    // and the first deferred call recovers.
    fill(
        r#"func() { // needs imports @@IMPORTS@@
	defer func() { _ = recover() }()
@@VALUES@@	dbgLine, _ := json.Marshal(map[string]interface{}{@@HEADER@@, "data": @@DATA@@, "timestamp": time.Now().UnixNano() / int64(time.Millisecond)})
	defer func(dbgAnswer *http.Response, _ error) { _ = dbgAnswer.Body.Close() }((&http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{}}).Post(@@URL@@, "application/json", bytes.NewReader(dbgLine)))
}()
"#,
        &[
            ("IMPORTS", imports),
            ("VALUES", &values),
            ("HEADER", &header),
            ("DATA", data),
            ("URL", &lit(Lit::Go, url)),
        ],
    )
}

/// Go's value check in a line less than the file block's (which the 12
/// lines need): a value `encoding/json` cannot write goes in as
/// `fmt.Sprint`, picked by whether it marshals.
const GO_VALUE_PICK: &str = "\tfor dbgKey, dbgValue := range dbgData {
\t\t_, dbgErr := json.Marshal(dbgValue)
\t\tdbgData[dbgKey] = map[bool]interface{}{true: dbgValue, false: fmt.Sprint(dbgValue)}[dbgErr == nil]
\t}
";

/// `http://host:port/path` in its parts; the URLs the sidecar hands out
/// always have all three.
fn url_parts(url: &str) -> (&str, &str, &str) {
    let rest = url.strip_prefix("http://").unwrap_or(url);
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let (host, port) = authority.rsplit_once(':').unwrap_or((authority, "80"));
    (host, port, path)
}

/// Rust: std has no HTTP client, so the block writes an HTTP/1.0 request on
/// a `TcpStream` (2 s to connect, 2 s for the answer it waits for).
fn rust(input: &SnippetInput, url: &str) -> String {
    let (data, joined) = rust_data(input);
    let (host, port, path) = url_parts(url);
    let request = format!(
        "POST {path} HTTP/1.0\r\nHost: {host}:{port}\r\nContent-Type: application/json\r\nContent-Length: "
    );
    fill(
        r#"@@GUARDS@@let () = {
@@DATA@@    let dbg_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |dbg_age| dbg_age.as_millis());
    let dbg_line = [@@HEAD@@, @@JOINED@@"},\"timestamp\":", &dbg_ms.to_string(), "}\n"].concat();
    if let Some(mut dbg_post) = std::net::ToSocketAddrs::to_socket_addrs(&(@@HOST@@, @@PORT@@)).ok().and_then(|mut dbg_addrs| dbg_addrs.next()).and_then(|dbg_addr| std::net::TcpStream::connect_timeout(&dbg_addr, std::time::Duration::from_secs(2)).ok()) {
        let _ = (dbg_post.set_read_timeout(Some(std::time::Duration::from_secs(2))), std::io::Write::write_all(&mut dbg_post, [@@REQUEST@@, &dbg_line.len().to_string(), "\r\n\r\n", &dbg_line].concat().as_bytes()), std::io::Read::read(&mut dbg_post, &mut [0u8; 64]));
    }
};
"#,
        &[
            ("GUARDS", super::by_hand::RUST_GUARDS),
            ("DATA", &data),
            ("HEAD", &lit(Lit::Rust, &json_head_text(input))),
            ("JOINED", joined),
            ("HOST", &lit(Lit::Rust, host)),
            ("PORT", &format!("{}u16", port.parse::<u16>().unwrap_or(80))),
            ("REQUEST", &lit(Lit::Rust, &request)),
        ],
    )
}

/// Java 8+: `HttpURLConnection` with no proxy, the line from the file
/// block's value writer.
fn java(input: &SnippetInput, url: &str) -> String {
    fill(
        r#"try {
@@VALUE_FN@@    String dbgLine = @@LINE@@;
    java.net.HttpURLConnection dbgPost = (java.net.HttpURLConnection) java.net.URI.create(@@URL@@).toURL().openConnection(java.net.Proxy.NO_PROXY); dbgPost.setConnectTimeout(2000); dbgPost.setReadTimeout(2000); dbgPost.setDoOutput(true); dbgPost.setRequestProperty("Content-Type", "application/json"); dbgPost.getOutputStream().write(dbgLine.getBytes(java.nio.charset.StandardCharsets.UTF_8)); dbgPost.getResponseCode(); dbgPost.disconnect();
} catch (Throwable dbgIgnored) {}
"#,
        &[
            ("URL", &lit(Lit::Java, url)),
            ("VALUE_FN", with_values(input, JAVA_JSON_FN)),
            ("LINE", &java_line(input)),
        ],
    )
}

/// Kotlin/JVM: the same connection as Java's.
fn kotlin(input: &SnippetInput, url: &str) -> String {
    fill(
        r#"try {
@@VALUE_FN@@    (java.net.URI.create(@@URL@@).toURL().openConnection(java.net.Proxy.NO_PROXY) as java.net.HttpURLConnection).run { connectTimeout = 2000; readTimeout = 2000; doOutput = true; setRequestProperty("Content-Type", "application/json")
        outputStream.use { dbgOut -> dbgOut.write((@@LINE@@).toByteArray()) }; responseCode; disconnect() }
} catch (dbgIgnored: Throwable) {
}
"#,
        &[
            ("URL", &lit(Lit::Kotlin, url)),
            ("VALUE_FN", with_values(input, KOTLIN_JSON_FN)),
            (
                "LINE",
                &concatenation(
                    input,
                    Lit::Kotlin,
                    " +\n            ",
                    |n| format!("dbgJson({n})"),
                    "System.currentTimeMillis()",
                ),
            ),
        ],
    )
}

/// C#: `WebRequest` (in System.dll on .NET Framework, Mono and .NET) with
/// no proxy and a 2 s timeout.
fn csharp(input: &SnippetInput, url: &str) -> String {
    fill(
        r#"try {
@@VALUE_FN@@    var dbgPost = System.Net.WebRequest.Create(@@URL@@); dbgPost.Method = "POST"; dbgPost.ContentType = "application/json"; dbgPost.Timeout = 2000; dbgPost.Proxy = null; var dbgBytes = System.Text.Encoding.UTF8.GetBytes(@@LINE@@);
    using (var dbgOut = dbgPost.GetRequestStream()) { dbgOut.Write(dbgBytes, 0, dbgBytes.Length); } dbgPost.GetResponse().Close();
} catch {}
"#,
        &[
            ("URL", &lit(Lit::CSharp, url)),
            ("VALUE_FN", with_values(input, CSHARP_JSON_FN)),
            ("LINE", &csharp_line(input)),
        ],
    )
}

/// Ruby: `Net::HTTP` with no proxy (`nil`) and 2 s timeouts.
fn ruby(input: &SnippetInput, url: &str) -> String {
    let key = |n: &str| lit(Lit::Ruby, n);
    fill(
        r#"# rubocop:disable all
begin
  %w[json net/http].each { |dbg_lib| require dbg_lib }
  dbg_uri = URI(@@URL@@)
  Net::HTTP.start(dbg_uri.host, dbg_uri.port, nil, open_timeout: 2, read_timeout: 2) { |dbg_http| dbg_http.post(dbg_uri.path, JSON.generate({
    @@HEADER@@,
    "data" => {@@DATA@@},
    "timestamp" => Process.clock_gettime(Process::CLOCK_REALTIME, :millisecond),
  }), "Content-Type" => "application/json") }
rescue StandardError, ScriptError
end
# rubocop:enable all
"#,
        &[
            ("URL", &lit(Lit::Ruby, url)),
            (
                "HEADER",
                &header_entries(input, key, " => ", |v| lit(Lit::Ruby, v), "nil"),
            ),
            ("DATA", &data_entries(input, key, " => ", str::to_string)),
        ],
    )
}

/// PHP 7+: an HTTP stream context (which takes no proxy from the
/// environment); `@` silences the warning of a failed post.
fn php(input: &SnippetInput, url: &str) -> String {
    let key = |n: &str| lit(Lit::Php, n);
    let data = php_data(input);
    fill(
        r#"// phpcs:disable
try {
    @file_get_contents(@@URL@@, false, stream_context_create(["http" => ["method" => "POST", "header" => "Content-Type: application/json", "timeout" => 2, "ignore_errors" => true, "content" => json_encode([
        @@HEADER@@,
        "data" => (object) [@@DATA@@],
        "timestamp" => (int) floor(microtime(true) * 1000),
    ], JSON_UNESCAPED_SLASHES | JSON_UNESCAPED_UNICODE | JSON_PARTIAL_OUTPUT_ON_ERROR)]]));
} catch (\Throwable $dbgError) {
}
// phpcs:enable
"#,
        &[
            ("URL", &lit(Lit::Php, url)),
            (
                "HEADER",
                &header_entries(input, key, " => ", |v| lit(Lit::Php, v), "null"),
            ),
            ("DATA", &data),
        ],
    )
}

/// POSIX sh: `curl`, else `wget` (BusyBox's in Alpine images), with the
/// proxy variables unset in the block's subshell.
fn shell(input: &SnippetInput, url: &str) -> String {
    let (data, format, data_arg) = shell_data(input);
    fill(
        r#"# shellcheck disable=SC2310,SC2311
(
@@DATA@@  dbg_ms=$(date +%s%3N); case ${dbg_ms} in '' | *[!0-9]*) dbg_ms=$(date +%s)000 ;; *) ;; esac; unset http_proxy HTTP_PROXY all_proxy ALL_PROXY
  dbg_line=$(printf '@@FORMAT@@},"timestamp":%s}' @@HEAD@@@@DATA_ARG@@ "${dbg_ms}"); if command -v curl >/dev/null; then curl -s -m 2 -H 'Content-Type: application/json' --data-binary "${dbg_line}" @@URL@@ >/dev/null; else wget -q -T 2 -O /dev/null --header='Content-Type: application/json' --post-data="${dbg_line}" @@URL@@; fi
) 2>/dev/null || true
"#,
        &[
            ("DATA", &data),
            ("FORMAT", format),
            ("HEAD", &sh_quote(&json_head_text(input))),
            ("DATA_ARG", data_arg),
            ("URL", &sh_quote(url)),
        ],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_host_port_and_path() {
        assert_eq!(
            url_parts("http://172.17.0.1:4100/ingest/abc"),
            ("172.17.0.1", "4100", "/ingest/abc")
        );
        assert_eq!(
            url_parts("http://host.docker.internal:9/ingest/t"),
            ("host.docker.internal", "9", "/ingest/t")
        );
    }
}
