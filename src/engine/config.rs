//! Where the engine works: the workspace, its state directory and the
//! session of requests that name none.

use std::fmt;
use std::path::{Component, Path, PathBuf};

/// Where the engine works.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    /// The workspace root: scans walk it, probe files are relative to it.
    pub root: PathBuf,
    /// The state directory (`<root>/.debug-sidecar` unless overridden).
    pub state_dir: PathBuf,
    /// The session of requests that name none (from `initialize`).
    pub default_session: Option<String>,
    /// The client's own tools that edit files (`editTools` from
    /// `initialize`): a call of one is followed by a probe rescan, like the
    /// edit tools the sidecar knows by name.
    pub edit_tools: Vec<String>,
}

/// The state directory's name under the workspace root.
pub const STATE_DIR_NAME: &str = ".debug-sidecar";
/// Overrides the state directory when no option names one.
pub const STATE_DIR_ENV: &str = "DEBUG_SIDECAR_DIR";
/// Names the session an agent's processes (the MCP face, hooks) act on;
/// without it they act on the workspace's most recently active session, the
/// one an editor started or shows.
pub const SESSION_ENV: &str = "DEBUG_SIDECAR_SESSION";

/// The workspace a process started in `cwd` works on: the nearest ancestor
/// holding a state directory, else the nearest holding `.git`, else `cwd`.
/// Every agent face walks up alike, so a harness started in a subfolder has
/// one workspace for its hooks and its MCP server.
pub fn workspace_root(cwd: &Path) -> PathBuf {
    for marker in [STATE_DIR_NAME, ".git"] {
        if let Some(root) = cwd.ancestors().find(|dir| dir.join(marker).exists()) {
            return root.to_path_buf();
        }
    }
    cwd.to_path_buf()
}

/// Who named the state directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StateDirOrigin {
    /// The caller: `initializationOptions.stateDir`, `--state-dir`.
    Given,
    /// `$DEBUG_SIDECAR_DIR`.
    Env,
}

/// A state directory that would be the workspace itself or hold it: its
/// `.gitignore` of `*` would hide the whole workspace from git, and its
/// files would mix with the person's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDirError {
    pub origin: StateDirOrigin,
    /// As it was given.
    pub given: PathBuf,
    /// Where it leads, and why that cannot be the state directory.
    pub reason: String,
}

impl fmt::Display for StateDirError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.origin {
            StateDirOrigin::Given => write!(f, "the state directory {:?} ", self.given)?,
            StateDirOrigin::Env => write!(f, "{STATE_DIR_ENV}={:?} ", self.given)?,
        }
        f.write_str(&self.reason)
    }
}

impl std::error::Error for StateDirError {}

impl EngineConfig {
    /// The configuration of an agent's face (MCP, hooks) in `root`: the
    /// session from [`SESSION_ENV`], else whichever is most recently active.
    /// The harness's own session id is never the debug session's: the
    /// person may have started the debug session in an editor.
    pub fn for_agent(root: PathBuf) -> Result<Self, StateDirError> {
        let mut config = EngineConfig::for_workspace(root, None)?;
        config.default_session = std::env::var(SESSION_ENV).ok().filter(|s| !s.is_empty());
        Ok(config)
    }

    /// The state directory for a workspace: the one given, else
    /// `$DEBUG_SIDECAR_DIR` (empty counts as unset), else
    /// `<root>/.debug-sidecar`; a relative one is taken from the root. One
    /// that is the workspace or holds it is refused.
    pub fn for_workspace(root: PathBuf, state_dir: Option<PathBuf>) -> Result<Self, StateDirError> {
        let named = match state_dir {
            Some(dir) => Some((StateDirOrigin::Given, dir)),
            None => std::env::var_os(STATE_DIR_ENV)
                .filter(|dir| !dir.is_empty())
                .map(|dir| (StateDirOrigin::Env, PathBuf::from(dir))),
        };
        let state_dir = match named {
            None => root.join(STATE_DIR_NAME),
            Some((origin, given)) => {
                let dir = if given.is_relative() {
                    root.join(&given)
                } else {
                    given.clone()
                };
                if let Some(reason) = unusable_state_dir(&root, &given, &dir) {
                    return Err(StateDirError {
                        origin,
                        given,
                        reason,
                    });
                }
                dir
            }
        };
        Ok(EngineConfig {
            root,
            state_dir,
            default_session: None,
            edit_tools: Vec::new(),
        })
    }
}

/// Why `dir` (as `given`) cannot be the state directory of `root`, if so.
fn unusable_state_dir(root: &Path, given: &Path, dir: &Path) -> Option<String> {
    const MUST: &str =
        "it must name a directory other than the workspace and not above it (the default is <workspace>/.debug-sidecar)";
    if given.as_os_str().is_empty() {
        return Some(format!("is empty, which is the workspace itself; {MUST}"));
    }
    let (root, dir) = (resolved(root), resolved(dir));
    if root == dir {
        Some(format!(
            "is the workspace itself ({}); {MUST}",
            dir.display()
        ))
    } else if root.starts_with(&dir) {
        Some(format!(
            "is above the workspace ({} is inside {}); {MUST}",
            root.display(),
            dir.display()
        ))
    } else {
        None
    }
}

/// `path` as the file system resolves it, links included, when it may not
/// exist yet: its longest existing part canonicalized, the rest taken as
/// written (`..` removing a part).
fn resolved(path: &Path) -> PathBuf {
    let parts: Vec<Component> = path.components().collect();
    for split in (0..=parts.len()).rev() {
        let head: PathBuf = parts[..split].iter().collect();
        let head = if head.as_os_str().is_empty() {
            PathBuf::from(".")
        } else {
            head
        };
        let Ok(mut out) = head.canonicalize() else {
            continue;
        };
        for part in &parts[split..] {
            match part {
                Component::ParentDir => {
                    out.pop();
                }
                Component::Normal(name) => out.push(name),
                _ => {}
            }
        }
        return out;
    }
    path.to_path_buf()
}

/// Set to `off` (or `0`, `false`) where wakers run to keep the agent from
/// being woken: a Proceed given away from its chat then waits for the
/// person to go on there.
pub const WAKE_ENV: &str = "DEBUG_SIDECAR_WAKE";

/// Whether this process may wake the agent (`DEBUG_SIDECAR_WAKE`).
pub fn wakes_enabled() -> bool {
    !std::env::var(WAKE_ENV).is_ok_and(|v| matches!(v.trim(), "off" | "0" | "false" | "no"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_directory_is_never_the_workspace_or_above_it() {
        let base = std::env::temp_dir().join(format!("ds-config-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&base);
        let root = base.join("work");
        std::fs::create_dir_all(&root).unwrap();
        std::os::unix::fs::symlink(&root, base.join("link")).unwrap();
        let refused = |dir: &str| {
            EngineConfig::for_workspace(root.clone(), Some(PathBuf::from(dir))).is_err()
        };
        for dir in [
            "",
            ".",
            "./",
            "..",
            "sub/../..",
            "/",
            base.to_str().unwrap(),
        ] {
            assert!(refused(dir), "{dir:?} was taken");
        }
        let linked = base.join("link");
        assert!(refused(linked.to_str().unwrap()), "a link to the workspace");
        for dir in [".debug-sidecar", "state/here", "../elsewhere"] {
            assert!(!refused(dir), "{dir:?} was refused");
        }
        let error = EngineConfig::for_workspace(root.clone(), Some(".".into())).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("the state directory \".\" is the workspace itself"),
            "{error}"
        );
        let _ = std::fs::remove_dir_all(&base);
    }
}
