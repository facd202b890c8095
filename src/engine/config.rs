//! Where the engine works: the workspace, its state directory and the
//! session of requests that name none.

use std::path::PathBuf;

/// Where the engine works.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// The workspace root: scans walk it, probe files are relative to it.
    pub root: PathBuf,
    /// The state directory (`<root>/.debug-sidecar` unless overridden).
    pub state_dir: PathBuf,
    /// The session of requests that name none (from `initialize`).
    pub default_session: Option<String>,
}

/// The state directory's name under the workspace root.
pub const STATE_DIR_NAME: &str = ".debug-sidecar";
/// Overrides the state directory when no option names one.
pub const STATE_DIR_ENV: &str = "DEBUG_SIDECAR_DIR";
/// Names the session an agent's processes (the MCP face, hooks) act on;
/// without it they act on the workspace's most recently active session, the
/// one an editor started or shows.
pub const SESSION_ENV: &str = "DEBUG_SIDECAR_SESSION";

impl EngineConfig {
    /// The configuration of an agent's face (MCP, hooks) in `root`: the
    /// session from [`SESSION_ENV`], else whichever is most recently active.
    /// The harness's own session id is never the debug session's: the
    /// person may have started the debug session in an editor.
    pub fn for_agent(root: PathBuf) -> Self {
        let mut config = EngineConfig::for_workspace(root, None);
        config.default_session = std::env::var(SESSION_ENV).ok().filter(|s| !s.is_empty());
        config
    }

    /// The state directory for a workspace: the one given, else
    /// `$DEBUG_SIDECAR_DIR`, else `<root>/.debug-sidecar`; a relative one is
    /// taken from the root.
    pub fn for_workspace(root: PathBuf, state_dir: Option<PathBuf>) -> Self {
        let state_dir = state_dir
            .or_else(|| std::env::var_os(STATE_DIR_ENV).map(PathBuf::from))
            .map(|dir| {
                if dir.is_relative() {
                    root.join(dir)
                } else {
                    dir
                }
            })
            .unwrap_or_else(|| root.join(STATE_DIR_NAME));
        EngineConfig {
            root,
            state_dir,
            default_session: None,
        }
    }
}
