//! Languages whose block writes its JSON by hand: Java, Kotlin, C#, Rust,
//! C, C++ and shell.

use super::text::*;
use super::SnippetInput;

/// The line as a concatenation in `style` over three lines at most: the
/// header, the `data` entries (each value wrapped by `value`), and the
/// timestamp with the closing text; `join` goes between two lines.
pub(super) fn concatenation(
    input: &SnippetInput,
    style: Lit,
    join: &str,
    value: impl Fn(&str) -> String,
    timestamp: &str,
) -> String {
    let mut lines = vec![lit(style, &json_head_text(input))];
    if !input.variables.is_empty() {
        let data: Vec<String> = input
            .variables
            .iter()
            .enumerate()
            .map(|(i, name)| format!("{} + {}", lit(style, &json_key(i, name)), value(name)))
            .collect();
        lines.push(data.join(" + "));
    }
    lines.push(format!(
        "{} + {timestamp} + {}",
        lit(style, "},\"timestamp\":"),
        lit(style, "}\n")
    ));
    lines.join(join)
}

/// The line a block writes when a value failed (`probeError`, the hit
/// table's `probeFailed`), as a concatenation in `style`: the header, the
/// failure's words from `error` (an expression whose text needs no JSON
/// escaping, such as an exception's class name), the time.
pub(super) fn failure_line(
    input: &SnippetInput,
    style: Lit,
    error: &str,
    timestamp: &str,
) -> String {
    let mut head = json_head(input);
    head.pop();
    head.push(",\"probeError\":\"".to_string());
    format!(
        "{} + {error} + {} + {timestamp} + {}",
        lit(style, &head.concat()),
        lit(style, "\",\"timestamp\":"),
        lit(style, "}\n")
    )
}

/// Java's line: the header, each value through `dbgJson`, the time.
pub(super) fn java_line(input: &SnippetInput) -> String {
    concatenation(
        input,
        Lit::Java,
        "\n        + ",
        |n| format!("dbgJson.apply({n})"),
        "System.currentTimeMillis()",
    )
}

/// C#'s line: the header, each value through `dbgJson`, the time.
pub(super) fn csharp_line(input: &SnippetInput) -> String {
    concatenation(
        input,
        Lit::CSharp,
        "\n        + ",
        |n| format!("dbgJson({n})"),
        "System.DateTimeOffset.UtcNow.ToUnixTimeMilliseconds()",
    )
}

/// Java's value writer.
pub(super) const JAVA_JSON_FN: &str = r#"    java.util.function.Function<Object, String> dbgJson = dbgValue -> dbgValue == null || dbgValue instanceof Boolean
        || dbgValue instanceof Number && String.valueOf(dbgValue).matches("-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?") ? String.valueOf(dbgValue)
        : String.valueOf(dbgValue).chars().mapToObj(dbgC -> dbgC == '"' || dbgC == '\\' ? "\\" + (char) dbgC : dbgC < 0x20 ? String.format("\\u%04x", dbgC) : String.valueOf((char) dbgC))
            .collect(java.util.stream.Collectors.joining("", "\"", "\""));
"#;

/// Java 8+: the JDK has no JSON writer, so a lambda writes each value:
/// null, booleans and finite numbers as JSON, the rest as its escaped
/// `toString`. `Throwable` is caught so not even an `Error` escapes; a value
/// that threw is recorded as the exception's class (a `probeError` line).
pub(super) fn java(input: &SnippetInput) -> String {
    fill(
        r#"try {
@@VALUE_FN@@    String dbgLine = @@LINE@@;
    java.nio.file.Files.write(java.nio.file.Paths.get(@@LOG@@), dbgLine.getBytes(java.nio.charset.StandardCharsets.UTF_8), java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
} catch (Throwable dbgError) { try { java.nio.file.Files.write(java.nio.file.Paths.get(@@LOG@@), (@@FAILED@@).getBytes(java.nio.charset.StandardCharsets.UTF_8), java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND); } catch (Throwable dbgIgnored) {} }
"#,
        &[
            ("LOG", &lit(Lit::Java, input.log_file)),
            ("VALUE_FN", with_values(input, JAVA_JSON_FN)),
            ("LINE", &java_line(input)),
            (
                "FAILED",
                &failure_line(
                    input,
                    Lit::Java,
                    "dbgError.getClass().getName()",
                    "System.currentTimeMillis()",
                ),
            ),
        ],
    )
}

