//! The hit table of a run (issue 31): per probe of the round, how many of
//! its lines carried values, and for a probe with none the one reason the
//! run's records support. Never a guess: every reason names the record or
//! the file time it rests on, and where the run holds nothing that tells,
//! the reason says that (`notRecorded`).

use super::escape::inline_cut;
use super::model::{Probe, ProbeState};
use super::reproduction::Ending;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Why a probe logged no value in a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema, Hash)]
#[serde(rename_all = "camelCase")]
pub enum NoHit {
    /// The recorded program ran (and ended normally, or other probes of
    /// the same file logged) without reaching the probe's line.
    NotReached,
    /// The probe's file changed after the recorded program started, or a
    /// compiled program's executable is older than the file.
    StaleBuild,
    /// The probe ran and recorded its own failure (an expression that
    /// raised, a value it could not serialize).
    ProbeFailed,
    /// The recorded program ended abnormally (status, signal, time cap)
    /// before any probe of the file logged.
    ExitedFirst,
    /// A logpoint the runtime never set.
    NotSet,
    /// The probe's block was never found in a file.
    NotOnDisk,
    /// No program was recorded in the run (`debug-sidecar run` records one):
    /// nothing the sidecar holds tells whether the code ran.
    NotRecorded,
}

impl NoHit {
    pub fn as_str(self) -> &'static str {
        match self {
            NoHit::NotReached => "notReached",
            NoHit::StaleBuild => "staleBuild",
            NoHit::ProbeFailed => "probeFailed",
            NoHit::ExitedFirst => "exitedFirst",
            NoHit::NotSet => "notSet",
            NoHit::NotOnDisk => "notOnDisk",
            NoHit::NotRecorded => "notRecorded",
        }
    }
}

/// A recorded program of the run, from its exit record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramEnd {
    /// When it started and ended (ms since the epoch).
    pub started_ms: u64,
    pub ended_ms: u64,
    pub ending: Ending,
    /// Its first word, as recorded (`./target/debug/app`, `python3`).
    pub executable: Option<String>,
    /// Its words as recorded, joined by spaces and cut.
    pub command: String,
    /// The exit record's line in the run's file.
    pub line: u64,
}

impl ProgramEnd {
    pub fn ended_normally(&self) -> bool {
        self.ending == Ending::Exited { code: 0 }
    }
}

/// What a run's records say beyond its probe lines.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RunFacts {
    /// The recorded programs, in the order they ended.
    pub programs: Vec<ProgramEnd>,
    /// Logpoints `run` could not set, with why (the runtime's words).
    pub not_set: BTreeMap<String, String>,
    /// Lines in which a probe recorded its own failure, and the first
    /// failure's words.
    pub failures: BTreeMap<String, (u64, String)>,
    /// Every recorded program of the run as an attempt of the reproduction.
    pub attempts: super::rates::Attempts,
}

/// What the workspace knows of one probe's file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FileTimes {
    /// When the probe's file last changed (ms since the epoch).
    pub changed_ms: Option<u64>,
    /// When the last recorded program's executable was built, when it is a
    /// file of the workspace.
    pub executable_built_ms: Option<u64>,
}

/// The verdict on a probe that logged no value: its reason, why in our
/// words (file names in them made inert), and the words of the record it
/// rests on when the program or its runtime wrote them (a failure, a
/// runtime's note): untrusted, shown only inside a fence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub reason: NoHit,
    pub why: String,
    pub evidence: Option<String>,
}

/// `probeFailed` for a probe whose lines in the run recorded its own
/// failure; None when none did.
pub fn failed_verdict(probe_id: &str, run: &RunFacts) -> Option<Verdict> {
    let (count, first) = run.failures.get(probe_id)?;
    Some(Verdict {
        reason: NoHit::ProbeFailed,
        why: format!("it ran and recorded its own failure {count} time(s)"),
        evidence: Some(first.clone()),
    })
}

/// Languages whose programs run what a build made, not the source.
fn compiled(language: Option<&str>) -> bool {
    matches!(
        language,
        Some("rust" | "go" | "c" | "cpp" | "java" | "kotlin" | "csharp" | "swift")
    )
}

