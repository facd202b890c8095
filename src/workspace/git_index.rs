//! Which paths under a folder git tracks, read from the repository's index
//! file itself (issue 33: no process on the hook path). The index format
//! (git's `Documentation/gitformat-index.txt`): a `DIRC` header with a
//! version (2, 3 or 4) and an entry count, then entries sorted by path, each
//! a fixed stat part, the object id (SHA-1 or SHA-256), flags and the path;
//! version 4 compresses each path against the one before it.
//!
//! What this reader does not follow (a split index, whose entries live in a
//! shared file; a sparse index, whose directory entries stand for many
//! files; a file too large or malformed) is answered `None`, and the caller
//! asks git instead.

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest index read (a 1M-file repository's is about 100 MiB).
const MAX_INDEX: u64 = 256 * 1024 * 1024;
/// Bytes of an entry before its object id: ctime, mtime, dev, ino, mode,
/// uid, gid and size, 4 bytes each.
const STAT_PART: usize = 40;
/// The mode of a sparse index's directory entry.
const DIRECTORY_MODE: u32 = 0o040000;

/// The index file of the repository whose work tree is `root`: `.git/index`,
/// or, where `.git` is a file (a worktree, a submodule), the index of the
/// directory it names.
pub fn index_path(root: &Path) -> Option<PathBuf> {
    let dot_git = root.join(".git");
    let meta = fs::metadata(&dot_git).ok()?;
    if meta.is_dir() {
        return Some(dot_git.join("index"));
    }
    if !meta.is_file() || meta.len() > 4096 {
        return None;
    }
    let text = fs::read_to_string(&dot_git).ok()?;
    let named = text.lines().next()?.strip_prefix("gitdir:")?.trim();
    if named.is_empty() {
        return None;
    }
    Some(root.join(named).join("index"))
}

/// Tracked paths that lie under `folder` (workspace-relative, `/`-separated)
/// in the index file at `index`: `Some(paths)` (possibly empty, also when
/// there is no index: nothing tracked yet), or `None` when the file is not
/// one this reader follows.
pub fn tracked_under(index: &Path, folder: &str) -> Option<Vec<String>> {
    let file = match fs::File::open(index) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Some(Vec::new()),
        Err(_) => return None,
    };
    let meta = file.metadata().ok()?;
    if !meta.is_file() || meta.len() > MAX_INDEX {
        return None;
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(MAX_INDEX).read_to_end(&mut bytes).ok()?;
    paths_under(&bytes, folder.trim_end_matches('/'))
}

/// The parse itself: the object id's size is not in the index, so each is
/// tried (SHA-1 first) and the one under which every entry reads whole wins.
pub fn paths_under(index: &[u8], folder: &str) -> Option<Vec<String>> {
    [20, 32]
        .into_iter()
        .find_map(|id_size| parse(index, id_size, folder))
}

fn parse(index: &[u8], id_size: usize, folder: &str) -> Option<Vec<String>> {
    if index.get(..4)? != b"DIRC" {
        return None;
    }
    let version = be32(index, 4)?;
    if !(2..=4).contains(&version) {
        return None;
    }
    let entries = be32(index, 8)?;
    let mut at = 12usize;
    let mut path: Vec<u8> = Vec::new();
    let mut found = Vec::new();
    for _ in 0..entries {
        let start = at;
        let mode = be32(index, start + 24)?;
        let flags_at = start + STAT_PART + id_size;
        let flags = u16::from_be_bytes(index.get(flags_at..flags_at + 2)?.try_into().ok()?);
        at = flags_at + 2;
        if flags & 0x4000 != 0 {
            if version < 3 {
                return None;
            }
            at += 2;
        }
        let name_length = usize::from(flags & 0x0fff);
        if version == 4 {
            let (strip, used) = varint(index.get(at..)?)?;
            at += used;
            let keep = path.len().checked_sub(usize::try_from(strip).ok()?)?;
            path.truncate(keep);
            let end = at + index.get(at..)?.iter().position(|b| *b == 0)?;
            path.extend_from_slice(&index[at..end]);
            at = end + 1;
        } else {
            let end = at + index.get(at..)?.iter().position(|b| *b == 0)?;
            path.clear();
            path.extend_from_slice(&index[at..end]);
            // Entries are padded with 1 to 8 NULs to a multiple of 8 bytes.
            at = start + (end - start + 8) / 8 * 8;
            if index.get(end..at)?.iter().any(|b| *b != 0) {
                return None;
            }
        }
        // The length in the flags is exact below 0xfff: the check that the
        // object id's size was guessed right.
        if name_length < 0x0fff && name_length != path.len() {
            return None;
        }
        if mode == DIRECTORY_MODE {
            return None;
        }
        if under(&path, folder) {
            found.push(String::from_utf8_lossy(&path).into_owned());
        }
    }
    // Extensions follow; a split index keeps its entries elsewhere.
    let checksum_at = index.len().checked_sub(id_size)?;
    while at + 8 <= checksum_at {
        // A lower-case signature is one a reader must understand (`link`
        // of a split index, `sdir` of a sparse one): none is followed here.
        if index[at].is_ascii_lowercase() {
            return None;
        }
        let size = usize::try_from(be32(index, at + 4)?).ok()?;
        at = at.checked_add(8 + size)?;
    }
    (at == checksum_at).then_some(found)
}

fn under(path: &[u8], folder: &str) -> bool {
    path.strip_prefix(folder.as_bytes())
        .is_some_and(|rest| rest.first() == Some(&b'/'))
}

fn be32(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

/// Git's offset varint (`varint.c`): 7 bits a byte, high bit set while more
/// follow, each continuation adding one before the shift.
fn varint(bytes: &[u8]) -> Option<(u64, usize)> {
    let mut value = u64::from(*bytes.first()? & 0x7f);
    let mut used = 1;
    let mut byte = bytes[0];
    while byte & 0x80 != 0 {
        byte = *bytes.get(used)?;
        used += 1;
        value = value.checked_add(1)?.checked_mul(128)? | u64::from(byte & 0x7f);
    }
    Some((value, used))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(root: &Path, args: &[&str]) -> bool {
        Command::new("git")
            .arg("-C")
            .arg(root)
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success())
    }

    fn ls_files(root: &Path, folder: &str) -> Vec<String> {
        let out = Command::new("git")
            .arg("-C")
            .arg(root)
            .args(["ls-files", "-z", "--", folder])
            .output()
            .unwrap();
        out.stdout
            .split(|b| *b == 0)
            .filter(|n| !n.is_empty())
            .map(|n| String::from_utf8_lossy(n).into_owned())
            .collect()
    }

    /// A repository with files in and beside the state folder, in every
    /// index version, against `git ls-files`.
    fn repository(name: &str, init: &[&str]) -> Option<PathBuf> {
        let root = std::env::temp_dir().join(format!("ds-git-index-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(root.join(".debug-sidecar/runs")).unwrap();
        fs::create_dir_all(root.join(".debug-sidecar-other")).unwrap();
        fs::create_dir_all(root.join("src/deep/deeper")).unwrap();
        let mut args = vec!["init", "-q"];
        args.extend_from_slice(init);
        if !git(&root, &args) {
            return None;
        }
        for file in [
            ".debug-sidecar/sessions.json",
            ".debug-sidecar/runs/r1-a.jsonl",
            ".debug-sidecar-other/x",
            ".debug-sidecar.txt",
            "src/deep/deeper/a-rather-long-file-name-to-share-a-prefix.rs",
            "src/deep/deeper/a-rather-long-file-name-to-share-a-prefix2.rs",
            "zeta",
        ] {
            fs::write(root.join(file), file).unwrap();
        }
        Some(root)
    }

    fn agrees(root: &Path) {
        let index = index_path(root).unwrap();
        for folder in [
            ".debug-sidecar",
            ".debug-sidecar/runs",
            "src/deep",
            "absent",
        ] {
            let mut read = tracked_under(&index, folder).expect("a readable index");
            read.sort();
            assert_eq!(
                read,
                ls_files(root, folder),
                "{folder} in {}",
                root.display()
            );
        }
    }

    #[test]
    fn every_index_version_reads_as_git_lists_it() {
        let Some(root) = repository("versions", &[]) else {
            return; // no git here
        };
        assert_eq!(
            tracked_under(&index_path(&root).unwrap(), ".debug-sidecar"),
            Some(vec![])
        );
        assert!(git(&root, &["add", "."]));
        assert!(git(&root, &["add", "-N", "-f", "zeta"]));
        for version in ["2", "3", "4", "2"] {
            assert!(git(&root, &["update-index", "--index-version", version]));
            agrees(&root);
        }
        // An intent-to-add entry carries the extended flags (version 3).
        fs::write(root.join(".debug-sidecar/new"), "n").unwrap();
        assert!(git(&root, &["add", "-N", ".debug-sidecar/new"]));
        agrees(&root);
        assert!(git(&root, &["commit", "-qm", "c"]));
        assert!(git(&root, &["rm", "-rq", "--cached", ".debug-sidecar"]));
        agrees(&root);
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn sha256_repositories_and_worktrees_read_too() {
        let Some(root) = repository("sha256", &["--object-format=sha256"]) else {
            return;
        };
        assert!(git(&root, &["add", "."]));
        agrees(&root);
        assert!(git(&root, &["commit", "-qm", "c"]));
        let tree = root.with_extension("tree");
        let _ = fs::remove_dir_all(&tree);
        assert!(git(
            &root,
            &["worktree", "add", "-q", tree.to_str().unwrap()]
        ));
        assert!(fs::symlink_metadata(tree.join(".git")).unwrap().is_file());
        agrees(&tree);
        let _ = fs::remove_dir_all(&tree);
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn a_split_index_is_left_to_git() {
        let Some(root) = repository("split", &[]) else {
            return;
        };
        assert!(git(&root, &["add", "."]));
        assert!(git(&root, &["update-index", "--split-index"]));
        assert_eq!(
            tracked_under(&index_path(&root).unwrap(), ".debug-sidecar"),
            None
        );
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn malformed_indexes_are_refused_not_misread() {
        let Some(root) = repository("malformed", &[]) else {
            return;
        };
        assert!(git(&root, &["add", "."]));
        let bytes = fs::read(index_path(&root).unwrap()).unwrap();
        assert!(paths_under(&bytes, ".debug-sidecar").is_some_and(|p| p.len() == 2));
        for cut in [0, 3, 12, 50, bytes.len() / 2, bytes.len() - 1] {
            assert_eq!(
                paths_under(&bytes[..cut], ".debug-sidecar"),
                None,
                "cut at {cut}"
            );
        }
        let mut wrong = bytes.clone();
        wrong[7] = 9;
        assert_eq!(paths_under(&wrong, ".debug-sidecar"), None);
        let _ = fs::remove_dir_all(&root);
    }

    #[test]
    fn varints_read_as_git_writes_them() {
        assert_eq!(varint(&[0x05]), Some((5, 1)));
        assert_eq!(varint(&[0x80, 0x00]), Some((128, 2)));
        assert_eq!(varint(&[0x81, 0x7f]), Some((383, 2)));
        assert_eq!(varint(&[0x80]), None);
    }
}
