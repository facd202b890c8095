//! Finding given texts anywhere in the tree (a fix certificate's
//! fingerprints): the same walk as the probe scan, so the same files, with
//! one multi-pattern search per file.

use super::{configure, relative};
use aho_corasick::AhoCorasick;
use ignore::{WalkBuilder, WalkState};
use serde::Serialize;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Bytes of a file searched; a larger file is searched in its first part.
const MAX_FILE: u64 = 64 << 20;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct TextFound {
    pub file: String,
    pub line: u64,
    pub text: String,
}

/// Every line of the files under `root` (and the workspace-relative
/// `extra` files) that holds one of `needles`, outside `skip` and outside
/// files that hold `exempt` (a document quoting the needles, as a fix
/// certificate does); and how many files were read. None when the needles
/// cannot be searched for. An `extra` file behind a symlink, or outside
/// the workspace, is not read.
pub fn find_texts(
    root: &Path,
    extra: &[String],
    needles: &[String],
    skip: Option<&Path>,
    exempt: &str,
) -> Option<(Vec<TextFound>, usize)> {
    let mut needles: Vec<&String> = needles.iter().filter(|n| !n.is_empty()).collect();
    if needles.is_empty() {
        return Some((Vec::new(), 0));
    }
    let exempt = exempt.to_string();
    needles.push(&exempt);
    let search = AhoCorasick::new(&needles).ok()?;
    let mut builder = WalkBuilder::new(root);
    configure(&mut builder, skip);
    let all: Mutex<(Vec<TextFound>, usize, Vec<PathBuf>)> = Mutex::default();
    builder.build_parallel().run(|| {
        let all = &all;
        let search = &search;
        let needles = &needles;
        Box::new(move |entry| {
            let Ok(entry) = entry else {
                return WalkState::Continue;
            };
            if !entry.file_type().is_some_and(|kind| kind.is_file()) {
                return WalkState::Continue;
            }
            let found = search_file(entry.path(), &relative(root, entry.path()), search, needles);
            if let Ok(mut all) = all.lock() {
                all.0.extend(found);
                all.1 += 1;
                all.2.push(entry.path().to_path_buf());
            }
            WalkState::Continue
        })
    });
    let (mut found, mut read, walked) = all.into_inner().unwrap_or_else(|p| p.into_inner());
    let inside = root.canonicalize().ok();
    for file in extra {
        let path = root.join(file);
        let own = std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_file())
            && path
                .canonicalize()
                .ok()
                .zip(inside.as_ref())
                .is_some_and(|(real, root)| real.starts_with(root));
        if walked.contains(&path) || !own {
            continue;
        }
        found.extend(search_file(&path, file, &search, &needles));
        read += 1;
    }
    found.sort();
    found.dedup();
    Some((found, read))
}

fn search_file(
    path: &Path,
    name: &str,
    search: &AhoCorasick,
    needles: &[&String],
) -> Vec<TextFound> {
    let Ok(file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let mut bytes = Vec::new();
    if file.take(MAX_FILE).read_to_end(&mut bytes).is_err() {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut line = 1;
    let mut counted = 0;
    let exempt = needles.len() - 1;
    for hit in search.find_iter(&bytes) {
        if hit.pattern().as_usize() == exempt {
            return Vec::new();
        }
        line += memchr::memchr_iter(b'\n', &bytes[counted..hit.start()]).count() as u64;
        counted = hit.start();
        out.push(TextFound {
            file: name.to_string(),
            line,
            text: needles[hit.pattern().as_usize()].clone(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn texts_are_found_with_their_lines_and_the_skipped_directory_is_not_read() {
        let root = std::env::temp_dir().join(format!("ds-texts-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(root.join("src")).unwrap();
        fs::create_dir_all(root.join("state")).unwrap();
        fs::write(
            root.join("src/a.py"),
            "x = 1\n# see r1-abc\ny = 'r1-abc r2-def'\n",
        )
        .unwrap();
        fs::write(root.join("state/r1.jsonl"), "r1-abc\n").unwrap();
        fs::write(root.join("clean.txt"), "r1-ab\n").unwrap();
        fs::write(
            root.join("quoted.json"),
            "{\"id\": \"r1-abc\", \"format\": \"doc\"}\n",
        )
        .unwrap();
        let needles = vec!["r1-abc".to_string(), "r2-def".to_string()];
        let (found, read) =
            find_texts(&root, &[], &needles, Some(&root.join("state")), "\"doc\"").unwrap();
        let at: Vec<(&str, u64, &str)> = found
            .iter()
            .map(|f| (f.file.as_str(), f.line, f.text.as_str()))
            .collect();
        assert_eq!(
            at,
            [
                ("src/a.py", 2, "r1-abc"),
                ("src/a.py", 3, "r1-abc"),
                ("src/a.py", 3, "r2-def")
            ]
        );
        assert_eq!(read, 3);
        // A named file behind a symlink (to one outside) is not read.
        let outside = std::env::temp_dir().join(format!("ds-texts-out-{}", std::process::id()));
        fs::write(&outside, "r2-def\n").unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&outside, root.join("state/linked")).unwrap();
            let (found, _) = find_texts(
                &root,
                &["state/linked".to_string()],
                &needles,
                Some(&root.join("state")),
                "\"doc\"",
            )
            .unwrap();
            assert!(found.iter().all(|f| f.file != "state/linked"), "{found:?}");
        }
        fs::remove_file(&outside).unwrap();
        fs::remove_dir_all(&root).unwrap();
    }
}