/// How long `ms` is, for a reader: `40 ms`, `3.2 s`, `5 min`.
fn span(ms: u64) -> String {
    match ms {
        0..=999 => format!("{ms} ms"),
        1000..=59_999 => format!("{:.1} s", ms as f64 / 1000.0),
        _ => format!("{} min", ms / 60_000),
    }
}

/// Why `probe` logged no value in a run whose records are `run`; `hits` is
/// how many of its lines carried values, `file_logged` whether any probe of
/// the same file did. None when it has hits.
pub fn verdict(
    probe: &Probe,
    hits: u64,
    file_logged: bool,
    times: &FileTimes,
    run: &RunFacts,
) -> Option<Verdict> {
    if hits > 0 {
        return None;
    }
    let file = inline_cut(&probe.file, super::budget::LOCATION);
    let found = |reason, why: String| {
        Some(Verdict {
            reason,
            why,
            evidence: None,
        })
    };
    if let Some(note) = run.not_set.get(&probe.id) {
        return Some(Verdict {
            reason: NoHit::NotSet,
            why: "the runtime did not set it".to_string(),
            evidence: Some(note.clone()),
        });
    }
    if let Some(failed) = failed_verdict(&probe.id, run) {
        return Some(failed);
    }
    if probe.state == ProbeState::Issued && !probe.is_logpoint() {
        return found(
            NoHit::NotOnDisk,
            "its block was never found in a file: insert it (or rescan)".to_string(),
        );
    }
    let Some(program) = run.programs.last() else {
        return found(
            NoHit::NotRecorded,
            "no program was recorded in this run (a reproduction started with `debug-sidecar \
             run -- <command>` is), so nothing tells whether this code ran"
                .to_string(),
        );
    };
    // A file time after the program ended says nothing of the run (a later
    // edit, the fix itself): only a change before its end is evidence.
    let changed = times.changed_ms.filter(|c| *c <= program.ended_ms);
    if !probe.is_logpoint() {
        if let Some(changed) = changed.filter(|c| *c > program.started_ms) {
            return found(
                NoHit::StaleBuild,
                format!(
                    "{file} changed {} after the program started: it ran the code from before",
                    span(changed - program.started_ms)
                ),
            );
        }
        if compiled(probe.language.as_deref()) {
            if let (Some(built), Some(changed)) = (times.executable_built_ms, changed) {
                if built < changed {
                    let executable = program.executable.as_deref().unwrap_or("the program");
                    return found(
                        NoHit::StaleBuild,
                        format!(
                            "{} was built {} before {file} last changed: rebuild it",
                            inline_cut(executable, super::budget::LOCATION),
                            span(changed - built)
                        ),
                    );
                }
            }
        }
    }
    if !program.ended_normally() && !file_logged {
        return found(
            NoHit::ExitedFirst,
            format!(
                "the program {} after {} before any probe in {file} logged",
                program.ending.describe(),
                span(program.ended_ms.saturating_sub(program.started_ms))
            ),
        );
    }
    let how = if file_logged {
        format!("other probes in {file} logged, this line never ran")
    } else {
        "the program ended normally without running this line".to_string()
    };
    found(NoHit::NotReached, how)
}

/// A mark the person made in a run (`debug-sidecar mark`, an editor's Mark
/// action, a page's marker record): its line and words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarkSeen {
    pub line: u64,
    pub words: String,
}

