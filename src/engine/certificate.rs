//! The fix certificate of an ended session (issue 31, part 4): kept when a
//! stop verifies the cleanup, made on request from that record and the
//! session's run files, and checked against the tree (`check
//! --certificate`).

use super::*;
use crate::core::certificate::{
    self as cert, Certificate, CertifiedHypothesis, CertifiedObservation, CertifiedRun, CitedLine,
    CleanupReceipt, FixRecord, FlakyRecord, HitRecord, Phase, ProgramRecord, RateRecord,
    RemovedProbe,
};
use crate::core::markers::start_marker;
use crate::core::model::DebugSession;
use crate::core::rates::{self, FixEvidence};
use crate::workspace::ended::{self, EndedError, EndedSession};
use crate::workspace::scan::{leftovers, scan_paths, texts};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::io::BufReader;

#[derive(Debug, thiserror::Error)]
pub enum CertificateError {
    #[error(transparent)]
    Ended(#[from] EndedError),
    #[error("cannot read the session's runs: {0}")]
    Io(#[from] io::Error),
}

/// What `check --certificate` found.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CertificateCheck {
    /// Nothing failed.
    pub valid: bool,
    pub session_id: Option<String>,
    /// Each failure, in words.
    pub failures: Vec<String>,
    /// What was checked and held, or could not be checked, in words.
    pub notes: Vec<String>,
    pub files_read: usize,
}

impl Engine {
    /// Keeps what a certificate of the session ending now is made from:
    /// the session as the verifying stop saw it. A failure is logged, never
    /// the stop's.
    pub(super) fn keep_ended(&self, session_id: &str, session: &DebugSession, now: u64) {
        let files_scanned = self
            .extras
            .get(session_id)
            .map_or(0, |extras| extras.files_read);
        let record = EndedSession {
            session_id: session_id.to_string(),
            ended_at: now,
            files_scanned,
            session: session.clone(),
        };
        if let Err(error) = ended::write(&self.config.state_dir, &record) {
            tracing::warn!(
                "could not keep the ended session {session_id} for its certificate: {error}"
            );
        }
    }

    /// The certificate of the latest session that ended with its cleanup
    /// verified (of `session_id` when given).
    pub fn certificate(&self, session_id: Option<&str>) -> Result<Certificate, CertificateError> {
        let record = ended::latest(&self.config.state_dir, session_id)?;
        let session = &record.session;
        let runs_dir = self.runs_dir(&record.session_id);
        let fixed_in = session.round().index;
        let mut runs = Vec::new();
        let mut by_round: BTreeMap<u32, rates::Attempts> = BTreeMap::new();
        // A run id names a file: only well-formed ones are read (the record
        // may come from a state directory someone else wrote).
        let well_formed = |id: &str| crate::core::run_id::parse_run_id(id).is_some();
        for run in session.runs.iter().filter(|r| well_formed(&r.id)) {
            let file = runlog::run_file(&runs_dir, &run.id);
            let (summary, outcomes) = self.judged(&file, Some(session), &run.id)?;
            let attempts = outcomes.facts.attempts;
            let round = by_round.entry(run.round).or_default();
            round.failed += attempts.failed;
            round.total += attempts.total;
            runs.push(CertifiedRun {
                id: run.id.clone(),
                round: run.round,
                phase: if run.round >= fixed_in {
                    Phase::AfterFix
                } else {
                    Phase::BeforeFix
                },
                agent: run.agent,
                lines: summary.lines,
                programs: outcomes
                    .facts
                    .programs
                    .iter()
                    .map(|p| ProgramRecord {
                        line: p.line,
                        command: p.command.clone(),
                        ending: p.ending,
                    })
                    .collect(),
                attempts: (attempts.total > 0).then(|| RateRecord::of(attempts)),
                hits: summary
                    .probes
                    .iter()
                    .map(|f| HitRecord {
                        probe_id: f.probe_id.clone(),
                        hits: f.hits,
                        failed: f.failed,
                        reason: f.reason,
                    })
                    .collect(),
            });
        }
        let run_ids: Vec<&str> = session
            .runs
            .iter()
            .map(|r| r.id.as_str())
            .filter(|id| well_formed(id))
            .collect();
        let mut cited: BTreeMap<String, BTreeSet<u64>> = BTreeMap::new();
        let cites_of = |evidence: &[String]| {
            let mut cites: Vec<(String, u64)> = evidence
                .iter()
                .flat_map(|e| cert::citations(e, &run_ids))
                .collect();
            cites.sort();
            cites.dedup();
            cites.truncate(cert::CITES_PER_HYPOTHESIS);
            cites
        };
        for hypothesis in &session.hypotheses {
            for (run, line) in cites_of(&hypothesis.evidence) {
                cited.entry(run).or_default().insert(line);
            }
        }
        let mut digests: BTreeMap<(String, u64), String> = BTreeMap::new();
        let redactor = self.redactor();
        for (run, lines) in &cited {
            let file = runlog::run_file(&runs_dir, run);
            for (line, digest) in line_digests(&file, lines, redactor)? {
                digests.insert((run.clone(), line), digest);
            }
        }
        let words = |text: &str| redactor.text(text).0.into_owned();
        let hypotheses = session
            .hypotheses
            .iter()
            .map(|h| CertifiedHypothesis {
                id: h.id.clone(),
                statement: words(&h.statement),
                status: h.status,
                evidence: h.evidence.iter().map(|e| words(e)).collect(),
                cites: cites_of(&h.evidence)
                    .into_iter()
                    .map(|(run, line)| CitedLine {
                        sha256: digests.get(&(run.clone(), line)).cloned(),
                        run,
                        line,
                    })
                    .collect(),
            })
            .collect();
        let observations: Vec<CertifiedObservation> = session
            .observations
            .iter()
            .map(|o| CertifiedObservation {
                round: o.round,
                text: words(&o.text),
            })
            .collect();
        let anyway = observations
            .iter()
            .any(|o| o.round == fixed_in && text::says_fixed_anyway(&o.text));
        let flaky = match super::rates::evidence_of_rounds(&by_round, fixed_in) {
            FixEvidence::NotFlaky => None,
            FixEvidence::Significant { before, after, p } => Some((before, after, p, true)),
            FixEvidence::Insufficient {
                before, after, p, ..
            } => Some((before, after, p, false)),
        }
        .map(|(before, after, p, significant)| FlakyRecord {
            before: RateRecord::of(before),
            after: RateRecord::of(after),
            p: (p * 1e6).round() / 1e6,
            significant,
        });
        let certificate = Certificate {
            format: cert::FORMAT.into(),
            version: cert::VERSION,
            session_id: record.session_id.clone(),
            problem: words(&session.problem),
            started_at: session.started_at,
            ended_at: record.ended_at,
            rounds: fixed_in,
            hypotheses,
            observations,
            runs,
            fix: FixRecord {
                round: fixed_in,
                anyway,
                flaky,
            },
            cleanup: CleanupReceipt {
                verified_at: record.ended_at,
                files_scanned: record.files_scanned,
                probes: session
                    .probes
                    .iter()
                    .map(|p| RemovedProbe {
                        id: p.id.clone(),
                        kind: if p.is_logpoint() {
                            "logpoint"
                        } else {
                            "source"
                        }
                        .into(),
                        file: p.file.clone(),
                        line: p.line,
                        round: p.round,
                        hypothesis_id: p.hypothesis_id.clone(),
                    })
                    .collect(),
                fingerprints: fingerprints(&record.session_id, session),
            },
            content_hash: String::new(),
        };
        Ok(cert::seal(certificate))
    }

