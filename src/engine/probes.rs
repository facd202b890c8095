//! The probe ledger and the disk: snippets, rescans (decision and full),
//! what `check` reads, and the note that outlives a deleted state directory.

use super::*;
use crate::core::machine::ScanScope;

impl Engine {
    /// The session whose state was deleted while it was active, as the note
    /// kept outside the state directory remembers it.
    pub fn lost_session(&self) -> Option<Breadcrumb> {
        let crumb = breadcrumb::read(&self.config.root)?;
        if crumb.state_dir != self.config.state_dir.to_string_lossy() {
            return None;
        }
        check_session_id(&crumb.session_id).ok()?;
        let state = self
            .config
            .state_dir
            .join(SESSIONS_DIR)
            .join(&crumb.session_id)
            .join(STATE_FILE);
        (!state.exists()).then_some(crumb)
    }

    /// Once: what to tell the person and the model about a session whose
    /// state directory was deleted while it was active, (person, model).
    pub fn take_lost_notice(&self) -> Option<(String, String)> {
        let lost = self.lost_session()?;
        breadcrumb::clear(&self.config.root, &lost.session_id);
        Some(text::lost_state(
            &lost.session_id,
            &lost.state_dir,
            &lost.probes,
        ))
    }

    /// Keeps the note outside the state directory in step with a write.
    pub(super) fn note_session(&self, session_id: &str, state: &DebugState) {
        let Some(session) = state.session() else {
            breadcrumb::clear(&self.config.root, session_id);
            return;
        };
        let crumb = Breadcrumb {
            session_id: session_id.to_string(),
            state_dir: self.config.state_dir.to_string_lossy().into_owned(),
            probes: session
                .probes
                .iter()
                // A logpoint is in no file: it ends with the state.
                .filter(|p| p.state != ProbeState::Missing && !p.is_logpoint())
                .map(|p| format!("{} {}", p.id, p.location()))
                .collect(),
        };
        if let Err(error) = breadcrumb::write(&self.config.root, &crumb) {
            tracing::warn!("could not note the session outside its state directory: {error}");
        }
    }

    /// Half-removed blocks and foreign probes the last scan of the session saw.
    pub fn scan_extras(&self, session_id: &str) -> ScanExtras {
        self.extras.get(session_id).cloned().unwrap_or_default()
    }

