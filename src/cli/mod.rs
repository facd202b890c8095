//! The command-line face for people.

mod certificate;
mod check;
mod demo;
mod demo_logpoints;
mod evidence;
mod install;
mod install_check;
mod install_opencode;
mod run;
mod session;
mod status;

use crate::core::harness_memory::PersonCommandKind;
use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Debug, Parser)]
#[command(
    name = "debug-sidecar",
    version,
    about = "An evidence-first Debug Mode for coding agents"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Serve protocol v1 (LSP-framed JSON-RPC) on stdin/stdout for an editor
    /// or a harness shim. This is what runs when no command is given.
    Serve,
    /// Exit 1 and print `file:line: what` for every probe left in the tree
    /// (any session's, Cursor's, loopback ingest URLs); 0 when clean.
    Check {
        /// Files or directories to check (default: the current directory).
        paths: Vec<std::path::PathBuf>,
        /// Verify a fix certificate against this workspace instead: its
        /// content hash, no probe or fingerprint of its session in any file,
        /// and the run lines it cites, unchanged, where its runs are here.
        #[arg(long, value_name = "FILE", conflicts_with = "paths")]
        certificate: Option<std::path::PathBuf>,
        /// Print JSON instead of lines.
        #[arg(long)]
        json: bool,
    },
    /// Write the fix certificate of the latest session that ended with its
    /// cleanup verified: the problem, each hypothesis with its verdict and
    /// the run lines it cites, the runs before and after the fix with their
    /// hit tables, and the cleanup receipt, with a content hash that
    /// `check --certificate` verifies.
    Certificate {
        /// The workspace (default: the nearest folder up from here holding
        /// `.debug-sidecar/` or `.git`, else the current directory).
        #[arg(long)]
        workspace: Option<std::path::PathBuf>,
        /// The state directory (default: $DEBUG_SIDECAR_DIR, else <workspace>/.debug-sidecar).
        #[arg(long)]
        state_dir: Option<std::path::PathBuf>,
        /// Of this session (default: whichever ended last).
        #[arg(long)]
        session: Option<String>,
        /// Write it to this file instead of stdout.
        #[arg(long, value_name = "FILE")]
        out: Option<std::path::PathBuf>,
    },
    /// Serve MCP over stdio for an agent (tools, prompts, the blackboard).
    Mcp,
    /// A session's ingest listener for a target elsewhere (a container, an
    /// emulator, a device): started by the sidecar itself when a probe asks
    /// for that target, it ends with the session.
    #[command(hide = true)]
    IngestListen {
        #[arg(long)]
        workspace: std::path::PathBuf,
        #[arg(long)]
        state_dir: std::path::PathBuf,
        #[arg(long)]
        session: String,
        #[arg(long, value_parser = parse_target)]
        target: crate::core::target::Target,
        #[arg(long)]
        bind: std::net::IpAddr,
    },
    /// Run an ACP agent through Debug Mode: the editor launches
    /// `debug-sidecar acp -- <agent command...>` in place of the agent. The
    /// board rides in prompts, /debug commands join the agent's, and a turn
    /// that ends early is sent back, with no hooks.
    Acp {
        /// Follow-ups the proxy may send after one prompt of the person's
        /// (besides the round's own budgets); 0 never sends the agent back.
        #[arg(long, default_value_t = 3)]
        nudges: u32,
        /// The agent and its arguments, after `--`.
        #[arg(required = true, last = true)]
        command: Vec<String>,
    },
    /// Print the hook and MCP configuration for Claude Code, Codex, Gemini
    /// CLI or Copilot CLI (for OpenCode: its plugin and MCP server), or
    /// merge it into the project's config files with `--write`.
    Install {
        agent: install::Agent,
        #[arg(long)]
        write: bool,
        /// Check that the harness will load and run what `--write` wrote
        /// (the project's trust, the MCP server, the hooks); exit 1 if not.
        #[arg(long, conflicts_with = "write")]
        check: bool,
    },
    /// A command hook of Claude Code, Codex, Gemini CLI or Copilot CLI:
    /// reads the hook's JSON on stdin and prints the answer. Always exits
    /// 0; problems go to stderr.
    Hook {
        dialect: crate::hook::Dialect,
        /// SessionStart, UserPromptSubmit, PreToolUse, PostToolUse, Stop, ...
        /// (Gemini: BeforeAgent, BeforeTool, AfterTool, AfterAgent, ...)
        event: String,
    },
    /// List the workspace's debug sessions: stage, round, live probes, last activity.
    Status {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        place: Where,
    },
    /// Show a run's log lines (default: the current run of the most recent
    /// session), or `--summary` for per-probe figures.
    Logs {
        #[command(flatten)]
        place: Where,
        /// A run id (default: the session's current run).
        #[arg(long)]
        run: Option<String>,
        #[arg(long)]
        probe: Option<String>,
        #[arg(long)]
        hypothesis: Option<String>,
        /// Only lines containing this text.
        #[arg(long)]
        contains: Option<String>,
        /// At most this many lines (default 50, at most 500).
        #[arg(long)]
        limit: Option<usize>,
        /// Only lines after this one (a mark's line: `--summary` lists them).
        #[arg(long)]
        after_line: Option<u64>,
        /// Only lines before this one (a later mark's line).
        #[arg(long)]
        before_line: Option<u64>,
        /// Per-probe counts, first and last time, a few values, the marks.
        #[arg(long)]
        summary: bool,
        #[arg(long)]
        json: bool,
    },
    /// Mark this moment in the current run ("it happened right after I
    /// clicked Save"): the words that follow are kept with the time, and the
    /// agent can read what came before and after the mark.
    Mark {
        #[command(flatten)]
        place: Where,
        #[arg(trailing_var_arg = true)]
        words: Vec<String>,
    },
    /// Show the probe ledger, and what the last scan found beside it.
    Probes {
        #[command(flatten)]
        place: Where,
        /// Scan the workspace first.
        #[arg(long)]
        rescan: bool,
        #[arg(long)]
        json: bool,
    },
    /// Start a debug session on a problem (the words that follow).
    Start {
        #[command(flatten)]
        place: Where,
        #[command(flatten)]
        say: Say,
        /// What is wrong, as you see it.
        #[arg(required = true, trailing_var_arg = true)]
        problem: Vec<String>,
    },
    /// You reproduced it (Proceed): the round goes back to the agent with what
    /// you saw (the words that follow, optional).
    Proceed {
        #[command(flatten)]
        place: Where,
        #[command(flatten)]
        say: Say,
        #[arg(trailing_var_arg = true)]
        note: Vec<String>,
    },
    /// It is fixed (Mark fixed): the agent removes every probe. A bug that
    /// failed only some of the time needs a repeat since that fails
    /// significantly less (`run --repeat`), or --anyway.
    Done {
        #[command(flatten)]
        place: Where,
        #[command(flatten)]
        say: Say,
        /// Fixed, whatever the failure rate says (the note then starts with
        /// "fixed anyway").
        #[arg(long)]
        anyway: bool,
        #[arg(trailing_var_arg = true)]
        note: Vec<String>,
    },
    /// End the debug session now, listing any probe still on disk.
    Abort {
        #[command(flatten)]
        place: Where,
        #[command(flatten)]
        say: Say,
    },
    /// Run the reproduction and record it: `debug-sidecar run -- npm test`.
    /// The program runs in the workspace without a shell; its output reaches
    /// the terminal unchanged, and every stdout and stderr line and its exit
    /// status go into the session's current run, for the agent to read.
    /// Exits with the program's status (128+n for signal n).
    Run {
        #[command(flatten)]
        place: Where,
        /// Run it N times into the run (at most 1000) and say how often it
        /// failed, with a 95% interval: a flaky bug's rate.
        #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=1000))]
        repeat: u64,
        /// With --repeat: run J attempts at once (at most 32). Their output
        /// is recorded, each line with its attempt, and not shown.
        #[arg(long, value_name = "J", default_value_t = 1, requires = "repeat", value_parser = clap::value_parser!(u64).range(1..=32))]
        jobs: u64,
        /// With --repeat: stop at the first attempt that fails (with
        /// --jobs, attempts already running finish and count).
        #[arg(long, requires = "repeat")]
        until_fail: bool,
        /// The program and its arguments, after `--`.
        #[arg(required = true, last = true)]
        command: Vec<String>,
    },
    /// Run a whole scripted debug session on a bundled buggy program and show
    /// what an editor would display and what the model would be told.
    Demo {
        /// Keep the temporary workspace instead of deleting it.
        #[arg(long)]
        keep: bool,
        /// The Python twin, then the Node twin (with `node` on PATH), each
        /// debugged with logpoints only: no source edit but the fix (needs
        /// `python3`, 3.8 or newer).
        #[arg(long)]
        logpoints: bool,
    },
}

