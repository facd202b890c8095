//! Where the program under debug runs, seen from the sidecar (issue 32): on
//! this machine (`host`), or somewhere that cannot write the run's file and
//! reaches the ingest server by another address: a Docker container, an
//! Android emulator, the Windows side of WSL, a phone on the network. And
//! the path map that turns the paths such a program sees (`/app/src/x.py`)
//! back into the workspace's.

use serde::{Deserialize, Serialize};

/// Where the program a probe goes into runs.
#[derive(
    Debug,
    Clone,
    Copy,
    Default,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "kebab-case")]
pub enum Target {
    /// This machine: the block appends to the run's file (a browser page
    /// posts to the loopback ingest server).
    #[default]
    Host,
    /// A Docker container on this machine: posts to the Docker bridge's
    /// address on Linux (`host.docker.internal` elsewhere).
    Docker,
    /// The Android emulator: posts to 10.0.2.2, the emulator's name for
    /// this machine's loopback.
    AndroidEmulator,
    /// A device on the local network (a phone): posts to this machine's
    /// address on the network.
    Lan,
    /// A Windows program while the sidecar runs inside WSL: posts to
    /// localhost, which WSL forwards to the sidecar.
    Wsl,
}

impl Target {
    pub const ALL: [Target; 5] = [
        Target::Host,
        Target::Docker,
        Target::AndroidEmulator,
        Target::Lan,
        Target::Wsl,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Target::Host => "host",
            Target::Docker => "docker",
            Target::AndroidEmulator => "android-emulator",
            Target::Lan => "lan",
            Target::Wsl => "wsl",
        }
    }

    pub fn parse(text: &str) -> Option<Target> {
        let wanted = text.trim().to_ascii_lowercase().replace('_', "-");
        Target::ALL.into_iter().find(|t| t.name() == wanted)
    }

    /// Whether its blocks post to an ingest listener instead of writing
    /// the run's file.
    pub fn posts(self) -> bool {
        self != Target::Host
    }

    /// Whether its listener must accept connections from beyond loopback.
    pub fn beyond_loopback(self) -> bool {
        matches!(self, Target::Docker | Target::Lan)
    }

    /// Who the listener is for, for the board and the snippet's note.
    pub fn audience(self) -> &'static str {
        match self {
            Target::Host => "this machine",
            Target::Docker => "Docker containers",
            Target::AndroidEmulator => "the Android emulator",
            Target::Lan => "devices on the local network",
            Target::Wsl => "Windows programs (through WSL's localhost forwarding)",
        }
    }
}

/// Program paths to workspace paths: the longest matching prefix wins, and
/// a path no prefix matches is left as it is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PathMap {
    /// `(program prefix, workspace-relative prefix)`, longest first; both
    /// without a trailing `/`, the workspace side `""` for its root.
    entries: Vec<(String, String)>,
}

/// A path map entry that cannot be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadMapping(pub String);

impl std::fmt::Display for BadMapping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl PathMap {
    /// From `program path -> workspace path` pairs. The program side is
    /// absolute (`/app`, `C:\src\app`); the workspace side is relative to
    /// the workspace (`.`, `services/api`) and never leaves it.
    pub fn new<'a>(
        pairs: impl IntoIterator<Item = (&'a str, &'a str)>,
    ) -> Result<PathMap, BadMapping> {
        let mut entries = Vec::new();
        for (program, workspace) in pairs {
            let normalized = program.replace('\\', "/");
            let bytes = normalized.as_bytes();
            let drive = bytes.len() >= 2 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':';
            if !normalized.starts_with('/') && !drive {
                return Err(BadMapping(format!(
                    "`{program}`: a program path must be absolute (`/app`)"
                )));
            }
            let program_norm = normalized.trim_end_matches('/');
            let workspace = relative_inside(workspace).ok_or_else(|| {
                BadMapping(format!(
                    "`{program}` -> `{workspace}`: the workspace side must be a path inside the workspace (`.`, `src`)"
                ))
            })?;
            entries.push((program_norm.to_string(), workspace));
        }
        entries.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then(a.0.cmp(&b.0)));
        entries.dedup_by(|a, b| a.0 == b.0);
        Ok(PathMap { entries })
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The workspace-relative path for a path the program sees, when a
    /// prefix maps it: `/app/src/x.py` -> `src/x.py` under `/app -> .`. A
    /// path that climbs out (`/app/../etc`) maps to nothing.
    pub fn to_workspace(&self, path: &str) -> Option<String> {
        let path = path.replace('\\', "/");
        for (program, workspace) in &self.entries {
            let rest = if program.is_empty() {
                path.strip_prefix('/')
            } else {
                path.strip_prefix(program.as_str())
                    .and_then(|rest| match rest {
                        "" => Some(""),
                        _ => rest.strip_prefix('/'),
                    })
            };
            let Some(rest) = rest else { continue };
            let rest = relative_inside(if rest.is_empty() { "." } else { rest })?;
            return Some(match (workspace.is_empty(), rest.is_empty()) {
                (true, _) => rest,
                (false, true) => workspace.clone(),
                (false, false) => format!("{workspace}/{rest}"),
            });
        }
        None
    }

    /// A record's `location` (`path:line`, `path:line:column`, or a path)
    /// with its path mapped; `None` when no prefix maps it.
    pub fn location(&self, location: &str) -> Option<String> {
        let (path, suffix) = split_location(location);
        let mapped = self.to_workspace(path)?;
        Some(format!("{mapped}{suffix}"))
    }
}

