//! Artifacts: files a person hands over as evidence (a screenshot, a crash
//! dump, a HAR). They are copied into the session's `artifacts/` directory
//! so the evidence survives the original being moved or deleted.
//!
//! One check admits them, whichever way they arrive (`debug/attach`, the
//! `artifacts` of `debug/proceed`): the path, every link resolved, must lead
//! to a regular file of at most `MAX_ARTIFACT` bytes inside the workspace or
//! one of the places a person keeps such files (`Sources`), and never into
//! the system's own trees.

use crate::core::error::DomainError;
use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};

/// The largest file taken as evidence: a screenshot, a HAR or a crash
/// dump is well under it; a disk image is not evidence for a model.
pub const MAX_ARTIFACT: u64 = 16 * 1024 * 1024;

/// Trees never read, whatever the places allowed say: the kernel's views
/// of processes and devices, and the system's configuration.
const NEVER: [&str; 4] = ["/proc", "/sys", "/dev", "/etc"];

/// Folders of the home directory where screenshots, downloads and saved
/// files land; never the whole home (keys, tokens and shell history live
/// there).
const HOME_PLACES: [&str; 4] = ["Downloads", "Desktop", "Pictures", "Screenshots"];

/// Where artifacts may come from, canonical.
#[derive(Debug, Clone)]
pub struct Sources {
    workspace: PathBuf,
    places: Vec<PathBuf>,
}

impl Sources {
    /// The workspace, the OS temp directory and the home folders of
    /// `HOME_PLACES`. A place that is `/` or holds a tree of `NEVER` or the
    /// home directory itself (`HOME=/`, `TMPDIR=$HOME`) is left out.
    pub fn new(workspace: &Path, home: Option<&Path>, temp: &Path) -> Self {
        let home = home.and_then(|home| home.canonicalize().ok());
        let candidates = home
            .iter()
            .flat_map(|home| HOME_PLACES.iter().map(move |place| home.join(place)))
            .chain([temp.to_path_buf()]);
        let places = candidates
            .filter_map(|place| place.canonicalize().ok())
            .filter(|place| {
                let too_wide = place.parent().is_none()
                    || NEVER
                        .iter()
                        .any(|never| Path::new(never).starts_with(place))
                    || home.as_ref().is_some_and(|home| home.starts_with(place));
                !too_wide
            })
            .collect();
        Sources {
            workspace: workspace
                .canonicalize()
                .unwrap_or_else(|_| workspace.to_path_buf()),
            places,
        }
    }

    /// From this process's environment: `HOME` and the temp directory.
    pub fn from_env(workspace: &Path) -> Self {
        let home = std::env::var_os("HOME").map(PathBuf::from);
        Sources::new(workspace, home.as_deref(), &std::env::temp_dir())
    }

    /// Why `file` (canonical) is not taken, if it is not.
    fn refusal(&self, file: &Path) -> Option<String> {
        if let Some(never) = NEVER.iter().find(|never| file.starts_with(never)) {
            return Some(format!(
                "{} is in {never}, which is never taken as evidence",
                file.display()
            ));
        }
        let inside = file.starts_with(&self.workspace)
            || self.places.iter().any(|place| file.starts_with(place));
        if inside {
            return None;
        }
        let places: Vec<String> = self
            .places
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        let elsewhere = if places.is_empty() {
            String::new()
        } else {
            format!(
                " and the places evidence is taken from ({})",
                places.join(", ")
            )
        };
        Some(format!(
            "{} is outside the workspace ({}){elsewhere}; copy it into the workspace first",
            file.display(),
            self.workspace.display()
        ))
    }
}

/// The file `path` names (relative to the workspace root, or absolute),
/// canonical, when it may be taken as evidence; else `-32602` naming
/// `field` and saying why.
pub fn admissible(path: &str, field: &str, sources: &Sources) -> Result<PathBuf, DomainError> {
    let refuse = |why: String| DomainError::invalid(field, why);
    let given = Path::new(path.trim());
    if given.as_os_str().is_empty() {
        return Err(refuse("must name a file".into()));
    }
    let joined = if given.is_absolute() {
        given.to_path_buf()
    } else {
        sources.workspace.join(given)
    };
    // Every link resolved: a link in the workspace leads where it leads.
    let file = joined
        .canonicalize()
        .map_err(|e| refuse(format!("{} cannot be read: {e}", joined.display())))?;
    if let Some(why) = sources.refusal(&file) {
        return Err(refuse(why));
    }
    let metadata = fs::metadata(&file)
        .map_err(|e| refuse(format!("{} cannot be read: {e}", file.display())))?;
    check_file(&file, &metadata).map_err(refuse)?;
    Ok(file)
}

/// A regular file within the cap, or why not.
fn check_file(file: &Path, metadata: &fs::Metadata) -> Result<(), String> {
    if !metadata.is_file() {
        return Err(format!("{} is not a regular file", file.display()));
    }
    if metadata.len() > MAX_ARTIFACT {
        return Err(format!(
            "{} is {}; an artifact is at most {} (attach a part of it, or compress it)",
            file.display(),
            mebibytes(metadata.len()),
            mebibytes(MAX_ARTIFACT)
        ));
    }
    Ok(())
}

