//! Artifacts: files a person hands over as evidence (a screenshot, a crash
//! dump, a HAR). They are copied into the session's `artifacts/` directory
//! so the evidence survives the original being moved or deleted.

use crate::core::error::DomainError;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

/// The file at `path` (relative to the workspace root, or absolute) when it
/// may be attached: an existing file inside the workspace or the user's home.
pub fn admissible(path: &str, root: &Path, home: Option<&Path>) -> Result<PathBuf, DomainError> {
    let given = Path::new(path.trim());
    if given.as_os_str().is_empty() {
        return Err(DomainError::invalid("path", "must name a file"));
    }
    let joined = if given.is_absolute() {
        given.to_path_buf()
    } else {
        root.join(given)
    };
    let file = joined.canonicalize().map_err(|e| {
        DomainError::invalid("path", format!("{} cannot be read: {e}", joined.display()))
    })?;
    if !file.is_file() {
        return Err(DomainError::invalid(
            "path",
            format!("{} is not a file", file.display()),
        ));
    }
    let inside = |dir: &Path| dir.canonicalize().is_ok_and(|dir| file.starts_with(dir));
    if !inside(root) && !home.is_some_and(inside) {
        return Err(DomainError::invalid(
            "path",
            format!(
                "{} is outside the workspace and your home directory; copy it into the workspace first",
                file.display()
            ),
        ));
    }
    Ok(file)
}

/// Copy `source` into `dir`, keeping its name unless that is taken.
pub fn copy_in(source: &Path, dir: &Path) -> io::Result<PathBuf> {
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
                io::copy(&mut fs::File::open(source)?, &mut claimed)?;
                return Ok(target);
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => n += 1,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_inside_the_workspace_or_home_only() {
        let base = std::env::temp_dir().join(format!("ds-artifacts-{}", std::process::id()));
        let root = base.join("work");
        let home = base.join("home");
        let elsewhere = base.join("elsewhere");
        for dir in [&root, &home, &elsewhere] {
            fs::create_dir_all(dir).unwrap();
        }
        fs::write(root.join("shot.png"), b"png").unwrap();
        fs::write(home.join("dump.txt"), b"dump").unwrap();
        fs::write(elsewhere.join("secret"), b"x").unwrap();
        assert!(admissible("shot.png", &root, Some(&home)).is_ok());
        assert!(admissible(home.join("dump.txt").to_str().unwrap(), &root, Some(&home)).is_ok());
        for bad in [
            elsewhere.join("secret").to_string_lossy().into_owned(),
            "../elsewhere/secret".to_string(),
            "missing.png".to_string(),
            "".to_string(),
        ] {
            assert!(
                admissible(&bad, &root, Some(&home)).is_err(),
                "{bad} was admitted"
            );
        }
        let artifacts = base.join("artifacts");
        let first = copy_in(&root.join("shot.png"), &artifacts).unwrap();
        let second = copy_in(&root.join("shot.png"), &artifacts).unwrap();
        assert_eq!(first.file_name().unwrap(), "shot.png");
        assert_eq!(second.file_name().unwrap(), "shot-2.png");
        fs::remove_dir_all(base).unwrap();
    }
}