/// A probe of a round that logged no value, as a kickoff lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoHitRow {
    pub probe_id: String,
    pub hypothesis_id: Option<String>,
    pub location: String,
    pub reason: NoHit,
    pub why: String,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::model::ProbeKind;

    fn probe(kind: ProbeKind, state: ProbeState, language: &str) -> Probe {
        Probe {
            id: "p1".into(),
            kind,
            file: "src/cart.py".into(),
            line: Some(4),
            round: 1,
            hypothesis_id: Some("H1".into()),
            language: Some(language.into()),
            state,
            trace: None,
            logpoint: None,
        }
    }

    fn program(code: i32) -> ProgramEnd {
        ProgramEnd {
            started_ms: 10_000,
            ended_ms: 10_120,
            ending: Ending::Exited { code },
            executable: Some("./app".into()),
            command: "./app".into(),
            line: 1,
        }
    }

    fn facts(programs: Vec<ProgramEnd>) -> RunFacts {
        RunFacts {
            programs,
            ..RunFacts::default()
        }
    }

    fn reason(probe: &Probe, file_logged: bool, times: FileTimes, run: &RunFacts) -> NoHit {
        verdict(probe, 0, file_logged, &times, run).unwrap().reason
    }

    #[test]
    fn each_reason_rests_on_its_record() {
        let source = probe(ProbeKind::Source, ProbeState::Live, "python");
        let logpoint = probe(ProbeKind::Logpoint, ProbeState::Live, "python");
        let none = FileTimes::default();
        assert!(verdict(&source, 2, false, &none, &RunFacts::default()).is_none());
        assert_eq!(
            reason(&source, false, none.clone(), &RunFacts::default()),
            NoHit::NotRecorded
        );
        assert_eq!(
            reason(&source, false, none.clone(), &facts(vec![program(0)])),
            NoHit::NotReached
        );
        assert_eq!(
            reason(&source, true, none.clone(), &facts(vec![program(1)])),
            NoHit::NotReached
        );
        let crashed = facts(vec![program(1)]);
        let v = verdict(&source, 0, false, &none, &crashed).unwrap();
        assert_eq!(v.reason, NoHit::ExitedFirst);
        assert_eq!(
            v.why,
            "the program exited with status 1 after 120 ms before any probe in src/cart.py logged"
        );
        let during = FileTimes {
            changed_ms: Some(10_050),
            executable_built_ms: None,
        };
        let v = verdict(&source, 0, false, &during, &crashed).unwrap();
        assert_eq!(
            (v.reason, v.why.as_str()),
            (
                NoHit::StaleBuild,
                "src/cart.py changed 50 ms after the program started: it ran the code from before"
            )
        );
        // A change after the program ended (the fix, a later probe) says
        // nothing of this run.
        let after = FileTimes {
            changed_ms: Some(13_500),
            executable_built_ms: Some(1_000),
        };
        assert_eq!(reason(&source, false, after, &crashed), NoHit::ExitedFirst);
        // A logpoint is set in the running code: its file's time says nothing.
        assert_eq!(
            reason(&logpoint, false, during, &facts(vec![program(0)])),
            NoHit::NotReached
        );
        let mut run = facts(vec![program(0)]);
        run.not_set
            .insert("p1".into(), "line 4 holds no code".into());
        assert_eq!(reason(&logpoint, false, none.clone(), &run), NoHit::NotSet);
        run.not_set.clear();
        run.failures.insert(
            "p1".into(),
            (3, "NameError: name 'x' is not defined".into()),
        );
        let v = verdict(&source, 0, false, &none, &run).unwrap();
        assert_eq!(v.why, "it ran and recorded its own failure 3 time(s)");
        assert_eq!(
            v.evidence.as_deref(),
            Some("NameError: name 'x' is not defined")
        );
        let issued = probe(ProbeKind::Source, ProbeState::Issued, "python");
        assert_eq!(
            reason(&issued, false, none, &facts(vec![program(0)])),
            NoHit::NotOnDisk
        );
    }

    #[test]
    fn a_compiled_program_older_than_the_file_is_a_stale_build() {
        let rust = probe(ProbeKind::Source, ProbeState::Live, "rust");
        let times = FileTimes {
            changed_ms: Some(9_000),
            executable_built_ms: Some(4_000),
        };
        let v = verdict(&rust, 0, false, &times, &facts(vec![program(0)])).unwrap();
        assert_eq!(v.reason, NoHit::StaleBuild);
        assert_eq!(
            v.why,
            "./app was built 5.0 s before src/cart.py last changed: rebuild it"
        );
        // The same times in Python: it reads its source each run.
        let python = probe(ProbeKind::Source, ProbeState::Live, "python");
        assert_eq!(
            reason(&python, false, times, &facts(vec![program(0)])),
            NoHit::NotReached
        );
    }

    #[test]
    fn timed_out_and_signalled_programs_exited_first() {
        let source = probe(ProbeKind::Source, ProbeState::Live, "python");
        for ending in [
            Ending::Signalled { signal: 11 },
            Ending::TimedOut { after_sec: 60 },
        ] {
            let run = facts(vec![ProgramEnd {
                ending,
                ..program(0)
            }]);
            assert_eq!(
                reason(&source, false, FileTimes::default(), &run),
                NoHit::ExitedFirst
            );
        }
    }
}
