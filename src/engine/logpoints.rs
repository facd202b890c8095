//! Logpoints in the ledger: placing one (its file read, never written, its
//! line fingerprinted), removing them (a logpoint's cleanup), and the live
//! ones `debug-sidecar run` sets.

use super::*;
use crate::core::logpoint;
use crate::core::machine::LogpointRequest;

/// A file read to place a logpoint is at most this large.
const MAX_SOURCE_BYTES: u64 = 16 * 1024 * 1024;

impl Engine {
    /// Registers a logpoint: the file must be a Python or JavaScript file
    /// of the workspace (or name its language), the line one of its lines.
    pub(super) fn place_logpoint(
        &mut self,
        session_id: &str,
        request: SnippetRequest,
        now: u64,
    ) -> Result<PlacedProbe, EngineError> {
        let file = self.workspace_relative(&request.file)?;
        // Only what `run` can set: Python (its hook) and JavaScript run by
        // Node (its inspector); TypeScript and other languages need a source
        // probe.
        let language = match request.language.as_deref().map(str::trim) {
            Some("python") => "python",
            Some("javascript") => "javascript",
            Some(other) if !other.is_empty() => {
                return Err(DomainError::invalid(
                    "language",
                    "logpoints are set in Python (3.8+) and in JavaScript run by Node; use a \
                     source probe for other languages",
                )
                .into())
            }
            _ => logpoint::language_of(&file).ok_or_else(|| {
                DomainError::invalid(
                    "file",
                    "logpoints are set in Python (.py) and JavaScript (.js, .mjs, .cjs) files \
                     only; use a source probe for other languages (TypeScript included)",
                )
            })?,
        };
        let line = request
            .line
            .ok_or_else(|| DomainError::invalid("line", "a logpoint needs its 1-based line"))?;
        let text = self.read_workspace_file(&file)?;
        let lines: Vec<&str> = text.lines().collect();
        let line_text = (line as usize)
            .checked_sub(1)
            .and_then(|i| lines.get(i))
            .ok_or_else(|| {
                DomainError::invalid(
                    "line",
                    format!("the file has {} line(s); lines count from 1", lines.len()),
                )
            })?;
        if line_text.trim().is_empty() {
            return Err(DomainError::invalid(
                "line",
                "that line is blank: put the logpoint on a line of code that runs",
            )
            .into());
        }
        let command = Command::PlaceLogpoint(LogpointRequest {
            file,
            line,
            hypothesis_id: request.hypothesis_id,
            language: Some(language.to_string()),
            variables: request.variables,
            message: request.message,
            line_hash: logpoint::line_hash(line_text),
        });
        let applied = self.apply(session_id, command, now, ScanTiming::Inline)?;
        let probe = super::probes::registered(applied.effects, "no logpoint was placed")?;
        Ok(PlacedProbe {
            probe,
            snippet: String::new(),
            language,
            placement: Placement::InTree,
            reached: None,
            runtime_note: None,
        })
    }

    /// Removes logpoints from the ledger: their cleanup. Answers the ids
    /// that were live.
    pub fn remove_logpoints(
        &mut self,
        session_id: &str,
        ids: Vec<String>,
        now: u64,
    ) -> Result<Vec<String>, EngineError> {
        let applied = self.apply(
            session_id,
            Command::RemoveLogpoints(ids),
            now,
            ScanTiming::Inline,
        )?;
        applied
            .effects
            .into_iter()
            .find_map(|effect| match effect {
                Effect::LogpointsRemoved { ids } => Some(ids),
                _ => None,
            })
            .ok_or_else(|| DomainError::invalid("session", "no debug session is active").into())
    }

    /// The session's live logpoints, in ledger order.
    pub fn live_logpoints(&mut self, session_id: &str) -> Result<Vec<Probe>, EngineError> {
        let stored = self.load(session_id)?;
        Ok(stored
            .state
            .session()
            .map(|s| s.live_logpoints().cloned().collect())
            .unwrap_or_default())
    }

    /// Every active session's live logpoints, by session: what `check`
    /// mentions (they are in no file, so they never fail it).
    pub fn all_live_logpoints(&mut self) -> Vec<(String, Probe)> {
        let mut all = Vec::new();
        for (id, stored) in self.store.sessions().unwrap_or_default() {
            if let Some(session) = stored.state.session() {
                all.extend(session.live_logpoints().map(|p| (id.clone(), p.clone())));
            }
        }
        all
    }

    /// A file of the workspace as text; one reached through a symlink out
    /// of the workspace, or too large, is refused.
    fn read_workspace_file(&self, file: &str) -> Result<String, DomainError> {
        let unreadable = |why: &str| DomainError::invalid("file", why.to_string());
        let path = self.config.root.join(file);
        let real = path
            .canonicalize()
            .map_err(|_| unreadable("no such file in the workspace"))?;
        let root = self
            .config
            .root
            .canonicalize()
            .unwrap_or_else(|_| self.config.root.clone());
        if !real.starts_with(&root) {
            return Err(unreadable("is outside the workspace"));
        }
        let meta = std::fs::metadata(&real).map_err(|_| unreadable("cannot be read"))?;
        if !meta.is_file() {
            return Err(unreadable("is not a file"));
        }
        if meta.len() > MAX_SOURCE_BYTES {
            return Err(unreadable("is too large to place a logpoint in"));
        }
        let bytes = std::fs::read(&real).map_err(|_| unreadable("cannot be read"))?;
        Ok(String::from_utf8_lossy(&bytes).into_owned())
    }
}