    /// Checks a certificate (its JSON text) against the tree: its hash
    /// holds, no probe and none of its session's fingerprints is in a file,
    /// and each line it cites is, unchanged, in its run when the run is
    /// here.
    pub fn check_certificate(&mut self, text: &str) -> CertificateCheck {
        let mut check = CertificateCheck::default();
        let value: Value = match serde_json::from_str(text) {
            Ok(value) => value,
            Err(e) => {
                check.failures.push(format!("it is not JSON: {e}"));
                return check;
            }
        };
        let certificate: Certificate = match serde_json::from_value(value.clone()) {
            Ok(certificate) => certificate,
            Err(e) => {
                check.failures.push(format!(
                    "it is not a fix certificate of version {}: {e}",
                    cert::VERSION
                ));
                return check;
            }
        };
        check.session_id = Some(certificate.session_id.clone());
        if certificate.version != cert::VERSION {
            check.failures.push(format!(
                "it is of version {}; this debug-sidecar checks version {}",
                certificate.version,
                cert::VERSION
            ));
        }
        if certificate.format != cert::FORMAT {
            check.failures.push(format!(
                "its format is {:?}, not {:?}",
                certificate.format,
                cert::FORMAT
            ));
        }
        let hash = cert::content_hash(&value);
        if hash == certificate.content_hash {
            check.notes.push(format!("content hash {hash} holds"));
        } else {
            check.failures.push(format!(
                "its content was changed after it was written: it hashes to {hash}, not {}",
                certificate.content_hash
            ));
        }
        // The files the session's probes were in are read whatever the
        // ignore rules say, as the session's own scans read them.
        let probe_files: Vec<String> = certificate
            .cleanup
            .probes
            .iter()
            .filter(|p| p.kind == "source" && crate::core::model::is_inside_path(&p.file))
            .map(|p| p.file.clone())
            .collect();
        let mut target = self.check_target();
        target.tracked.extend(probe_files.iter().cloned());
        target.tracked.sort();
        target.tracked.dedup();
        let root = &self.config.root;
        let findings = scan_paths(
            root,
            std::slice::from_ref(root),
            &target.tracked,
            &target.clues,
        );
        let mut files_read = findings.files_read;
        for leftover in leftovers(&findings) {
            check.failures.push(format!(
                "{}:{}: {}",
                leftover.file, leftover.line, leftover.detail
            ));
        }
        let searched = texts::find_texts(
            root,
            &probe_files,
            &certificate.cleanup.fingerprints,
            Some(&self.config.state_dir),
            cert::FORMAT,
        );
        let Some((found, read)) = searched else {
            check
                .failures
                .push("its fingerprints could not be searched for".into());
            return check;
        };
        files_read = files_read.max(read);
        for text in found {
            check.failures.push(format!(
                "{}:{}: {} of session {} is still there",
                text.file, text.line, text.text, certificate.session_id
            ));
        }
        check.files_read = files_read;
        self.check_cited_lines(&certificate, &mut check);
        check.valid = check.failures.is_empty();
        check
    }