impl Cli {
    /// The process's command line. `hook <dialect> <event>`, which a
    /// harness starts on every event, is read without building clap's whole
    /// command tree (a fifth of a hook's instructions); any other shape,
    /// `--help` included, is clap's to read and answer.
    pub fn from_env() -> Cli {
        let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
        Cli::hook_command(&args).unwrap_or_else(|| Cli::parse_from(args))
    }

    /// `hook <dialect> <event>` exactly, as clap would read it.
    fn hook_command(args: &[std::ffi::OsString]) -> Option<Cli> {
        let [_, hook, dialect, event] = args else {
            return None;
        };
        let (dialect, event) = (dialect.to_str()?, event.to_str()?);
        if hook != "hook" || event.starts_with('-') {
            return None;
        }
        let dialect = <crate::hook::Dialect as clap::ValueEnum>::from_str(dialect, false).ok()?;
        Some(Cli {
            command: Some(Command::Hook {
                dialect,
                event: event.to_string(),
            }),
        })
    }

    /// Whether the command prints text for a person (tables, listings),
    /// rather than speaking a protocol on stdout.
    pub fn prints_for_a_person(&self) -> bool {
        !matches!(
            self.command,
            None | Some(Command::Serve)
                | Some(Command::Mcp)
                | Some(Command::Acp { .. })
                | Some(Command::Hook { .. })
                | Some(Command::IngestListen { .. })
                // Passes the program's output on: a closed stdout is the
                // program's to meet, and the exit record is still written.
                | Some(Command::Run { .. })
        )
    }
}