/// Kotlin's value writer.
pub(super) const KOTLIN_JSON_FN: &str = r#"    val dbgJson = { dbgValue: Any? -> if (dbgValue == null || dbgValue is Boolean || (dbgValue is Number && dbgValue.toString().matches(Regex("-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?")))) dbgValue.toString()
        else dbgValue.toString().map { dbgC -> when { dbgC == '"' || dbgC == '\\' -> "\\$dbgC"; dbgC < ' ' -> String.format("\\u%04x", dbgC - '\u0000'); else -> "$dbgC" } }.joinToString("", "\"", "\"") }
"#;

/// Kotlin/JVM: the same value writer as Java (Char minus Char is the code on
/// every Kotlin version); `java.io.File` appends. A value that threw is
/// recorded as the exception's class.
pub(super) fn kotlin(input: &SnippetInput) -> String {
    fill(
        r#"try {
@@VALUE_FN@@    java.io.File(@@LOG@@).appendText(@@LINE@@)
} catch (dbgError: Throwable) { try { java.io.File(@@LOG@@).appendText(@@FAILED@@) } catch (dbgIgnored: Throwable) {} }
"#,
        &[
            (
                "FAILED",
                &failure_line(
                    input,
                    Lit::Kotlin,
                    "dbgError.javaClass.name",
                    "System.currentTimeMillis()",
                ),
            ),
            ("LOG", &lit(Lit::Kotlin, input.log_file)),
            ("VALUE_FN", with_values(input, KOTLIN_JSON_FN)),
            (
                "LINE",
                &concatenation(
                    input,
                    Lit::Kotlin,
                    " +\n        ",
                    |n| format!("dbgJson({n})"),
                    "System.currentTimeMillis()",
                ),
            ),
        ],
    )
}

/// C#'s value writer.
pub(super) const CSHARP_JSON_FN: &str = r#"    System.Func<object, string> dbgText = dbgValue => System.Convert.ToString(dbgValue, System.Globalization.CultureInfo.InvariantCulture) ?? "";
    System.Func<object, string> dbgJson = dbgValue => dbgValue == null ? "null" : (dbgValue is bool) ? ((bool)dbgValue ? "true" : "false")
        : (dbgValue is System.IConvertible) && !(dbgValue is string) && !(dbgValue is char) && System.Text.RegularExpressions.Regex.IsMatch(dbgText(dbgValue), "^-?[0-9]+(\\.[0-9]+)?([eE][-+]?[0-9]+)?$") ? dbgText(dbgValue)
        : "\"" + string.Concat(System.Linq.Enumerable.Select(dbgText(dbgValue), dbgC => dbgC == '"' || dbgC == '\\' ? "\\" + dbgC : dbgC < ' ' ? "\\u" + ((int)dbgC).ToString("x4") : dbgC.ToString())) + "\"";
"#;

/// C#: System.Text.Json is missing on .NET Framework, Mono and Unity, so a
/// lambda writes each value: null, booleans and finite numbers as JSON, the
/// rest as its escaped invariant-culture text (escaped with LINQ, in
/// System.Core). `catch` takes everything.
pub(super) fn csharp(input: &SnippetInput) -> String {
    fill(
        r#"try {
@@VALUE_FN@@    System.IO.File.AppendAllText(@@LOG@@, @@LINE@@);
} catch (System.Exception dbgError) { try { System.IO.File.AppendAllText(@@LOG@@, @@FAILED@@); } catch {} }
"#,
        &[
            ("LOG", &lit(Lit::CSharp, input.log_file)),
            ("VALUE_FN", with_values(input, CSHARP_JSON_FN)),
            ("LINE", &csharp_line(input)),
            (
                "FAILED",
                &failure_line(
                    input,
                    Lit::CSharp,
                    "dbgError.GetType().FullName",
                    "System.DateTimeOffset.UtcNow.ToUnixTimeMilliseconds()",
                ),
            ),
        ],
    )
}