/// `path` and what follows it (`:12`, `:12:3`): the trailing `:<digits>`
/// parts, so a Windows drive's `C:` stays in the path.
fn split_location(location: &str) -> (&str, &str) {
    let mut end = location.len();
    for _ in 0..2 {
        let Some(colon) = location[..end].rfind(':') else {
            break;
        };
        let digits = &location[colon + 1..end];
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            break;
        }
        end = colon;
    }
    location.split_at(end)
}

/// A relative path normalised (`./a//b/` -> `a/b`, `.` -> ``), or None when
/// it is absolute or climbs out of where it starts.
fn relative_inside(path: &str) -> Option<String> {
    let path = path.replace('\\', "/");
    if path.starts_with('/') || path.as_bytes().get(1) == Some(&b':') {
        return None;
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            part => parts.push(part),
        }
    }
    Some(parts.join("/"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn map(pairs: &[(&str, &str)]) -> PathMap {
        PathMap::new(pairs.iter().copied()).unwrap()
    }

    #[test]
    fn targets_have_one_name_each() {
        for target in Target::ALL {
            assert_eq!(Target::parse(target.name()), Some(target));
            let json = serde_json::to_value(target).unwrap();
            assert_eq!(json, serde_json::json!(target.name()));
        }
        assert_eq!(
            Target::parse("Android_Emulator"),
            Some(Target::AndroidEmulator)
        );
        assert_eq!(Target::parse("kubernetes"), None);
        assert!(!Target::Host.posts() && Target::Wsl.posts());
        assert!(Target::Docker.beyond_loopback() && !Target::AndroidEmulator.beyond_loopback());
    }

    #[test]
    fn the_longest_prefix_maps_a_path() {
        let m = map(&[
            ("/app", "."),
            ("/app/vendor", "third_party"),
            ("/srv/", "web"),
        ]);
        assert_eq!(m.to_workspace("/app/src/x.py").as_deref(), Some("src/x.py"));
        assert_eq!(
            m.to_workspace("/app/vendor/lib.py").as_deref(),
            Some("third_party/lib.py")
        );
        assert_eq!(
            m.to_workspace("/srv/index.js").as_deref(),
            Some("web/index.js")
        );
        assert_eq!(m.to_workspace("/srv").as_deref(), Some("web"));
        assert_eq!(m.to_workspace("/application/x.py"), None);
        assert_eq!(m.to_workspace("/other/x.py"), None);
        assert_eq!(m.to_workspace("/app/../etc/passwd"), None);
        assert_eq!(m.to_workspace("/app/a/../b.py").as_deref(), Some("b.py"));
    }

    #[test]
    fn locations_keep_their_line_and_column() {
        let m = map(&[("/app", "."), ("C:\\src\\shop", "shop")]);
        assert_eq!(m.location("/app/x.py:12").as_deref(), Some("x.py:12"));
        assert_eq!(m.location("/app/x.py:12:3").as_deref(), Some("x.py:12:3"));
        assert_eq!(m.location("/app/x.py").as_deref(), Some("x.py"));
        assert_eq!(
            m.location("C:\\src\\shop\\cart.cs:7").as_deref(),
            Some("shop/cart.cs:7")
        );
        assert_eq!(m.location("x.py:12"), None);
    }

    #[test]
    fn bad_entries_are_refused() {
        for (program, workspace) in [
            ("app", "."),
            ("/app", "/etc"),
            ("/app", "../outside"),
            ("/app", "a/../../b"),
            ("", "."),
        ] {
            assert!(
                PathMap::new([(program, workspace)]).is_err(),
                "{program} -> {workspace}"
            );
        }
        assert!(PathMap::new([("/", "sub")]).is_ok());
    }

    proptest! {
        /// Whatever the program reports, a mapped path is relative and
        /// never climbs out of the workspace.
        #[test]
        fn a_mapped_path_stays_inside(
            parts in prop::collection::vec(prop_oneof![
                Just("..".to_string()), Just(".".to_string()), Just(String::new()),
                "[a-z]{1,4}", Just("app".to_string()),
            ], 0..8),
            line in prop::option::of(0u32..5000),
        ) {
            let m = map(&[("/app", "."), ("/app/lib", "vendor/lib"), ("/", "root")]);
            let path = format!("/{}", parts.join("/"));
            let location = match line {
                Some(line) => format!("{path}:{line}"),
                None => path.clone(),
            };
            if let Some(mapped) = m.location(&location) {
                let (mapped_path, _) = split_location(&mapped);
                prop_assert!(!mapped_path.starts_with('/'), "{mapped}");
                prop_assert!(!mapped_path.split('/').any(|p| p == ".."), "{mapped}");
            }
        }
    }
}
