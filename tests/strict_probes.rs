//! Issue 35: a probe block goes into the person's own project, so it must pass
//! that project's type checker, linters and formatter as they stand, and
//! still write its line. Each case is a tiny project that passes its checks
//! before the block (asserted first, so a failure is the block's), then with
//! the block pasted where its variables exist: JavaScript (CommonJS and ES
//! module) under ESLint's recommended set and prettier, TypeScript under
//! `tsc --strict` (`nodenext`, with and without Node's types) and
//! typescript-eslint's `strictTypeChecked`, Deno under `deno check`, `deno
//! lint` and `deno fmt`, Python (targets 3.8 and 3.12) under ruff (its
//! default and `--select ALL` less the rules named below), flake8, pylint,
//! mypy `--strict`, pyright strict and `ruff format --check`, shell under
//! shellcheck `-o all`, Ruby under RuboCop, PHP under PHP_CodeSniffer's
//! PSR-12, Go under gofmt, `go vet` and staticcheck, Java under Checkstyle's
//! Google checks. Compilers' strict flags (C, C++, Rust, Java, Kotlin, C#)
//! are in `tests/snippets.rs`; a page's block in a real page in
//! `tests/page_probes.rs`. The tools are pinned and installed by
//! `scripts/test` (`DEBUG_SIDECAR_LINT_JS`: a node_modules folder;
//! `DEBUG_SIDECAR_LINT_PY`: a venv's bin folder; shellcheck, rubocop, phpcs,
//! staticcheck and Checkstyle from Debian through
//! `scripts/snippet-toolchains`).

mod support;

use debug_sidecar::core::model::{Probe, ProbeState};
use debug_sidecar::workspace::snippet::{snippet, SnippetInput};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use support::{has_command, installed_tool};

fn probe(extension: &str) -> Probe {
    Probe {
        id: "p7".into(),
        file: format!("src/app.{extension}"),
        line: Some(4),
        round: 1,
        hypothesis_id: Some("H1".into()),
        language: None,
        state: ProbeState::Issued,
        trace: None,
        kind: Default::default(),
        logpoint: None,
    }
}

/// The block for `language`, logging `count` and `name` into `log`.
fn block(language: &str, extension: &str, log: &Path, indent: &str) -> String {
    block_as(language, extension, log, indent, None)
}

/// `block`, or with `post_to` the block that posts to that URL (a program
/// in a container's).
fn block_as(
    language: &str,
    extension: &str,
    log: &Path,
    indent: &str,
    post_to: Option<&str>,
) -> String {
    let probe = probe(extension);
    let text = snippet(
        language,
        &SnippetInput {
            probe: &probe,
            session_id: "s-demo",
            session_tag: "s-demo",
            log_file: log.to_str().unwrap(),
            message: "count and name before the total",
            variables: &["count", "name"],
            ingest_url: post_to,
            post: post_to.is_some(),
        },
    )
    .unwrap();
    text.lines()
        .map(|line| format!("{indent}{line}\n"))
        .collect()
}

/// A fresh folder for one case.
struct Project {
    dir: PathBuf,
}