/// Rust's value lines (the escaper, `dbg_data` as JSON pairs) and what
/// joins them into the line, or nothing when the block logs no value.
pub(super) fn rust_data(input: &SnippetInput) -> (String, &'static str) {
    let data = if input.variables.is_empty() {
        String::new()
    } else {
        let pairs: Vec<String> = input
            .variables
            .iter()
            .map(|name| {
                // A plain name goes inside the braces (clippy asks for that).
                let debug = if is_identifier(name) {
                    format!("format!(\"{{{name}:?}}\")")
                } else {
                    format!("format!(\"{{:?}}\", {name})")
                };
                format!("({}, {debug})", lit(Lit::Rust, name))
            })
            .collect();
        format!(
            "{RUST_JSON_FN}    let dbg_data = [{}];\n    let dbg_data: Vec<String> = dbg_data.iter().map(|(dbg_key, dbg_value)| format!(\"\\\"{{}}\\\":\\\"{{}}\\\"\", dbg_json(dbg_key), dbg_json(dbg_value))).collect();\n",
            pairs.join(", ")
        )
    };
    let joined = if input.variables.is_empty() {
        ""
    } else {
        "&dbg_data.join(\",\"), "
    };
    (data, joined)
}

/// Rust's value escaper: the body of a JSON string.
pub(super) const RUST_JSON_FN: &str = r#"    let dbg_json = |dbg_text: &str| -> String { dbg_text.chars().map(|dbg_c| match dbg_c { '"' | '\\' => format!("\\{dbg_c}"), _ if dbg_c < ' ' => format!("\\u{:04x}", dbg_c as u32), _ => dbg_c.to_string() }).collect() };
"#;

/// Rust: no JSON crate assumed, and the sidecar cannot know the types, so
/// each value is its `{:?}` text in a JSON string (every std type has Debug;
/// a string shows with its quotes). The line is built before the file is
/// opened, and writing never panics.
pub(super) fn rust(input: &SnippetInput) -> String {
    let (data, joined) = rust_data(input);
    fill(
        r#"@@GUARDS@@let () = {
@@DATA@@    let dbg_ms = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |dbg_age| dbg_age.as_millis());
    let dbg_line = [@@HEAD@@, @@JOINED@@"},\"timestamp\":", &dbg_ms.to_string(), "}\n"].concat();
    if let Ok(mut dbg_file) = std::fs::OpenOptions::new().create(true).append(true).open(@@LOG@@) {
        let _ = std::io::Write::write_all(&mut dbg_file, dbg_line.as_bytes());
    }
};
"#,
        &[
            ("GUARDS", RUST_GUARDS),
            ("DATA", &data),
            ("HEAD", &lit(Lit::Rust, &json_head_text(input))),
            ("JOINED", joined),
            ("LOG", &lit(Lit::Rust, input.log_file)),
        ],
    )
}

/// What keeps a Rust block out of the project's lints and formatter, on
/// the block alone: attributes on a `let` statement (on a block statement
/// they are unstable), so `#![deny(unused_qualifications)]`, clippy's
/// pedantic set and `cargo fmt --check` pass with the block in place.
pub(super) const RUST_GUARDS: &str = "#[rustfmt::skip]\n#[allow(unused_qualifications, clippy::all, clippy::pedantic, clippy::nursery)]\n";

