//! What a call of each tool does and the text it answers: the same for
//! every face. An illegal command or bad arguments are an error answer the
//! model can act on, never a protocol error.

use super::RUN_REPRODUCTION;
use crate::core::budget::{self, LOG_PAGE};
use crate::core::escape::{inline_cut, scrub};
use crate::core::harness_memory::PersonCommandKind;
use crate::core::machine::HandOff;
use crate::core::reproduction::{self, RunReport, AGENT_RUN_CAP};
use crate::core::snapshot::Snapshot;
use crate::core::text;
use crate::engine::owner::Owner;
use crate::engine::{tool_results, Engine, EngineError};
use crate::protocol::{
    HandOffParams, LogSummaryParams, LogsParams, ProbeSnippetParams, ProbesParams,
    RecordHypothesesParams, RemoveLogpointsParams, RunReproductionParams, StartParams,
};
use crate::workspace::reproduce::{self, Limits};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

/// A tool's answer: the text the model reads, at the tool-result cap, and
/// whether it is an error.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolAnswer {
    pub text: String,
    pub is_error: bool,
}

impl ToolAnswer {
    pub fn of(result: Result<String, String>) -> Self {
        match result {
            Ok(text) => ToolAnswer {
                text: budget::fit(text, budget::TOOL_RESULT, ""),
                is_error: false,
            },
            // An error can quote what the model sent: escaped, and held to the cap too.
            Err(message) => ToolAnswer {
                text: budget::fit(scrub(&message), budget::TOOL_RESULT, ""),
                is_error: true,
            },
        }
    }
}

/// A tool call begun: answered already, or the agent's run of the program,
/// prepared on the owner and still to run (`Reproduction::answer`, which
/// blocks for as long as the program runs: a face runs it off the thread
/// that reads its requests).
pub enum Begun {
    Answered(ToolAnswer),
    Running(Box<Reproduction>),
}

/// `call`, except that `run_reproduction` comes back prepared, not run.
pub fn begin(
    owner: &Owner,
    session: Option<&str>,
    name: &str,
    arguments: Option<Map<String, Value>>,
) -> Begun {
    if name != RUN_REPRODUCTION {
        return Begun::Answered(call(owner, session, name, arguments));
    }
    let begun = parse(arguments).and_then(|p| Call { owner, session }.begin_reproduction(p));
    match begun {
        Ok(run) => Begun::Running(Box::new(run)),
        Err(message) => Begun::Answered(ToolAnswer::of(Err(message))),
    }
}

/// The agent's run of the program, its run named and the link lent to it.
pub struct Reproduction {
    owner: Owner,
    command: Vec<String>,
    timeout: std::time::Duration,
    /// Attempts to run (1 unless `repeat` asked for more).
    repeat: u64,
    target: reproduce::Target,
    root: std::path::PathBuf,
    live: Vec<crate::core::model::Probe>,
}

impl Reproduction {
    /// Runs the program off the owner (within its caps), then records the
    /// run's end through the owner, which gives `active.jsonl` back: the
    /// tool's answer.
    pub fn answer(self) -> ToolAnswer {
        ToolAnswer::of(self.finish())
    }

    fn finish(self) -> Result<String, String> {
        let limits = Limits {
            run_bytes: AGENT_RUN_CAP,
            timeout: Some(self.timeout),
            pass_through: false,
            stdin: false,
            attempt: None,
        };
        // Python and Node programs run under their debugger when the session has logpoints.
        let mut endings = Vec::new();
        let outcome = reproduce::repeated(
            &self.command,
            &self.root,
            &self.root,
            &self.live,
            &self.target,
            &limits,
            reproduce::Repeat {
                times: self.repeat,
                jobs: 1,
                until_fail: false,
            },
            |progress| {
                if let reproduce::Progress::Ended(_, report) = progress {
                    endings.push(report.ending);
                }
            },
        );
        let ended = self.target.clone();
        let counted = self
            .owner
            .ask(move |engine, now| engine.end_run(&ended, now));
        match counted {
            Ok(Ok(())) => {}
            Ok(Err(error)) => tracing::warn!("the agent run's end was not recorded: {error}"),
            Err(error) => tracing::warn!("the agent run's end was not recorded: {error}"),
        }
        outcome
            .map(|(report, attempts): (RunReport, _)| {
                let mut answer = text::agent_run_result(&report);
                if self.repeat > 1 {
                    answer.push_str(&text::agent_repeat_result(attempts, &endings));
                }
                answer
            })
            .map_err(|error| error.to_string())
    }
}

