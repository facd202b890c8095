//! Logs and runs: run files, ingest URLs, log pages and summaries, artifacts.

use super::*;

impl Engine {
    /// Complete lines reached a run's log file (counted by the watcher).
    pub fn log_appended(&mut self, session_id: &str, run_id: &str, appended: Appended) {
        self.changes.push(Change::LogAppended {
            session_id: session_id.to_string(),
            run_id: run_id.to_string(),
            appended,
        });
    }

    /// This process hosts the workspace's ingest server, started by `host`
    /// when a live session first needs its URL.
    pub fn host_ingest(&mut self, host: IngestHost) {
        self.ingest_host = Some(host);
    }

    /// The URL the session's browser probes post to, when a server runs (or
    /// this process can start one).
    /// The URL a session's probes already post to: a token minted before
    /// and a server known to run. A read: it writes nothing, starts no
    /// server and mints no token (a listing of 10,000 sessions stays one).
    pub(super) fn existing_ingest_url(&self, session_id: &str) -> Option<String> {
        if let Some(url) = self.ingest_urls.borrow().get(session_id) {
            return Some(url.clone());
        }
        let info = self
            .ingest
            .get()
            .or_else(|| IngestInfo::read(&self.config.state_dir).filter(IngestInfo::is_alive))?;
        ingest::existing_ingest_url(&self.config.state_dir, &info, session_id)
    }

    pub(super) fn ingest_url(&self, session_id: &str) -> Option<String> {
        if let Some(url) = self.ingest_urls.borrow().get(session_id) {
            return Some(url.clone());
        }
        // A token lives beside the session's state: a session never written
        // (a status before any start) gets none, so reading leaves no trace.
        let session_dir = self.config.state_dir.join(SESSIONS_DIR).join(session_id);
        if !session_dir.is_dir() {
            return None;
        }
        let info = match (self.ingest.get(), &self.ingest_host) {
            (Some(info), _) => info,
            (None, Some(host)) => match host() {
                Ok(info) => {
                    self.ingest.set(Some(info));
                    self.ingest_recorded.set(false);
                    info
                }
                Err(error) => {
                    tracing::warn!("no ingest server: {error}");
                    return None;
                }
            },
            (None, None) => {
                // A process without a server of its own (the MCP face) may
                // have started before the workspace's `serve` recorded its.
                let found =
                    IngestInfo::read(&self.config.state_dir).filter(IngestInfo::is_alive)?;
                self.ingest.set(Some(found));
                self.ingest_recorded.set(true);
                found
            }
        };
        let info = &info;
        // A URL handed out must survive this process: a restarted server
        // reads the port back from the record to take it again.
        if !self.ingest_recorded.get() {
            match info.record(&self.config.state_dir) {
                Ok(()) => self.ingest_recorded.set(true),
                Err(error) => tracing::warn!("could not record the ingest address: {error}"),
            }
        }
        let url = ingest::ingest_url(&self.config.state_dir, info, session_id)?;
        self.ingest_urls
            .borrow_mut()
            .insert(session_id.to_string(), url.clone());
        Some(url)
    }

    pub fn runs_dir(&self, session_id: &str) -> PathBuf {
        self.config
            .state_dir
            .join(SESSIONS_DIR)
            .join(session_id)
            .join("runs")
    }

    /// The run a log request means: the one named when the session has it,
    /// else the current run, with a note saying so.
    pub(super) fn log_run(
        &mut self,
        session_id: &str,
        run: Option<&str>,
    ) -> Result<LogRun, EngineError> {
        let stored = self.load(session_id)?;
        let Some(session) = stored.state.session() else {
            // After a session ends its run files stay: the one named, else the last.
            let runs = runlog::list_runs(&self.runs_dir(session_id));
            let run = match run {
                Some(run) if runs.iter().any(|r| r == run) => Some(run.to_string()),
                _ => runs.last().cloned(),
            };
            let note = match &run {
                Some(run) => format!("No debug session is active; showing its run {run}."),
                None => "No debug session is active and it left no run logs.".to_string(),
            };
            return Ok(LogRun {
                file: run
                    .as_ref()
                    .map(|run| runlog::run_file(&self.runs_dir(session_id), run))
                    .unwrap_or_default(),
                run,
                note: Some(note),
            });
        };
        let current = session.run_id().to_string();
        let (run, note) = match run {
            Some(run) if session.run(run).is_some() => (run.to_string(), None),
            Some(run) => {
                let known: Vec<&str> = session.runs.iter().map(|r| r.id.as_str()).collect();
                (
                    current.clone(),
                    Some(format!(
                        "Run {run} does not exist; showing the current run {current}. Runs: {}.",
                        known.join(", ")
                    )),
                )
            }
            None => (current, None),
        };
        Ok(LogRun {
            file: runlog::run_file(&self.runs_dir(session_id), &run),
            run: Some(run),
            note,
        })
    }