/// What keeps a C block out of strict warning sets (`-Wformat=2`,
/// `-Wdouble-promotion`, `-Wdeclaration-after-statement`,
/// `-Wsign-conversion`, `-Wfloat-equal`, with `-Werror`) under GCC and
/// Clang, on the block alone: its diagnostics pushed, those ignored, and
/// popped after it; other compilers skip the pragmas.
pub(super) const C_GUARDS: &str = "#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored \"-Wformat-nonliteral\"
#pragma GCC diagnostic ignored \"-Wdouble-promotion\"
#pragma GCC diagnostic ignored \"-Wdeclaration-after-statement\"
#pragma GCC diagnostic ignored \"-Wsign-conversion\"
#pragma GCC diagnostic ignored \"-Wfloat-equal\"
#endif
";

/// C++'s: the same but the C-only `-Wdeclaration-after-statement` (GCC
/// warns of it in a C++ pragma).
pub(super) const CPP_GUARDS: &str = "#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored \"-Wformat-nonliteral\"
#pragma GCC diagnostic ignored \"-Wdouble-promotion\"
#pragma GCC diagnostic ignored \"-Wsign-conversion\"
#pragma GCC diagnostic ignored \"-Wfloat-equal\"
#endif
";

/// After a C or C++ block: its diagnostics as they were.
pub(super) const C_GUARDS_END: &str = "#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
";

/// How C tells a value's type: GCC's and Clang's type test (any standard
/// from C99; the comma operator decays an array to a pointer, as `_Generic`
/// does), or C11's `_Generic` elsewhere. Defined once per file: a later
/// block, whatever its version, finds it there.
pub(super) const C_PICK_MACRO: &str = r#"#if !defined(DEBUG_PROBE_PICK) && defined(__GNUC__)
#define DEBUG_PROBE_PICK(v, t, a, b) __builtin_choose_expr(__builtin_types_compatible_p(__typeof__(((void)0, (v))), t), a, b)
#elif !defined(DEBUG_PROBE_PICK)
#define DEBUG_PROBE_PICK(v, t, a, b) _Generic((v), t: a, default: b)
#endif
"#;

/// C's value writer, a macro because only the compiler knows a value's type:
/// the printf format per arithmetic type; the value's text (a `char *` as it
/// is, a number printed into `dbg_num`); then null, a number as it is, or
/// the text escaped into a JSON string.
pub(super) const C_VALUE_MACRO: &str = r#"#define DEBUG_PROBE_VALUE(key, v) do { char dbg_num[64] = ""; const char *dbg_format = DEBUG_PROBE_PICK(v, _Bool, "%d", DEBUG_PROBE_PICK(v, char, "%d", DEBUG_PROBE_PICK(v, signed char, "%d", DEBUG_PROBE_PICK(v, unsigned char, "%d", DEBUG_PROBE_PICK(v, short, "%d", DEBUG_PROBE_PICK(v, unsigned short, "%d", DEBUG_PROBE_PICK(v, int, "%d", DEBUG_PROBE_PICK(v, unsigned, "%u", DEBUG_PROBE_PICK(v, long, "%ld", DEBUG_PROBE_PICK(v, unsigned long, "%lu", DEBUG_PROBE_PICK(v, long long, "%lld", DEBUG_PROBE_PICK(v, unsigned long long, "%llu", DEBUG_PROBE_PICK(v, float, "%.9g", DEBUG_PROBE_PICK(v, double, "%.17g", DEBUG_PROBE_PICK(v, long double, "%.21Lg", NULL))))))))))))))); \
        const char *dbg_text = DEBUG_PROBE_PICK(v, char *, (v), DEBUG_PROBE_PICK(v, const char *, (v), dbg_format ? dbg_num : "(unsupported type: cast it to a number or char *)")); if (dbg_format) snprintf(dbg_num, sizeof dbg_num, dbg_format, DEBUG_PROBE_PICK(v, char *, 0, DEBUG_PROBE_PICK(v, const char *, 0, (v)))); fputs(key, dbg_log); if (!dbg_text || (dbg_text == dbg_num && (unsigned)(dbg_num[dbg_num[0] == '-'] - '0') < 10u)) { fputs(dbg_text ? dbg_text : "null", dbg_log); break; } fputc('"', dbg_log); for (const char *dbg_c = dbg_text; *dbg_c; dbg_c++) { fprintf(dbg_log, (unsigned char)*dbg_c < 0x20 ? "\\u%04x" : *dbg_c == '"' || *dbg_c == '\\' ? "\\%c" : "%c", (unsigned char)*dbg_c); } fputc('"', dbg_log); } while (0)