pub fn run(cli: Cli) -> anyhow::Result<ExitCode> {
    match cli.command {
        Some(Command::Demo { keep, logpoints }) => demo::run(keep, logpoints),
        Some(Command::Run {
            place,
            repeat,
            jobs,
            until_fail,
            command,
        }) => run::run(
            place,
            command,
            crate::workspace::reproduce::Repeat {
                times: repeat,
                jobs,
                until_fail,
            },
        ),
        Some(Command::Check {
            certificate: Some(file),
            json,
            ..
        }) => certificate::check(&file, json),
        Some(Command::Check { paths, json, .. }) => check::run(paths, json),
        Some(Command::Certificate {
            workspace,
            state_dir,
            session,
            out,
        }) => certificate::write(
            Where {
                workspace,
                state_dir,
                session,
            },
            out,
        ),
        Some(Command::Install {
            agent,
            write,
            check,
        }) => {
            if check {
                install_check::run(agent)
            } else {
                install::run(agent, write)
            }
        }
        Some(Command::Acp { nudges, command }) => crate::acp::run(nudges, command),
        Some(Command::Mcp) => {
            crate::mcp::serve_stdio()?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::IngestListen {
            workspace,
            state_dir,
            session,
            target,
            bind,
        }) => {
            crate::core::session_id::check_session_id(&session)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            crate::workspace::ingest::listener::serve(
                &workspace, &state_dir, &session, target, bind,
            )?;
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Hook { dialect, event })
            if dialect == crate::hook::Dialect::Claude && event == crate::hook::wake::EVENT =>
        {
            Ok(crate::hook::wake::run_stdio())
        }
        Some(Command::Hook { dialect, event }) => {
            crate::hook::run_stdio(dialect, &event);
            Ok(ExitCode::SUCCESS)
        }
        Some(Command::Status { json, place }) => status::run(place, json),
        Some(Command::Mark { place, words }) => evidence::mark(place, &words.join(" ")),
        Some(Command::Start {
            place,
            say,
            problem,
        }) => session::run(place, say, PersonCommandKind::Start, problem),
        Some(Command::Proceed { place, say, note }) => {
            session::run(place, say, PersonCommandKind::Proceed, note)
        }
        Some(Command::Done {
            place,
            say,
            anyway,
            mut note,
        }) => {
            if anyway {
                note.insert(0, crate::core::text::FIXED_ANYWAY.to_string());
            }
            session::run(place, say, PersonCommandKind::Done, note)
        }
        Some(Command::Abort { place, say }) => {
            session::run(place, say, PersonCommandKind::Abort, vec![])
        }
        Some(Command::Logs {
            place,
            run,
            probe,
            hypothesis,
            contains,
            limit,
            after_line,
            before_line,
            summary,
            json,
        }) => evidence::logs(
            place,
            evidence::LogsArgs {
                after_line,
                before_line,
                run,
                probe,
                hypothesis,
                contains,
                limit,
                summary,
                json,
            },
        ),
        Some(Command::Probes {
            place,
            rescan,
            json,
        }) => evidence::probes(place, rescan, json),
        Some(Command::Serve) | None => {
            let code = crate::rpc::serve_stdio()?;
            // Exit at once: the runtime's stdin reader is a blocking thread
            // that would keep the process alive while the client holds the pipe.
            std::process::exit(code)
        }
    }
}