    /// One page of a run's log lines.
    pub fn logs(
        &mut self,
        session_id: &str,
        run: Option<&str>,
        query: &LogQuery,
    ) -> Result<LogsAnswer, EngineError> {
        let target = self.log_run(session_id, run)?;
        if target.run.is_none() {
            return Ok(LogsAnswer {
                target,
                page: LogPage::default(),
                total: 0,
            });
        }
        let page =
            logread::read_page(&target.file, query, self.redactor()).map_err(
                |error| match error {
                    logread::ReadError::BadCursor { .. } => {
                        EngineError::Domain(DomainError::invalid("cursor", error.to_string()))
                    }
                    logread::ReadError::Io(io) => EngineError::Io(io),
                },
            )?;
        let total = self.counter.borrow_mut().count(&target.file)?;
        Ok(LogsAnswer {
            target,
            page,
            total,
        })
    }

    /// Per-probe figures of a run's log.
    pub fn log_summary(
        &mut self,
        session_id: &str,
        run: Option<&str>,
        now: u64,
    ) -> Result<(LogRun, LogSummary), EngineError> {
        let target = self.log_run(session_id, run)?;
        let Some(run) = target.run.as_deref() else {
            return Ok((target, LogSummary::default()));
        };
        // `notOnDisk` rests on a scan of the files those probes name.
        self.rescan_issued(session_id, now)?;
        let stored = self.load(session_id)?;
        let (mut summary, outcomes) = self.judged(&target.file, stored.state.session(), run)?;
        summary.marks = outcomes.marks;
        summary.marks_total = outcomes.marks_total;
        if let Some(mark) = summary.marks.last() {
            summary.around_mark = Some(logread::MarkComparison::of(
                &target.file,
                self.redactor(),
                mark,
            )?);
        }
        Ok((target, summary))
    }

    /// The person marks the moment in the session's current run: a marker
    /// record with their words (redacted) and the time; where it landed.
    pub fn mark(&mut self, session_id: &str, words: &str, now: u64) -> Result<Marked, EngineError> {
        let stored = self.store.load(session_id)?;
        machine::check_recording(&stored.state, machine::Recorder::Mark)?;
        let Some(session) = stored.state.session() else {
            return Err(DomainError::invalid("session", "no debug session is active").into());
        };
        let run = session.run_id().to_string();
        let mut record = logread::marks::mark_record(session_id, words, now);
        self.redactor().record(&mut record);
        let line = serde_json::to_vec(&record).map_err(io::Error::other)?;
        let file = runlog::run_file(&self.runs_dir(session_id), &run);
        let from = std::fs::metadata(&file).map_or(0, |meta| meta.len());
        ingest::append_to_current_run(
            &self.config.state_dir,
            session_id,
            &[&line[..], b"\n"].concat(),
        )
        .map_err(|why| DomainError::invalid("session", why))?;
        let at = logread::marks::line_of(&file, &line, from)?;
        Ok(Marked {
            run,
            line: at,
            words: record["words"].as_str().unwrap_or_default().to_string(),
        })
    }

    /// Copy a user's file (a screenshot, a crash dump, a HAR) into the
    /// session's `artifacts/` and record it, linked to an evidence request.
    pub fn attach(
        &mut self,
        session_id: &str,
        path: &str,
        request_id: Option<String>,
        kind: Option<String>,
        now: u64,
    ) -> Result<Snapshot, EngineError> {
        // Refuse early when no session could take it, before copying anything.
        let state = self.store.load(session_id)?.state;
        machine::check_legal(&state, CommandName::Attach)?;
        let input = ArtifactInput {
            path: path.to_string(),
            request_id,
            kind,
        };
        let mut inputs = self.take_artifacts(session_id, vec![input], |_| "path".into())?;
        let input = inputs.remove(0);
        let copy = PathBuf::from(&input.path);
        let applied = self
            .apply(session_id, Command::Attach(input), now, ScanTiming::Inline)
            .inspect_err(|_| artifacts::forget_copies(&[copy]))?;
        Ok(self.snapshot_of(session_id, &applied.after))
    }

    /// The files a person hands over, each admitted by the one check every
    /// way in applies (`field` names each in a refusal) and copied into the
    /// session's `artifacts/`: the inputs naming the copies. Nothing is
    /// copied unless every file is admitted.
    pub(super) fn take_artifacts(
        &self,
        session_id: &str,
        inputs: Vec<ArtifactInput>,
        field: impl Fn(usize) -> String,
    ) -> Result<Vec<ArtifactInput>, EngineError> {
        let sources = artifacts::Sources::from_env(&self.config.root);
        let admitted = inputs
            .iter()
            .enumerate()
            .map(|(i, input)| artifacts::admissible(&input.path, &field(i), &sources))
            .collect::<Result<Vec<_>, _>>()?;
        let dir = self
            .config
            .state_dir
            .join(SESSIONS_DIR)
            .join(session_id)
            .join("artifacts");
        let mut copies = Vec::new();
        for source in &admitted {
            match artifacts::copy_in(source, &dir) {
                Ok(copy) => copies.push(copy),
                Err(error) => {
                    artifacts::forget_copies(&copies);
                    return Err(error.into());
                }
            }
        }
        Ok(inputs
            .into_iter()
            .zip(copies)
            .map(|(input, copy)| ArtifactInput {
                path: copy.to_string_lossy().into_owned(),
                ..input
            })
            .collect())
    }
}