"#;

/// One line of value writer calls, `<call><args><key literal>, <name>);`
/// each, or nothing when the block logs no value.
fn value_calls(input: &SnippetInput, indent: &str, call: &str, args: &str) -> String {
    if input.variables.is_empty() {
        return String::new();
    }
    let calls: Vec<String> = input
        .variables
        .iter()
        .enumerate()
        .map(|(i, name)| format!("{call}{args}{}, {name});", lit(Lit::C, &json_key(i, name))))
        .collect();
    format!("{indent}{}\n", calls.join(" "))
}

/// C99 and later: no JSON writer and no way to know the types, so the
/// compiler picks (`C_PICK_MACRO`): `char *` and char arrays are written as
/// escaped strings (NULL as null), integers, booleans (0/1) and finite
/// floats as numbers, NaN and infinities as strings, any other type as a
/// string asking for a cast. The time is in milliseconds where `<time.h>`
/// has C11's `timespec_get`, in whole seconds before. Headers cannot be
/// included inside a function, so the comment names them. The value macro
/// is undefined at the end of the block.
pub(super) fn c(input: &SnippetInput) -> String {
    let values = value_calls(input, "    ", "DEBUG_PROBE_VALUE(", "");
    let undef = with_values(input, "#undef DEBUG_PROBE_VALUE\n");
    fill(
        r#"@@OPEN@@do { FILE *dbg_log = fopen(@@LOG@@, "a"); if (!dbg_log) break; fputs(@@HEAD@@, dbg_log); // needs #include <stdio.h> and <time.h>
@@PICK@@@@MACRO@@@@VALUES@@#if defined(TIME_UTC)
    struct timespec dbg_now = {0}; timespec_get(&dbg_now, TIME_UTC); fprintf(dbg_log, "},\"timestamp\":%lld}\n", (long long)dbg_now.tv_sec * 1000 + dbg_now.tv_nsec / 1000000); fclose(dbg_log);
#else
    fprintf(dbg_log, "},\"timestamp\":%lld}\n", (long long)time(NULL) * 1000); fclose(dbg_log);
#endif
@@UNDEF@@} while (0);
@@CLOSE@@"#,
        &[
            ("OPEN", C_GUARDS),
            ("CLOSE", C_GUARDS_END),
            ("PICK", with_values(input, C_PICK_MACRO)),
            ("MACRO", with_values(input, C_VALUE_MACRO)),
            ("LOG", &lit(Lit::C, input.log_file)),
            ("HEAD", &lit(Lit::C, &json_head_text(input))),
            ("VALUES", &values),
            ("UNDEF", undef),
        ],
    )
}

/// C++'s value writer, C++11 and later: one overload per kind of value,
/// chosen by the compiler. A value comes in as a `std::reference_wrapper`
/// (trivially copyable, so it may pass through `...`), whose one conversion
/// to the value's own type is shared by every candidate, so the ranking is
/// the ordinary one for that type: small integers promote to `int`, `float`
/// to `double`, char arrays decay to `const char *`, other pointers take
/// `const void *` before `bool`, and what converts to none of them (a class,
/// a scoped enum) falls to the ellipsis. `std::string_view` has its own
/// overload where the library has it (from C++17). A value that converts
/// equally well to several (`__int128`, `std::nullptr_t`) does not compile:
/// the person casts it.
pub(super) const CPP_WRITER: &str = r#"    struct dbg_writer { std::FILE *dbg_f; void text(const char *dbg_s, const char *dbg_e) const { std::fputc('"', dbg_f); for (; dbg_s != dbg_e; ++dbg_s) { const unsigned char dbg_c = static_cast<unsigned char>(*dbg_s); std::fprintf(dbg_f, dbg_c < 0x20 ? "\\u%04x" : dbg_c == '"' || dbg_c == '\\' ? "\\%c" : "%c", dbg_c); } std::fputc('"', dbg_f); }
#if defined(__cpp_lib_string_view)
        void put(std::string_view dbg_s) const { text(dbg_s.data(), dbg_s.data() + dbg_s.size()); }