    fn check_cited_lines(&self, certificate: &Certificate, check: &mut CertificateCheck) {
        if crate::core::session_id::check_session_id(&certificate.session_id).is_err() {
            check
                .notes
                .push("its session id names no directory here: cited lines not checked".into());
            return;
        }
        let runs_dir = self.runs_dir(&certificate.session_id);
        let mut wanted: BTreeMap<&str, BTreeMap<u64, Option<&str>>> = BTreeMap::new();
        for hypothesis in &certificate.hypotheses {
            for cite in &hypothesis.cites {
                wanted
                    .entry(cite.run.as_str())
                    .or_default()
                    .insert(cite.line, cite.sha256.as_deref());
            }
        }
        let (mut held, mut absent) = (0, 0);
        for (run, lines) in wanted {
            let known = certificate.runs.iter().any(|r| r.id == run);
            let file = runlog::run_file(&runs_dir, run);
            if !known || crate::core::run_id::parse_run_id(run).is_none() || !file.is_file() {
                absent += lines.len();
                continue;
            }
            let numbers: BTreeSet<u64> = lines.keys().copied().collect();
            let digests = match line_digests(&file, &numbers, self.redactor()) {
                Ok(digests) => digests,
                Err(e) => {
                    check.failures.push(format!("cannot read run {run}: {e}"));
                    continue;
                }
            };
            for (line, expected) in lines {
                match (expected, digests.get(&line)) {
                    (Some(expected), Some(actual)) if expected == actual.as_str() => held += 1,
                    (Some(_), Some(_)) => check.failures.push(format!(
                        "{run}:{line} is not the line the certificate cites"
                    )),
                    (Some(_), None) => check.failures.push(format!(
                        "{run}:{line} is cited but its run has no such line"
                    )),
                    (None, _) => check.notes.push(format!(
                        "{run}:{line} is cited but its run held no such line when the \
                         certificate was written"
                    )),
                }
            }
        }
        if held > 0 {
            check.notes.push(format!(
                "{held} cited line(s) found unchanged in their runs"
            ));
        }
        if absent > 0 {
            check.notes.push(format!(
                "{absent} cited line(s) not checked: their runs are not in this workspace's \
                 state directory"
            ));
        }
    }
}

/// Texts only this session put in the tree: each source probe's start
/// marker and each run id.
fn fingerprints(session_id: &str, session: &DebugSession) -> Vec<String> {
    let mut out: Vec<String> = session
        .probes
        .iter()
        .filter(|p| !p.is_logpoint())
        .map(|p| start_marker(&p.id, session_id))
        .chain(session.runs.iter().map(|r| r.id.clone()))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// A cited line longer than this has no digest (as if absent).
const MAX_CITED_LINE: usize = 16 << 20;

/// The digest of each of `lines` (1-based) of `file` that it has, taken
/// of the line as redacted: a published digest of a raw line would let a
/// weak secret in it be guessed.
fn line_digests(
    file: &Path,
    lines: &BTreeSet<u64>,
    redactor: &crate::core::redact::Redactor,
) -> io::Result<BTreeMap<u64, String>> {
    let mut out = BTreeMap::new();
    let Some(&last) = lines.last() else {
        return Ok(out);
    };
    let handle = match runlog::open_own(file) {
        Ok(handle) => handle,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
        Err(e) => return Err(e),
    };
    let mut reader = BufReader::new(handle);
    let mut buffer = Vec::new();
    let mut number = 0;
    while number < last {
        let Some((_, whole)) =
            crate::workspace::logread::read_line_capped(&mut reader, &mut buffer, MAX_CITED_LINE)?
        else {
            break;
        };
        number += 1;
        if whole && lines.contains(&number) {
            let line = buffer.strip_suffix(b"\n").unwrap_or(&buffer);
            out.insert(number, cert::digest(&redacted_line(line, redactor)));
        }
    }
    Ok(out)
}

/// A run's line as every face shows it: a record redacted field by field,
/// any other line as text.
fn redacted_line(line: &[u8], redactor: &crate::core::redact::Redactor) -> Vec<u8> {
    if let Ok(mut record) = serde_json::from_slice::<Value>(line) {
        if record.is_object() {
            redactor.record(&mut record);
            return record.to_string().into_bytes();
        }
    }
    let text = String::from_utf8_lossy(line);
    redactor.text(&text).0.into_owned().into_bytes()
}