/// Calls the tool `name` on the session `session` (None: the process's
/// default, else the most recently active).
pub fn call(
    owner: &Owner,
    session: Option<&str>,
    name: &str,
    arguments: Option<Map<String, Value>>,
) -> ToolAnswer {
    let call = Call { owner, session };
    let text = call.text(name, arguments);
    // A client that never reports a stop: the call that finds the cleanup
    // done ends the session, and its answer says so.
    let ended = call
        .run(|engine, session, now| engine.end_clean_cleanup(session, now))
        .ok()
        .flatten();
    ToolAnswer::of(match (text, ended) {
        (Ok(text), Some(summary)) => Ok(format!("{text}\n\n{summary}")),
        (Err(error), Some(summary)) => Err(format!("{error}\n\n{summary}")),
        (text, None) => text,
    })
}

/// `hand_off_to_user` alone: the snapshot after it, beside its text, for a
/// face that asks the person next (MCP's form).
pub fn hand_off(
    owner: &Owner,
    session: Option<&str>,
    arguments: Option<Map<String, Value>>,
) -> Result<(Snapshot, String), String> {
    let p: HandOffParams = parse(arguments)?;
    let hand_off = HandOff {
        mode: Some(p.mode.into()),
        steps: p.steps,
        plan: p.plan,
        hypotheses: p.hypotheses,
        message: p.message,
    };
    Call { owner, session }.run(move |engine, session, now| engine.hand_off(session, hand_off, now))
}

fn parse<T: DeserializeOwned>(arguments: Option<Map<String, Value>>) -> Result<T, String> {
    let value = Value::Object(arguments.unwrap_or_default());
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        if path == "." {
            format!("Invalid arguments: {}", e.inner())
        } else {
            format!("Invalid argument `{path}`: {}", e.inner())
        }
    })
}

struct Call<'a> {
    owner: &'a Owner,
    session: Option<&'a str>,
}