    /// Registers a probe for a file and returns its block, ready to paste.
    pub fn probe_snippet(
        &mut self,
        session_id: &str,
        request: SnippetRequest,
        now: u64,
    ) -> Result<PlacedProbe, EngineError> {
        if request.kind == ProbeKind::Logpoint {
            if request.target.posts() {
                return Err(DomainError::invalid(
                    "target",
                    "a logpoint is set by `debug-sidecar run` in a program it starts on this \
                     machine; for a program elsewhere, place a source probe with this target",
                )
                .into());
            }
            return self.place_logpoint(session_id, request, now);
        }
        if request.line.is_some() {
            return Err(DomainError::invalid(
                "line",
                "only a logpoint takes a line (a block goes where you insert it)",
            )
            .into());
        }
        let file = self.workspace_relative(&request.file)?;
        // Refuse an unsupported language (or browser without an ingest URL)
        // before the ledger gains a probe.
        // Only a live session registers a probe: for any other the command
        // below is refused, and no ingest server is started for it.
        let live = self.load(session_id)?.state.session().is_some();
        let env = self.env(session_id, live);
        let target = request.target;
        let unsupported = |unsupported: snippet::UnsupportedLanguage| {
            DomainError::invalid("language", unsupported.to_string())
        };
        let mut language =
            snippet::language_for(&file, request.language.as_deref()).map_err(unsupported)?;
        // Page code in a `.js` or `.ts` file: a Node block would log nothing.
        // Only a guess: without an ingest URL to post to it is dropped and
        // the Node block is what it was.
        let mut page_code = None;
        let mut deno_code = None;
        let asked = request
            .language
            .as_deref()
            .is_some_and(|l| !l.trim().is_empty());
        if !asked && matches!(language, "javascript" | "typescript") {
            // Page code first: the file's own signs (`document`) outrank a
            // `deno.json` above it (a Deno project's front end runs in a page).
            if !target.posts() {
                page_code = snippet::page::runs_in_a_page(&self.config.root, &file);
            }
            // Deno's code: a Node block there opens Deno's permission prompt.
            if page_code.is_none() {
                deno_code = snippet::page::runs_under_deno(&self.config.root, &file);
                if deno_code.is_some() {
                    language = "deno";
                }
            }
        }
        snippet::check_language(language, target.posts()).map_err(unsupported)?;
        let reached = match (live, target.posts()) {
            (true, true) => Some(self.target_listener(session_id, target)?),
            _ => None,
        };
        let post_url = reached.as_ref().map(|r| r.url.clone());
        let ingest_url = post_url.as_deref().or(env.ingest_url.as_deref());
        if page_code.is_some() && ingest_url.is_some() {
            language = "browser";
        } else {
            page_code = None;
        }
        snippet::check_writable(language, ingest_url, target.posts()).map_err(unsupported)?;
        let command = Command::RegisterProbe(ProbeRequest {
            file,
            hypothesis_id: request.hypothesis_id,
            language: Some(language.to_string()),
        });
        let applied = self.apply(session_id, command, now, ScanTiming::Inline)?;
        let probe = registered(applied.effects, "no probe was registered")?;
        let log_file = env.probe_log().unwrap_or_default();
        let variables: Vec<&str> = request.variables.iter().map(String::as_str).collect();
        let block = snippet::snippet(
            language,
            &SnippetInput {
                probe: &probe,
                session_id,
                session_tag: session_id,
                log_file: &log_file,
                message: request.message.as_deref().unwrap_or(""),
                variables: &variables,
                ingest_url,
                post: target.posts(),
            },
        )
        .map_err(unsupported)?;
        let placement =
            scan::placement(&self.config.root, &probe.file, Some(&self.config.state_dir));
        let runtime_note = if language == "deno" {
            Some(text::deno_note(
                deno_code.as_deref(),
                target.posts(),
                ingest_url.is_some(),
            ))
        } else {
            (language == "browser" && !target.posts())
                .then(|| {
                    let csp =
                        snippet::page::content_security_policy(&self.config.root, &probe.file);
                    text::page_note(page_code.as_deref(), csp.as_deref(), ingest_url)
                })
                .flatten()
        };
        Ok(PlacedProbe {
            probe,
            snippet: block,
            language,
            placement,
            reached,
            runtime_note,
        })
    }

    /// The session's listener for `target`, started when none runs: where
    /// that target's programs reach it, and the URL its blocks post to.
    fn target_listener(&self, session_id: &str, target: Target) -> Result<Reached, EngineError> {
        let reach = targets::reach(target, &self.targets())
            .map_err(|why| DomainError::invalid("target", why))?;
        let state_dir = &self.config.state_dir;
        let port =
            ingest::listener::ensure(&self.config.root, state_dir, session_id, target, reach.bind)
                .map_err(|error| {
                    DomainError::invalid(
                        "target",
                        format!(
                            "no listener for {} on {}: {error}",
                            target.audience(),
                            reach.bind
                        ),
                    )
                })?;
        let token = ingest::session_token(state_dir, session_id)
            .map_err(|error| DomainError::invalid("target", format!("no ingest token: {error}")))?;
        Ok(Reached {
            target,
            listening: std::net::SocketAddr::new(reach.bind, port).to_string(),
            url: reach.url(port, &token),
        })
    }

    /// Reconcile the ledger with the whole workspace now (a full walk).
    pub fn rescan(&mut self, session_id: &str, now: u64) -> Result<Reconciliation, EngineError> {
        self.rescan_with(session_id, &[], true, now)
    }

    /// Reconcile after an edit: a decision rescan that also reads these
    /// files (absolute or workspace-relative), ignored or not.
    pub fn rescan_files(
        &mut self,
        session_id: &str,
        files: &[String],
        now: u64,
    ) -> Result<Reconciliation, EngineError> {
        let files: Vec<String> = files
            .iter()
            .filter_map(|file| self.workspace_relative(file).ok())
            .collect();
        self.rescan_with(session_id, &files, false, now)
    }