fn parse_target(text: &str) -> Result<crate::core::target::Target, String> {
    crate::core::target::Target::parse(text).ok_or_else(|| format!("no target `{text}`"))
}

/// What a person's command prints.
#[derive(clap::Args, Debug, Clone, Copy)]
pub struct Say {
    /// Also print the text the agent's next turn starts from, to paste into
    /// an agent that has none of debug-sidecar's hooks or commands.
    #[arg(long)]
    pub kickoff: bool,
}

/// Which workspace, state directory and session a command for people reads.
#[derive(Debug, Clone, clap::Args)]
pub struct Where {
    /// The workspace (default: the nearest folder up from here holding
    /// `.debug-sidecar/` or `.git`, else the current directory).
    #[arg(long)]
    pub workspace: Option<std::path::PathBuf>,
    /// The state directory (default: $DEBUG_SIDECAR_DIR, else <workspace>/.debug-sidecar).
    #[arg(long)]
    pub state_dir: Option<std::path::PathBuf>,
    /// The session (default: the most recently active one).
    #[arg(long)]
    pub session: Option<String>,
}

impl Where {
    /// An engine on the workspace's saved state, and the session meant.
    fn open(self) -> anyhow::Result<(crate::engine::Engine, String)> {
        let named = self.session.clone();
        let mut engine = self.engine()?;
        let session = engine.resolve(named.as_deref())?;
        Ok((engine, session))
    }

    /// An engine on the workspace's saved state.
    fn engine(self) -> anyhow::Result<crate::engine::Engine> {
        let root = match self.workspace {
            Some(root) => root,
            // From a subfolder, the workspace the agent's faces use too.
            None => crate::engine::workspace_root(&std::env::current_dir()?),
        };
        let config = crate::engine::EngineConfig::for_workspace(root, self.state_dir)?;
        let store = crate::workspace::committed::open_store(&config.root, &config.state_dir);
        Ok(crate::engine::Engine::new(config, store))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(words: &[&str]) -> Vec<std::ffi::OsString> {
        words.iter().map(Into::into).collect()
    }

    #[test]
    fn a_hook_read_without_clap_is_what_clap_reads() {
        for words in [
            ["debug-sidecar", "hook", "claude", "UserPromptSubmit"],
            ["debug-sidecar", "hook", "codex", "Stop"],
            ["debug-sidecar", "hook", "gemini", "AfterAgent"],
            ["debug-sidecar", "hook", "copilot", "preToolUse"],
            ["debug-sidecar", "hook", "claude", "NoSuchEvent"],
        ] {
            let fast = Cli::hook_command(&args(&words)).expect("read without clap");
            let clap = Cli::try_parse_from(args(&words)).expect("clap reads it");
            assert_eq!(format!("{fast:?}"), format!("{clap:?}"), "{words:?}");
        }
    }

    #[test]
    fn any_other_command_line_is_left_to_clap() {
        for words in [
            &["debug-sidecar", "hook", "--help"][..],
            &["debug-sidecar", "hook", "claude"],
            &["debug-sidecar", "hook", "Claude", "Stop"],
            &["debug-sidecar", "hook", "vim", "Stop"],
            &["debug-sidecar", "hook", "claude", "--help"],
            &["debug-sidecar", "hook", "claude", "Stop", "extra"],
            &["debug-sidecar", "status", "claude", "Stop"],
            &["debug-sidecar"],
        ] {
            assert!(Cli::hook_command(&args(words)).is_none(), "{words:?}");
        }
    }
}