impl Call<'_> {
    /// A job on the session the call means.
    fn run<T>(
        &self,
        job: impl FnOnce(&mut Engine, &str, u64) -> Result<T, EngineError>,
    ) -> Result<T, String> {
        let requested = self.session.map(str::to_string);
        let answer = self.owner.ask(move |engine, now| {
            let session = engine.resolve(requested.as_deref())?;
            job(engine, &session, now)
        });
        match answer {
            Ok(Ok(value)) => Ok(value),
            Ok(Err(error)) => Err(error.to_string()),
            Err(failed) => Err(failed.to_string()),
        }
    }

    fn text(&self, name: &str, arguments: Option<Map<String, Value>>) -> Result<String, String> {
        match name {
            "hand_off_to_user" => {
                hand_off(self.owner, self.session, arguments).map(|(_, said)| said)
            }
            "start_debug_session" => {
                let p: StartParams = parse(arguments)?;
                self.person(PersonCommandKind::Start, Some(p.problem))
            }
            "probe_snippet" => {
                let p: ProbeSnippetParams = parse(arguments)?;
                let placed = self.run(move |engine, session, now| {
                    engine.probe_snippet(session, p.into_request(), now)
                })?;
                Ok(text::snippet_result(
                    &placed.probe,
                    placed.language,
                    &placed.snippet,
                    &placed.placement,
                    placed
                        .reached
                        .as_ref()
                        .map(|r| (r.target, r.listening.as_str())),
                    placed.runtime_note.as_deref(),
                ))
            }
            "remove_logpoints" => {
                let p: RemoveLogpointsParams = parse(arguments)?;
                let removed = self.run(move |engine, session, now| {
                    engine.remove_logpoints(session, p.probe_ids, now)
                })?;
                Ok(text::logpoints_removed(&removed))
            }
            "probe_ledger" => {
                let p: ProbesParams = parse(arguments)?;
                let ledger =
                    self.run(move |engine, session, now| engine.probes(session, p.rescan, now))?;
                Ok(tool_results::ledger(&ledger))
            }
            "read_logs" => {
                let p: LogsParams = parse(arguments)?;
                let run = p.run.clone();
                // A page fits the tool-result cap with room for its notes.
                let query = p.query(Some(LOG_PAGE));
                let logs = self
                    .run(move |engine, session, _| engine.logs(session, run.as_deref(), &query))?;
                Ok(tool_results::logs(&logs))
            }
            "log_summary" => {
                let p: LogSummaryParams = parse(arguments)?;
                let (target, summary) = self.run(move |engine, session, now| {
                    engine.log_summary(session, p.run.as_deref(), now)
                })?;
                Ok(tool_results::summary(target.run.as_deref(), &summary))
            }
            "record_hypotheses" => {
                let p: RecordHypothesesParams = parse(arguments)?;
                let snapshot = self.run(move |engine, session, now| {
                    engine.record_hypotheses(session, p.hypotheses, now)
                })?;
                Ok(tool_results::hypotheses(&snapshot.hypotheses))
            }
            "debug_status" => {
                let board =
                    self.run(|engine, session, now| Ok(engine.context(session, None, now)?.0))?;
                Ok(board.unwrap_or_else(|| text::NO_SESSION.into()))
            }
            RUN_REPRODUCTION => {
                let p: RunReproductionParams = parse(arguments)?;
                self.begin_reproduction(p)?.finish()
            }
            other => Err(format!("Unknown tool `{}`.", inline_cut(other, budget::ID))),
        }
    }

    /// The agent's own run, prepared: the engine names its run (refusing
    /// it unless the round is the agent's) and lends it `active.jsonl`.
    fn begin_reproduction(&self, p: RunReproductionParams) -> Result<Reproduction, String> {
        let (timeout, repeat) = reproduction::agent_attempts(p.timeout_sec, p.repeat)?;
        if p.command.first().is_none_or(|program| program.is_empty()) {
            return Err(
                "Invalid argument `command`: give the program and its arguments, \
                        e.g. [\"npm\", \"test\"]."
                    .into(),
            );
        }
        let (target, root, live) = self.run(move |engine, session, now| {
            let target = engine.begin_agent_run(session, timeout * repeat as u32, now)?;
            let live = engine.live_logpoints(session);
            // The link goes back at once when the run cannot go on.
            let live = live.inspect_err(|_| {
                let _ = engine.end_run(&target, now);
            })?;
            Ok((target, engine.config().root.clone(), live))
        })?;
        Ok(Reproduction {
            owner: self.owner.clone(),
            command: p.command,
            timeout,
            repeat,
            target,
            root,
            live,
        })
    }

    /// A person's command; the text the agent's turn goes on from.
    fn person(&self, kind: PersonCommandKind, words: Option<String>) -> Result<String, String> {
        let answer =
            self.run(move |engine, session, now| engine.person_command(session, kind, words, now))?;
        Ok(answer.kickoff.unwrap_or(answer.said))
    }
}

/// A person's command from a face (an MCP prompt): the text the agent's
/// turn goes on from.
pub fn person(
    owner: &Owner,
    session: Option<&str>,
    kind: PersonCommandKind,
    words: Option<String>,
) -> Result<String, String> {
    Call { owner, session }.person(kind, words)
}