fn mebibytes(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

/// Copy an admitted `source` into `dir`, keeping its name unless that is
/// taken. The file is opened without following a link and checked again
/// as opened, so one swapped in after the check is not copied.
pub fn copy_in(source: &Path, dir: &Path) -> io::Result<PathBuf> {
    let mut original = crate::workspace::runlog::open_own(source)?;
    check_file(source, &original.metadata()?).map_err(io::Error::other)?;
    fs::create_dir_all(dir)?;
    let name = source
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "artifact".into());
    let (stem, extension) = match name.rsplit_once('.') {
        Some((stem, extension)) if !stem.is_empty() => (stem.to_string(), format!(".{extension}")),
        _ => (name.clone(), String::new()),
    };
    // Claim the name with `create_new`, so two copies never share one.
    let mut n = 1;
    loop {
        let target = if n == 1 {
            dir.join(&name)
        } else {
            dir.join(format!("{stem}-{n}{extension}"))
        };
        match fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&target)
        {
            Ok(mut claimed) => {
                // A file still growing is cut at the cap, and refused.
                let copied = io::copy(&mut (&mut original).take(MAX_ARTIFACT + 1), &mut claimed);
                let outcome = match copied {
                    Ok(bytes) if bytes > MAX_ARTIFACT => Err(io::Error::other(format!(
                        "{} grew past {} while it was copied",
                        source.display(),
                        mebibytes(MAX_ARTIFACT)
                    ))),
                    Ok(_) => Ok(target.clone()),
                    Err(e) => Err(e),
                };
                if outcome.is_err() {
                    let _ = fs::remove_file(&target);
                }
                return outcome;
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => n += 1,
            Err(e) => return Err(e),
        }
    }
}

/// Removes copies no recorded state names (the command that would have
/// recorded them failed).
pub fn forget_copies(copies: &[PathBuf]) {
    for copy in copies {
        let _ = fs::remove_file(copy);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_inside_the_workspace_or_the_places_evidence_lands_only() {
        let base = std::env::temp_dir().join(format!("ds-artifacts-{}", std::process::id()));
        let _ = fs::remove_dir_all(&base);
        let root = base.join("work");
        let home = base.join("home");
        let temp = base.join("temp");
        for dir in [&root, &home.join("Downloads"), &temp] {
            fs::create_dir_all(dir).unwrap();
        }
        fs::write(root.join("shot.png"), b"png").unwrap();
        fs::write(home.join("Downloads/trace.har"), b"har").unwrap();
        fs::write(home.join(".bash_history"), b"secret").unwrap();
        fs::write(temp.join("dump.txt"), b"dump").unwrap();
        std::os::unix::fs::symlink("/etc/passwd", root.join("link.png")).unwrap();
        let sources = Sources::new(&root, Some(&home), &temp);
        let admitted = |path: &Path| admissible(path.to_str().unwrap(), "path", &sources);
        assert!(admissible("shot.png", "path", &sources).is_ok());
        assert!(admitted(&home.join("Downloads/trace.har")).is_ok());
        assert!(admitted(&temp.join("dump.txt")).is_ok());
        for bad in [
            home.join(".bash_history"),
            root.join("link.png"),
            root.join("missing.png"),
            root.clone(),
            PathBuf::from("/etc/hostname"),
            PathBuf::from("/proc/self/environ"),
            PathBuf::from("/dev/zero"),
        ] {
            let refused = admitted(&bad).expect_err(&bad.display().to_string());
            assert!(
                matches!(&refused, DomainError::Invalid { field, .. } if field == "path"),
                "{refused:?}"
            );
        }
        assert!(admissible("../home/.bash_history", "path", &sources).is_err());
        assert!(admissible(" ", "path", &sources).is_err());
        let artifacts = base.join("artifacts");
        let first = copy_in(&root.join("shot.png"), &artifacts).unwrap();
        let second = copy_in(&root.join("shot.png"), &artifacts).unwrap();
        assert_eq!(first.file_name().unwrap(), "shot.png");
        assert_eq!(second.file_name().unwrap(), "shot-2.png");
        fs::remove_dir_all(base).unwrap();
    }

    #[test]
    fn a_root_home_or_temp_directory_opens_nothing_beyond_the_workspace() {
        let root = std::env::temp_dir().join(format!("ds-artifacts-wide-{}", std::process::id()));
        fs::create_dir_all(&root).unwrap();
        let sources = Sources::new(&root, Some(Path::new("/")), Path::new("/"));
        assert!(sources.places.is_empty(), "{:?}", sources.places);
        let home = Path::new("/root");
        let sources = Sources::new(&root, Some(home), Path::new("/"));
        assert!(sources.refusal(&home.join(".ssh/id_rsa")).is_some());
        fs::remove_dir_all(root).unwrap();
    }
}