    pub(super) fn rescan_with(
        &mut self,
        session_id: &str,
        extra: &[String],
        full: bool,
        now: u64,
    ) -> Result<Reconciliation, EngineError> {
        let stored = self.store.load(session_id)?;
        let Some(session) = stored.state.session() else {
            return Ok(Reconciliation::default());
        };
        let mut tracked = session.files_to_rescan();
        tracked.extend(extra.iter().cloned());
        let target = self.scan_target(session_id, tracked);
        let outcome = scan::rescan_session(&self.config.state_dir, &target, session_id, full);
        self.commit_scan(session_id, outcome, now)
    }

    /// What `check` reads beyond its walk: every active session's tracked
    /// files (ignored or behind a symlink), with every session's clues. A
    /// state that cannot be read adds nothing: the walk and the fingerprints
    /// still find the probes.
    pub fn check_target(&mut self) -> ScanTarget {
        let mut target = ScanTarget::for_session(
            &self.config.root,
            &self.config.state_dir,
            DEFAULT_SESSION,
            Vec::new(),
        );
        for (id, stored) in self.store.sessions().unwrap_or_default() {
            if let Some(session) = stored.state.session() {
                target.tracked.extend(session.files_to_rescan());
            } else if let Ok(ended) =
                crate::workspace::ended::latest(&self.config.state_dir, Some(&id))
            {
                // A session that ended: the files its probes were in (what
                // their removal may have left, such as Go's imports).
                target.tracked.extend(ended.session.files_to_rescan());
            }
            if stored.state.session().is_none() {
                target
                    .tracked
                    .extend(crate::workspace::ended::aborted_files(
                        &self.config.state_dir,
                        &id,
                    ));
            }
            if let Some(token) = ingest::existing_token(&self.config.state_dir, &id) {
                target.clues = target.clues.with_token(&token, &id);
            }
        }
        target.tracked.sort();
        target.tracked.dedup();
        target
    }

    pub(super) fn scan_target(&self, session_id: &str, tracked: Vec<String>) -> ScanTarget {
        ScanTarget::for_session(
            &self.config.root,
            &self.config.state_dir,
            session_id,
            tracked,
        )
    }

    /// Apply a scan that ran elsewhere.
    pub fn commit_scan(
        &mut self,
        session_id: &str,
        outcome: ScanOutcome,
        now: u64,
    ) -> Result<Reconciliation, EngineError> {
        self.extras.insert(
            session_id.to_string(),
            ScanExtras {
                half_removed: outcome.half_removed,
                foreign: outcome.foreign,
                files_read: outcome.files_read,
            },
        );
        self.reconcile(session_id, outcome.report, now)
    }

    /// Apply a scan report to the ledger.
    pub(super) fn reconcile(
        &mut self,
        session_id: &str,
        report: ScanReport,
        now: u64,
    ) -> Result<Reconciliation, EngineError> {
        let applied = self.apply(
            session_id,
            Command::ProbeScan(report),
            now,
            ScanTiming::Inline,
        )?;
        Ok(applied
            .effects
            .into_iter()
            .find_map(|effect| match effect {
                Effect::Reconciled(r) => Some(r),
                _ => None,
            })
            .unwrap_or_default())
    }

    /// The ledger, and what the last scan found beside it; with `rescan`,
    /// after a fresh scan.
    pub fn probes(
        &mut self,
        session_id: &str,
        rescan: bool,
        now: u64,
    ) -> Result<ProbeLedger, EngineError> {
        if rescan && self.store.load(session_id)?.state.session().is_none() {
            return Ok(self.scan_without_session());
        }
        // `rescan`: the whole walk, its adoptions written; otherwise the
        // decision rescan, shown and not written.
        let (stored, extras, adopted) = if rescan {
            let adopted = self.rescan(session_id, now)?.adopted;
            let stored = self.store.load(session_id)?;
            (stored, self.scan_extras(session_id), adopted)
        } else {
            let (stored, extras) = self.fresh_view(session_id, false, now)?;
            (stored, extras, Vec::new())
        };
        let probes = stored
            .state
            .session()
            .map(|s| s.probes.clone())
            .unwrap_or_default();
        Ok(ProbeLedger {
            live: probes
                .iter()
                .filter(|p| p.state == ProbeState::Live)
                .count(),
            missing: probes
                .iter()
                .filter(|p| p.state == ProbeState::Missing)
                .map(|p| p.id.clone())
                .collect(),
            untracked: adopted,
            probes,
            foreign: extras.foreign,
            half_removed: extras.half_removed,
            scanned: stored.state.session().is_some(),
        })
    }