impl Project {
    fn new(name: &str) -> Project {
        // Not under /tmp: a path there is a finding of its own (ruff's S108).
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("ds-strict-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Project { dir }
    }

    fn write(&self, file: &str, text: &str) {
        std::fs::write(self.dir.join(file), text).unwrap();
    }

    fn log(&self) -> PathBuf {
        self.dir.join("probe.jsonl")
    }

    /// Runs `program args` in the folder; panics with its output unless it
    /// exits 0.
    fn pass(&self, what: &str, program: &Path, args: &[&str]) {
        let out = Command::new(program)
            .args(args)
            .current_dir(&self.dir)
            .env("NO_COLOR", "1")
            .output()
            .unwrap_or_else(|e| panic!("{what}: {} did not start: {e}", program.display()));
        assert!(
            out.status.success(),
            "{what} failed ({}):\n{}{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }

    /// Writes `file` as `program` without the block, then with `block`,
    /// running `check` on each (a failure before the block is the
    /// project's, not the block's).
    fn checked(
        &self,
        file: &str,
        program: impl Fn(&str) -> String,
        block: &str,
        check: impl Fn(&str),
    ) {
        self.write(file, &program(""));
        check("before the block");
        self.write(file, &program(block));
        check("with the block");
    }

    /// The probe's one line, with `count` and `name` as the program had them.
    fn assert_logged(&self) {
        let text = std::fs::read_to_string(self.log()).expect("the block wrote its line");
        let lines: Vec<Value> = text
            .lines()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        assert_eq!(lines.len(), 1, "{text}");
        assert_eq!(lines[0]["probeId"], "p7");
        assert_eq!(lines[0]["data"]["count"], 3, "{text}");
        assert_eq!(lines[0]["data"]["name"], "cart", "{text}");
        std::fs::remove_file(self.log()).unwrap();
    }

    /// The probe's one line, where the language writes every value as a
    /// string (a shell's).
    fn assert_logged_as_text(&self) {
        let text = std::fs::read_to_string(self.log()).expect("the block wrote its line");
        let line: Value = serde_json::from_str(text.trim()).unwrap();
        assert_eq!(line["probeId"], "p7");
        assert_eq!(line["data"]["count"], "3", "{text}");
        assert_eq!(line["data"]["name"], "cart", "{text}");
        std::fs::remove_file(self.log()).unwrap();
    }
}

impl Drop for Project {
    fn drop(&mut self) {
        if !std::thread::panicking() {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// The pinned JavaScript tools' node_modules, or None (skipped) outside
/// `scripts/test`.
fn node_modules() -> Option<PathBuf> {
    installed_tool("DEBUG_SIDECAR_LINT_JS").map(PathBuf::from)
}

fn node() -> PathBuf {
    PathBuf::from("node")
}

/// A function whose variables the block logs, before and after it.
fn js_program(blocks: &str, typed: bool) -> String {
    let (prices, returns) = if typed {
        (": number[]", ": number")
    } else {
        ("", "")
    };
    format!(
        "export function total(prices{prices}){returns} {{\n  const count = prices.length;\n  const name = \"cart\";\n{blocks}  return count + name.length;\n}}\n"
    )
}

const ESLINT_JS: &str = r#"import js from "@eslint/js";
import globals from "globals";
export default [
  js.configs.recommended,
  { files: ["**/*.js"], languageOptions: { sourceType: "SOURCE", globals: {} } },
  { linterOptions: { reportUnusedDisableDirectives: "error" } },
];
"#;

/// JavaScript as CommonJS and as an ES module: ESLint's recommended set (no
/// Node globals declared, unused disable directives as errors), prettier,
/// and the block writes its line when Node runs it.
#[test]
fn javascript_blocks_pass_eslint_recommended_and_prettier() {
    let Some(modules) = node_modules() else {
        return;
    };
    for (kind, source_type) in [("module", "module"), ("commonjs", "commonjs")] {
        let project = Project::new(&format!("js-{kind}"));
        std::os::unix::fs::symlink(&modules, project.dir.join("node_modules")).unwrap();
        project.write(
            "package.json",
            &format!("{{\"name\": \"app\", \"private\": true, \"type\": \"{kind}\"}}\n"),
        );
        project.write(
            "eslint.config.mjs",
            &ESLINT_JS
                .replace("SOURCE", source_type)
                .replace("import globals from \"globals\";\n", ""),
        );
        let program = |blocks: &str| {
            let text = js_program(blocks, false);
            if kind == "commonjs" {
                text.replace("export function total", "function total")
                    + "module.exports = { total };\n"
            } else {
                text
            }
        };
        let eslint = modules.join("eslint/bin/eslint.js");
        let prettier = modules.join("prettier/bin/prettier.cjs");
        let check = |what: &str| {
            project.pass(
                &format!("{what}: eslint ({kind})"),
                &node(),
                &[eslint.to_str().unwrap(), "--max-warnings", "0", "app.js"],
            );
            project.pass(
                &format!("{what}: prettier --check ({kind})"),
                &node(),
                &[prettier.to_str().unwrap(), "--check", "app.js"],
            );
        };
        project.checked(
            "app.js",
            program,
            &block("javascript", "js", &project.log(), "  "),
            check,
        );
        let runner = if kind == "commonjs" {
            "require('./app.js').total([1, 2, 3]);"
        } else {
            "import('./app.js').then((m) => m.total([1, 2, 3]));"
        };
        project.pass("node runs it", &node(), &["-e", runner]);
        project.assert_logged();
    }
}

const TSCONFIG: &str = r#"{
  "compilerOptions": {
    "target": "es2022",
    "module": "nodenext",
    "moduleResolution": "nodenext",
    "lib": ["es2022"],
    "types": TYPES,
    "strict": true,
    "noUnusedLocals": true,
    "noUnusedParameters": true,
    "noImplicitReturns": true,
    "noUncheckedIndexedAccess": true,
    "exactOptionalPropertyTypes": true,
    "noPropertyAccessFromIndexSignature": true,
    "verbatimModuleSyntax": true,
    "outDir": "out",
    "skipLibCheck": true
  },
  "files": ["app.ts"]
}
"#;

const ESLINT_TS: &str = r#"import js from "@eslint/js";
import tseslint from "typescript-eslint";
export default tseslint.config(
  js.configs.recommended,
  tseslint.configs.strictTypeChecked,
  tseslint.configs.stylisticTypeChecked,
  {
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    linterOptions: { reportUnusedDisableDirectives: "error" },
  },
);
"#;

/// TypeScript with and without Node's types (a library, page code):
/// `tsc --strict` and the strictest flags, typescript-eslint's
/// `strictTypeChecked` and `stylisticTypeChecked`, prettier; the compiled
/// block writes its line.
#[test]
fn typescript_blocks_pass_tsc_strict_typescript_eslint_and_prettier() {
    let Some(modules) = node_modules() else {
        return;
    };
    for (kind, types) in [
        ("node-types", "[\"node\"]"),
        ("no-types", "[]"),
        ("page", "[]"),
    ] {
        let project = Project::new(&format!("ts-{kind}"));
        std::os::unix::fs::symlink(&modules, project.dir.join("node_modules")).unwrap();
        project.write(
            "package.json",
            "{\"name\": \"app\", \"private\": true, \"type\": \"module\"}\n",
        );
        let tsconfig = TSCONFIG.replace("TYPES", types);
        let tsconfig = if kind == "page" {
            tsconfig.replace("[\"es2022\"]", "[\"es2022\", \"dom\"]")
        } else {
            tsconfig
        };
        project.write("tsconfig.json", &tsconfig);
        project.write("eslint.config.mjs", ESLINT_TS);
        let tsc = modules.join("typescript/bin/tsc");
        let eslint = modules.join("eslint/bin/eslint.js");
        let prettier = modules.join("prettier/bin/prettier.cjs");
        let check = |what: &str| {
            project.pass(
                &format!("{what}: tsc ({kind})"),
                &node(),
                &[tsc.to_str().unwrap(), "-p", "."],
            );
            project.pass(
                &format!("{what}: eslint ({kind})"),
                &node(),
                &[eslint.to_str().unwrap(), "--max-warnings", "0", "app.ts"],
            );
            project.pass(
                &format!("{what}: prettier --check ({kind})"),
                &node(),
                &[prettier.to_str().unwrap(), "--check", "app.ts"],
            );
        };
        project.write("app.ts", &js_program("", true));
        check("before the block");
        if kind == "page" {
            // Page code: the block that posts, with its failure said.
            let posting = block_as(
                "browser",
                "ts",
                &project.log(),
                "  ",
                Some("http://127.0.0.1:9/ingest/t0k"),
            );
            project.write("app.ts", &js_program(&posting, true));
            check("with the page's block");
            continue;
        }
        project.write(
            "app.ts",
            &js_program(&block("typescript", "ts", &project.log(), "  "), true),
        );
        check("with the block");
        project.pass(
            "node runs the compiled block",
            &node(),
            &[
                "-e",
                "import('./out/app.js').then((m) => m.total([1, 2, 3]));",
            ],
        );
        project.assert_logged();
    }
}

/// The pinned Python tools' bin folder, or None (skipped) outside
/// `scripts/test`.
fn python_tools() -> Option<PathBuf> {
    installed_tool("DEBUG_SIDECAR_LINT_PY").map(PathBuf::from)
}

/// Rules of ruff's `--select ALL` that no block can satisfy, and why:
/// - D100, D103: the person's module and function have no docstrings (not
///   the block's lines);
/// - CPY001: no copyright header (the person's file);
/// - INP001: the file is not in a package (the person's layout);
/// - E501: a block's lines hold the absolute log path and the message, so
///   they are long, and a `# noqa: E501` on them is itself reported by
///   ruff's default set (RUF100: a code the set does not enable). flake8's
///   E501 (79 columns) is left out for the same reason.
const RUFF_ALL_LESS: &str = "D100,D103,CPY001,INP001,E501";

/// The block in a function and in an `async def`, and the block that posts
/// (a program in a container's) in a third function.
fn python_program(blocks: &str, posting: &str) -> String {
    let body = |blocks: &str| {
        format!(
            "    count = len(prices)\n    name = \"cart\"\n{blocks}    return count + len(name)\n"
        )
    };
    format!(
        "from __future__ import annotations\n\n\ndef total(prices: list[int]) -> int:\n{}\n\nasync def total_later(prices: list[int]) -> int:\n{}\n\ndef total_posted(prices: list[int]) -> int:\n{}",
        body(blocks),
        body(blocks),
        body(posting)
    )
}

/// Python: ruff's default and `--select ALL` (less RUFF_ALL_LESS), flake8,
/// pylint, mypy `--strict`, pyright strict, `ruff format --check`, for
/// Python 3.8 (mypy: 3.10, the oldest it checks) and 3.12; the block writes
/// its line in a function and in an `async def`.
#[test]
fn python_blocks_pass_ruff_flake8_pylint_mypy_pyright_and_ruff_format() {
    let (Some(bin), Some(modules)) = (python_tools(), node_modules()) else {
        return;
    };
    let project = Project::new("python");
    let pyright = modules.join("pyright/index.js");
    // The oldest Python each checker still targets (mypy 2 starts at 3.10)
    // and a current one: (ruff's target, pyright's, mypy's).
    const TARGETS: [(&str, &str, &str); 2] = [("py38", "3.8", "3.10"), ("py312", "3.12", "3.12")];
    let check = |what: &str| {
        for (ruff_target, pyright_target, mypy_target) in TARGETS {
            check_python(
                &project,
                &bin,
                &pyright,
                what,
                ruff_target,
                pyright_target,
                mypy_target,
            );
        }
    };
    project.write("app.py", &python_program("", ""));
    check("before the block");
    // Posted to a port nothing listens on: lost, quietly.
    let posting = block_as(
        "python",
        "py",
        &project.log(),
        "    ",
        Some("http://127.0.0.1:9/ingest/t0k"),
    );
    project.write(
        "app.py",
        &python_program(&block("python", "py", &project.log(), "    "), &posting),
    );
    check("with the block");
    project.pass(
        "python runs it",
        &bin.join("python"),
        &[
            "-c",
            "import asyncio, app; app.total([1, 2, 3]); asyncio.run(app.total_later([1, 2, 3])); app.total_posted([1])",
        ],
    );
    let text = std::fs::read_to_string(project.log()).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    std::fs::write(
        project.log(),
        text.lines().next().unwrap().to_string() + "\n",
    )
    .unwrap();
    project.assert_logged();
}

/// One pass of every Python checker over app.py, for one target version.
fn check_python(
    project: &Project,
    bin: &Path,
    pyright: &Path,
    what: &str,
    ruff_target: &str,
    pyright_target: &str,
    mypy_target: &str,
) {
    let tool = |name: &str| bin.join(name);
    let what = format!("{what} (Python {pyright_target})");
    project.write(
        "pyrightconfig.json",
        &format!(
            "{{\"typeCheckingMode\": \"strict\", \"pythonVersion\": \"{pyright_target}\", \"include\": [\"app.py\"]}}\n"
        ),
    );
    project.pass(
        &format!("{what}: ruff check"),
        &tool("ruff"),
        &[
            "check",
            "--no-cache",
            "--target-version",
            ruff_target,
            "app.py",
        ],
    );
    project.pass(
        &format!("{what}: ruff check --select ALL"),
        &tool("ruff"),
        &[
            "check",
            "--no-cache",
            "--target-version",
            ruff_target,
            "--select",
            "ALL",
            "--ignore",
            RUFF_ALL_LESS,
            "app.py",
        ],
    );
    project.pass(
        &format!("{what}: flake8"),
        &tool("flake8"),
        &["--extend-ignore", "E501", "app.py"],
    );
    project.pass(
        &format!("{what}: pylint"),
        &tool("pylint"),
        &[
            "--disable=missing-module-docstring,missing-function-docstring",
            "app.py",
        ],
    );
    project.pass(
        &format!("{what}: mypy --strict"),
        &tool("mypy"),
        &[
            "--strict",
            "--no-incremental",
            "--python-version",
            mypy_target,
            "app.py",
        ],
    );
    project.pass(
        &format!("{what}: pyright strict"),
        &node(),
        &[pyright.to_str().unwrap(), "app.py"],
    );
    project.pass(
        &format!("{what}: ruff format --check"),
        &tool("ruff"),
        &[
            "format",
            "--no-cache",
            "--check",
            "--target-version",
            ruff_target,
            "app.py",
        ],
    );
}

/// A Debian tool `scripts/snippet-toolchains` installs; under CI it must be
/// there.
fn debian_tool(name: &str) -> Option<PathBuf> {
    has_command(name).then(|| PathBuf::from(name))
}

/// Shell: shellcheck's default and `-o all` (every optional check), as sh,
/// bash and ksh (shellcheck has no zsh), in a script under `set -eu`; the
/// block writes its line.
#[test]
fn shell_blocks_pass_shellcheck_with_every_optional_check() {
    let Some(shellcheck) = debian_tool("shellcheck") else {
        return;
    };
    let project = Project::new("shell");
    let program = |blocks: &str| {
        format!("#!/bin/sh\nset -eu\ncount=3\nname=cart\n{blocks}echo \"${{count}} ${{name}}\"\n")
    };
    let check = |what: &str| {
        for shell in ["sh", "bash", "ksh"] {
            project.pass(
                &format!("{what}: shellcheck -s {shell}"),
                &shellcheck,
                &["-s", shell, "app.sh"],
            );
            project.pass(
                &format!("{what}: shellcheck -o all -s {shell}"),
                &shellcheck,
                &["-o", "all", "-s", shell, "app.sh"],
            );
        }
    };
    project.checked(
        "app.sh",
        program,
        &block("shell", "sh", &project.log(), ""),
        check,
    );
    project.pass("sh runs it", Path::new("sh"), &["app.sh"]);
    project.assert_logged_as_text();
}

/// Ruby: RuboCop's default configuration (every cop it enables) with the
/// block in a method. Left out: Metrics/MethodLength, which counts the
/// block's lines in the person's method (10 by default), so no block can keep
/// a method under it.
#[test]
fn ruby_blocks_pass_rubocop() {
    let (Some(rubocop), Some(_)) = (debian_tool("rubocop"), debian_tool("ruby")) else {
        return;
    };
    let project = Project::new("ruby");
    project.write(
        ".rubocop.yml",
        "# The block's lines count in the method's length: left out.\nMetrics/MethodLength:\n  Enabled: false\n",
    );
    let program = |blocks: &str| {
        format!(
            "# frozen_string_literal: true\n\n# The cart's total.\ndef total(prices)\n  count = prices.length\n  name = 'cart'\n{blocks}  count + name.length\nend\n"
        )
    };
    let check = |what: &str| {
        project.pass(
            &format!("{what}: rubocop"),
            &rubocop,
            &["--cache", "false", "app.rb"],
        );
    };
    project.checked(
        "app.rb",
        program,
        &block("ruby", "rb", &project.log(), "  "),
        check,
    );
    project.pass(
        "ruby runs it",
        Path::new("ruby"),
        &["-e", "require './app'; total([1, 2, 3])"],
    );
    project.assert_logged();
}

/// PHP: PHP_CodeSniffer's PSR-12 standard, warnings included (its line
/// length is one); the block writes its line.
#[test]
fn php_blocks_pass_phpcs_psr12() {
    let (Some(phpcs), Some(_)) = (debian_tool("phpcs"), debian_tool("php")) else {
        return;
    };
    let project = Project::new("php");
    let program = |blocks: &str| {
        format!(
            "<?php\n\ndeclare(strict_types=1);\n\nfunction total(array $prices): int\n{{\n    $count = count($prices);\n    $name = 'cart';\n{blocks}    return $count + strlen($name);\n}}\n"
        )
    };
    let check = |what: &str| {
        project.pass(
            &format!("{what}: phpcs --standard=PSR12"),
            &phpcs,
            &["--standard=PSR12", "app.php"],
        );
    };
    project.checked(
        "app.php",
        program,
        &block("php", "php", &project.log(), "    "),
        check,
    );
    project.pass(
        "php runs it",
        Path::new("php"),
        &["-r", "require 'app.php'; total([1, 2, 3]);"],
    );
    project.assert_logged();
}

/// The text of a Go file whose probe imports `check` reports unused, with
/// those import lines dropped (what a person does with the report).
fn without_lines(text: &str, lines: &[u32]) -> String {
    text.lines()
        .enumerate()
        .filter(|(i, _)| !lines.contains(&(*i as u32 + 1)))
        .map(|(_, line)| format!("{line}\n"))
        .collect()
}

/// Go: gofmt, `go vet` and staticcheck (Debian's build, every check it
/// enables by default) with the block, which builds and writes its line;
/// after the block is removed, the imports it needed are the ones
/// `unused_probe_imports` names, and dropping them builds again.
#[test]
fn go_blocks_pass_gofmt_vet_and_staticcheck_and_leave_no_import_behind() {
    let (Some(go), Some(gofmt), Some(staticcheck)) = (
        debian_tool("go"),
        debian_tool("gofmt"),
        debian_tool("go-staticcheck"),
    ) else {
        return;
    };
    let project = Project::new("go");
    project.write("go.mod", "module example.com/app\n\ngo 1.19\n");
    let program = |imports: &str, blocks: &str| {
        format!(
            "// Package main totals a cart.\npackage main\n\nimport (\n{imports})\n\nfunc total(prices []int) int {{\n\tcount := len(prices)\n\tname := \"cart\"\n{blocks}\treturn count + len(name)\n}}\n\nfunc main() {{\n\tfmt.Println(total([]int{{1, 2, 3}}))\n}}\n"
        )
    };
    let cache = project.dir.join("go-cache");
    let check = |what: &str| {
        let out = Command::new(&gofmt)
            .args(["-l", "main.go"])
            .current_dir(&project.dir)
            .output()
            .unwrap();
        assert!(
            out.status.success() && out.stdout.is_empty(),
            "{what}: gofmt -l lists main.go:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for (name, tool, args) in [
            ("go vet", &go, &["vet", "."][..]),
            ("go build", &go, &["build", "-o", "app", "."][..]),
            ("staticcheck", &staticcheck, &["./..."][..]),
        ] {
            let out = Command::new(tool)
                .args(args)
                .current_dir(&project.dir)
                .env("GOCACHE", &cache)
                .env("GOFLAGS", "-mod=mod")
                .env("GOPROXY", "off")
                .env("XDG_CACHE_HOME", &cache)
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{what}: {name} failed:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
    };
    let fmt_only = "\t\"fmt\"\n";
    project.write("main.go", &program(fmt_only, ""));
    check("before the block");
    let imports = "\t\"encoding/json\"\n\t\"fmt\"\n\t\"os\"\n\t\"time\"\n";
    project.write(
        "main.go",
        &program(imports, &block("go", "go", &project.log(), "\t")),
    );
    check("with the block");
    project.pass("the program runs", &project.dir.join("app"), &[]);
    project.assert_logged();
    // The block removed, its imports stay: those, and only those, are named.
    let left = program(imports, "");
    let unused = debug_sidecar::core::go_imports::unused_probe_imports(&left);
    let named: Vec<&str> = unused.iter().map(|u| u.path).collect();
    assert_eq!(named, ["encoding/json", "os", "time"], "{left}");
    let lines: Vec<u32> = unused.iter().map(|u| u.line).collect();
    project.write("main.go", &without_lines(&left, &lines));
    check("after the block and the imports it named are removed");
}

/// Deno: `deno check`, `deno lint` (its recommended set) and `deno fmt
/// --check` with the block, in TypeScript and in JavaScript. Run with no
/// permission the program goes on as before, never waits at a prompt, logs
/// nothing and says so once on stderr with the flag, in a terminal too
/// (where a write without permission opens Deno's prompt); run with
/// `--allow-write` for the log, the block writes its line.
#[test]
fn deno_blocks_pass_check_lint_and_fmt_and_never_prompt() {
    let Some(modules) = node_modules() else {
        return;
    };
    let deno = modules.join(".bin/deno");
    let project = Project::new("deno");
    project.write("deno.json", "{}\n");
    let program = |blocks: &str, typed: bool| {
        let prices = if typed {
            "prices: number[]): number"
        } else {
            "prices)"
        };
        format!(
            "export function total({prices} {{\n  const count = prices.length;\n  const name = \"cart\";\n{blocks}  return count + name.length;\n}}\n\nconsole.log(total([1, 2, 3]));\nconsole.log(total([1, 2, 3]));\n"
        )
    };
    let run = |file: &str, permission: Option<&str>| {
        let mut command = Command::new(&deno);
        command.arg("run");
        command.args(permission);
        let out = command
            .arg(file)
            .current_dir(&project.dir)
            .env("DENO_DIR", project.dir.join("deno-cache"))
            .env("NO_COLOR", "1")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "deno run {file}: {out:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), "7\n7\n", "{out:?}");
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    for (file, typed) in [("app.ts", true), ("app.js", false)] {
        let check = |what: &str| {
            for args in [
                &["check", file][..],
                &["lint", file],
                &["fmt", "--check", file],
            ] {
                project.pass(&format!("{what}: deno {}", args[0]), &deno, args);
            }
        };
        let block = block_as("deno", "ts", &project.log(), "  ", None);
        project.checked(file, |blocks| program(blocks, typed), &block, check);
        let stderr = run(file, None);
        let warning = format!(
            "debug-sidecar: probe p7 logged nothing: run deno with --allow-write={}",
            project.log().display()
        );
        assert_eq!(stderr.matches(&warning).count(), 1, "{stderr}");
        assert!(!project.log().exists(), "written without permission");
        // In a terminal, where Deno would prompt and wait for an answer.
        if has_command("script") {
            let line = format!("'{}' run {file}", deno.display());
            let out = support::output_within_10s(
                Command::new("script")
                    .args(["-qec", &line, "/dev/null"])
                    .current_dir(&project.dir)
                    .env("DENO_DIR", project.dir.join("deno-cache"))
                    .env("NO_COLOR", "1")
                    .stdin(std::process::Stdio::piped()),
            );
            let seen = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success() && seen.contains(&warning), "{seen}");
            assert!(!project.log().exists(), "written without permission");
        }
        let allow = format!("--allow-write={}", project.log().display());
        let stderr = run(file, Some(&allow));
        assert!(stderr.is_empty(), "{stderr}");
        let text = std::fs::read_to_string(project.log()).unwrap();
        assert_eq!(text.lines().count(), 2, "{text}");
        std::fs::write(
            project.log(),
            text.lines().next().unwrap().to_string() + "\n",
        )
        .unwrap();
        project.assert_logged();
    }
}

/// Java: Checkstyle's Google configuration (Debian's Checkstyle and its
/// `google_checks.xml`), its findings as errors and its comment filters on
/// (the tree walker's and, for file-level checks such as the line length,
/// the plain-text one), as a project that uses Checkstyle has them; the
/// block keeps it off itself
/// with `// CHECKSTYLE:OFF` / `ON`, builds under `javac -Xlint:all -Werror`
/// and writes its line.
#[test]
fn java_blocks_pass_checkstyle_google_checks_and_javac_lint() {
    let (Some(checkstyle), Some(javac), Some(java)) = (
        debian_tool("checkstyle"),
        debian_tool("javac"),
        debian_tool("java"),
    ) else {
        return;
    };
    let project = Project::new("java");
    let google = std::fs::read_to_string("/usr/share/checkstyle/google_checks.xml").unwrap();
    let config = google
        .replace(
            "<property name=\"severity\" value=\"warning\"/>",
            "<property name=\"severity\" value=\"error\"/>",
        )
        .replace(
            "<module name = \"Checker\">",
            "<module name = \"Checker\">\n  <module name=\"SuppressWithPlainTextCommentFilter\"/>",
        )
        .replace(
            "<module name=\"TreeWalker\">",
            "<module name=\"TreeWalker\">\n    <module name=\"SuppressionCommentFilter\"/>",
        );
    assert_eq!(
        config.matches("CommentFilter\"/>").count(),
        2,
        "google_checks.xml changed its layout"
    );
    project.write("checks.xml", &config);
    let program = |blocks: &str| {
        format!(
            "/** Totals a cart. */\npublic final class Main {{\n  private Main() {{}}\n\n  /**\n   * Prints the total.\n   *\n   * @param args unused\n   */\n  public static void main(String[] args) {{\n    int count = 3;\n    String name = \"cart\";\n{blocks}    System.out.println(count + name.length());\n  }}\n}}\n"
        )
    };
    let check = |what: &str| {
        project.pass(
            &format!("{what}: checkstyle (google_checks, as errors)"),
            &checkstyle,
            &["-c", "checks.xml", "Main.java"],
        );
        project.pass(
            &format!("{what}: javac -Xlint:all -Werror"),
            &javac,
            &["-Xlint:all", "-Werror", "Main.java"],
        );
    };
    project.checked(
        "Main.java",
        program,
        &block("java", "java", &project.log(), "    "),
        check,
    );
    project.pass("java runs it", &java, &["Main"]);
    project.assert_logged();
}