#endif
        void put(bool dbg_v) const { std::fputs(dbg_v ? "true" : "false", dbg_f); } void put(int dbg_v) const { std::fprintf(dbg_f, "%d", dbg_v); } void put(unsigned dbg_v) const { std::fprintf(dbg_f, "%u", dbg_v); } void put(long dbg_v) const { std::fprintf(dbg_f, "%ld", dbg_v); } void put(unsigned long dbg_v) const { std::fprintf(dbg_f, "%lu", dbg_v); } void put(long long dbg_v) const { std::fprintf(dbg_f, "%lld", dbg_v); } void put(unsigned long long dbg_v) const { std::fprintf(dbg_f, "%llu", dbg_v); }
        void put(double dbg_v) const { std::fprintf(dbg_f, dbg_v - dbg_v == 0 ? "%.17g" : "\"%.17g\"", dbg_v); } void put(long double dbg_v) const { put(static_cast<double>(dbg_v)); } void put(const std::string &dbg_s) const { text(dbg_s.data(), dbg_s.data() + dbg_s.size()); } void put(const char *dbg_s) const { const char *dbg_e = dbg_s; while (dbg_e && *dbg_e) ++dbg_e; if (dbg_s) text(dbg_s, dbg_e); else std::fputs("null", dbg_f); } void put(const void *) const { std::fputs("\"(a pointer: log what it points to)\"", dbg_f); } void put(...) const { std::fputs("\"(unsupported type: convert it to a number or string)\"", dbg_f); } };
"#;

/// The writer and the generic lambda (C++14) that writes one key and value,
/// counting the keys it wrote.
const CPP_VALUE_FN: &str = r#" const dbg_writer dbg_w{dbg_log}; int dbg_n = 0; auto dbg_value = [&dbg_w, &dbg_n](const char *dbg_key, const auto &dbg_v) { std::fputs(dbg_key, dbg_w.dbg_f); ++dbg_n; dbg_w.put(std::cref(dbg_v)); };"#;