    /// Re-reads only the files the ledger's live source probes sit in (a
    /// few files, whatever the workspace's size) and records what changed:
    /// probes removed or moved by a shell command, which no edit tool
    /// announced. Nothing is written when nothing changed.
    pub(super) fn verify_instrumented(
        &mut self,
        session_id: &str,
        now: u64,
    ) -> Result<(), EngineError> {
        let stored = self.store.load(session_id)?;
        let Some(session) = stored.state.session() else {
            return Ok(());
        };
        let mut files: Vec<String> = session
            .live_probes()
            .filter(|p| !p.is_logpoint())
            .map(|p| p.file.clone())
            .collect();
        files.sort();
        files.dedup();
        if files.is_empty() {
            return Ok(());
        }
        let target = self.scan_target(session_id, Vec::new());
        let findings = scan::read_files(&self.config.root, &files, &target.clues);
        let outcome = scan::outcome_for(&findings.found, session_id, ScanScope::Files(files));
        let report = &outcome.report;
        let unchanged = session.live_probes().filter(|p| !p.is_logpoint()).all(|p| {
            report.found.iter().any(|f| {
                f.id == p.id
                    && f.file == p.file
                    && Some(f.line) == p.line
                    && f.trace.filter(|t| !t.is_whole()) == p.trace
            })
        });
        if !unchanged {
            self.reconcile(session_id, outcome.report, now)?;
        }
        Ok(())
    }

    /// An explicit rescan with no active session: the walk `check` does, so
    /// a Cursor block or an ended session's leftover shows up in the
    /// ledger view. Shown, never written: no session gains a probe and the
    /// scan index is not saved.
    fn scan_without_session(&mut self) -> ProbeLedger {
        let target = self.check_target();
        let root = self.config.root.clone();
        let findings = scan::scan_paths(
            &root,
            std::slice::from_ref(&root),
            &target.tracked,
            &target.clues,
        );
        // No session owns anything here: every block is someone else's.
        let outcome = scan::outcome_for(&findings.found, "", ScanScope::Workspace);
        ProbeLedger {
            probes: Vec::new(),
            live: 0,
            missing: Vec::new(),
            untracked: Vec::new(),
            foreign: outcome.foreign,
            half_removed: outcome.half_removed,
            scanned: true,
        }
    }

    /// A probe file as the ledger names it: relative to the workspace root,
    /// never outside it.
    pub(super) fn workspace_relative(&self, file: &str) -> Result<String, DomainError> {
        let path = Path::new(file.trim());
        let relative = if path.is_absolute() {
            match path.strip_prefix(&self.config.root) {
                Ok(inside) => inside,
                // A path a program sees in its container, mapped back.
                Err(_) => match self.targets().paths.to_workspace(file.trim()) {
                    Some(mapped) if !mapped.is_empty() => return Ok(mapped),
                    _ => {
                        return Err(DomainError::invalid(
                            "file",
                            "is outside the workspace (a path inside a container is mapped \
                             back by `paths` in .debug-sidecar/targets.json)",
                        ))
                    }
                },
            }
        } else {
            path
        };
        let mut parts = Vec::new();
        for component in relative.components() {
            match component {
                Component::Normal(part) => parts.push(part.to_string_lossy().into_owned()),
                Component::CurDir => {}
                Component::ParentDir => {
                    if parts.pop().is_none() {
                        return Err(DomainError::invalid("file", "is outside the workspace"));
                    }
                }
                _ => return Err(DomainError::invalid("file", "is outside the workspace")),
            }
        }
        if parts.is_empty() {
            return Err(DomainError::invalid(
                "file",
                "must name a file in the workspace",
            ));
        }
        Ok(parts.join("/"))
    }
}

/// The probe a placement registered, from its effects.
pub(super) fn registered(effects: Vec<Effect>, none: &str) -> Result<Probe, EngineError> {
    effects
        .into_iter()
        .find_map(|effect| match effect {
            Effect::ProbeRegistered { probe } => Some(probe),
            _ => None,
        })
        .ok_or_else(|| DomainError::invalid("file", none).into())
}