/// C++14 and later, with or without exceptions: the writer above puts
/// booleans, integers, unscoped enums and finite floats as JSON, strings
/// escaped (a null `char *` as null), NaN and infinities as strings, any
/// other value as a string asking for a conversion. Headers cannot be
/// included inside a function, so the comment names them. Where exceptions
/// are on, a value whose expression throws ends the values with
/// `"(a value threw)":true`: the line is still one valid record and the
/// program goes on; under `-fno-exceptions` there is no `try` to write.
pub(super) fn cpp(input: &SnippetInput) -> String {
    let calls = value_calls(input, "", "dbg_value(", "");
    let values = if calls.is_empty() {
        calls
    } else {
        let calls = calls.trim_end();
        format!(
            "#if defined(__cpp_exceptions) || defined(_CPPUNWIND)
        try {{ {calls} }} catch (...) {{ std::fputs(dbg_n ? \",\\\"(a value threw)\\\":true\" : \"\\\"(a value threw)\\\":true\", dbg_log); }}
#else
        {calls}
#endif
"
        )
    };
    fill(
        r#"@@OPEN@@{ // needs #include <chrono>, <cstdio>, <functional> and <string> (C++14)
@@WRITER@@    if (std::FILE *dbg_log = std::fopen(@@LOG@@, "a")) {@@VALUE_FN@@ std::fputs(@@HEAD@@, dbg_log);
@@VALUES@@        std::fprintf(dbg_log, "},\"timestamp\":%lld}\n", static_cast<long long>(std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch()).count())); std::fclose(dbg_log); }
}
@@CLOSE@@"#,
        &[
            ("OPEN", CPP_GUARDS),
            ("CLOSE", C_GUARDS_END),
            ("WRITER", with_values(input, CPP_WRITER)),
            ("VALUE_FN", with_values(input, CPP_VALUE_FN)),
            ("LOG", &lit(Lit::C, input.log_file)),
            ("HEAD", &lit(Lit::C, &json_head_text(input))),
            ("VALUES", &values),
        ],
    )
}

/// The shell block's value function and `dbg_data` line (nothing when it
/// logs no value), with its `printf` format and the argument for `data`.
pub(super) fn shell_data(input: &SnippetInput) -> (String, &'static str, &'static str) {
    let data: Vec<String> = input
        .variables
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let value = if is_identifier(name) || name.chars().all(|c| c.is_ascii_digit()) {
                format!("${{{name}-}}")
            } else {
                name.to_string()
            };
            format!(
                "{}\"$(dbg_json \"{value}\")\"",
                sh_quote(&json_key(i, name))
            )
        })
        .collect();
    let data = if data.is_empty() {
        String::new()
    } else {
        format!("{SHELL_JSON_FN}  dbg_data={}\n", data.concat())
    };
    let (format, data_arg) = if input.variables.is_empty() {
        ("%s", "")
    } else {
        ("%s%s", " \"${dbg_data}\"")
    };
    (data, format, data_arg)
}

/// Shell's value escaper: its argument as a JSON string.
pub(super) const SHELL_JSON_FN: &str = r#"  dbg_json() {
    dbg_rest=$1 dbg_out=
    while test -n "${dbg_rest}"; do dbg_tail=${dbg_rest#?}; dbg_char=${dbg_rest%"${dbg_tail}"}; dbg_rest=${dbg_tail}
      case ${dbg_char} in '"' | \\) dbg_out=${dbg_out}\\${dbg_char} ;; [[:cntrl:]]) dbg_out=${dbg_out}$(printf '\\u%04x' "'${dbg_char}") ;; *) dbg_out=${dbg_out}${dbg_char} ;; esac
    done; printf '"%s"' "${dbg_out}"; }
"#;

/// POSIX sh (also bash, zsh, ksh): no JSON tool to rely on, so a function
/// escapes each value into a JSON string, character by character. It all runs
/// in a subshell, so no name leaks and `set -e`/`set -u` cannot stop the
/// script; its errors go to /dev/null. Variable names are read as `${name-}`;
/// other entries (`$1`, `$(cmd)`) are pasted inside double quotes. Every
/// expansion is in braces and every `case` has a default, so shellcheck
/// `-o all` finds nothing in it; its directive keeps off the two checks of
/// a function called in `$(...)` under `set -e` (SC2310, SC2311), which the
/// subshell and `|| true` already answer.
pub(super) fn shell(input: &SnippetInput) -> String {
    let (data, format, data_arg) = shell_data(input);
    fill(
        r#"# shellcheck disable=SC2310,SC2311
(
@@DATA@@  dbg_ms=$(date +%s%3N); case ${dbg_ms} in '' | *[!0-9]*) dbg_ms=$(date +%s)000 ;; *) ;; esac
  printf '@@FORMAT@@},"timestamp":%s}\n' @@HEAD@@@@DATA_ARG@@ "${dbg_ms}" >> @@LOG@@
) 2>/dev/null || true
"#,
        &[
            ("DATA", &data),
            ("FORMAT", format),
            ("HEAD", &sh_quote(&json_head_text(input))),
            ("DATA_ARG", data_arg),
            ("LOG", &sh_quote(input.log_file)),
        ],
    )
}
