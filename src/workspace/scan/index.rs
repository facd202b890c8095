//! The decision rescan: what every decision that depends on the disk
//! (hand-off, Proceed, Mark fixed, Stop, abort, status) reads instead of the
//! whole tree, so shell edits are seen at the cost of a `stat` per file.
//!
//! The index keeps, from the last scan, each walked file's and directory's
//! stamp (mtime, ctime, size, inode) and which files held a finding ("hot").
//! A file that held nothing and whose stamp did not change still holds
//! nothing, so reading the hot files, the tracked files, the files whose
//! stamp changed and the new files in changed directories sees all that a
//! full walk would. When an ignore file changed (what is walked may differ)
//! or there is no index, the full walk runs instead.
//!
//! Several processes may write the index; each entry is a true observation
//! (the stamp was taken before the file was read), so a lost update only
//! costs a read later, never a missed change.

use super::{configure, read_files, relative, scan_workspace, walk, Findings, ScanTarget};
use crate::core::findings::Finding;
use ignore::WalkBuilder;
use std::collections::{BTreeSet, HashMap};
use std::fs::{self, Metadata};
use std::io::{self, Write};
use std::path::Path;

/// The index file, in the state directory.
pub const INDEX_FILE: &str = "scan-index";
const HEADER: &str = "debug-sidecar scan-index 1";
/// Names whose change can change what the walk sees.
const IGNORE_FILES: &[&str] = &[".gitignore", ".ignore", ".git"];

/// What identifies one version of a file or directory.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Stamp {
    pub mtime_ns: i64,
    pub ctime_ns: i64,
    pub size: u64,
    pub inode: u64,
}

impl Stamp {
    // The field types differ between platforms: the casts are for the others.
    #[cfg(unix)]
    #[allow(clippy::unnecessary_cast)]
    fn from_stat(st: &rustix::fs::Stat) -> Self {
        Stamp {
            mtime_ns: (st.st_mtime as i64).saturating_mul(1_000_000_000) + st.st_mtime_nsec as i64,
            ctime_ns: (st.st_ctime as i64).saturating_mul(1_000_000_000) + st.st_ctime_nsec as i64,
            size: st.st_size as u64,
            inode: st.st_ino as u64,
        }
    }

    pub fn of(meta: &Metadata) -> Self {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Stamp {
                mtime_ns: meta.mtime().saturating_mul(1_000_000_000) + meta.mtime_nsec(),
                ctime_ns: meta.ctime().saturating_mul(1_000_000_000) + meta.ctime_nsec(),
                size: meta.size(),
                inode: meta.ino(),
            }
        }
        #[cfg(not(unix))]
        {
            let mtime_ns = meta
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as i64);
            Stamp {
                mtime_ns,
                ctime_ns: 0,
                size: meta.len(),
                inode: 0,
            }
        }
    }
}

/// The stamps of one directory and of the files the walk read in it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DirStamps {
    /// Zero when the walk could not stamp the directory (always "changed").
    pub stamp: Stamp,
    /// File name -> stamp.
    pub files: HashMap<String, Stamp>,
}

/// Walked directories by workspace-relative path (`""` is the root), and the
/// files that held a finding.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ScanIndex {
    pub dirs: HashMap<String, DirStamps>,
    /// Files (workspace-relative) that held a finding when last read.
    pub hot: BTreeSet<String>,
}

/// `dir/name` split at its last `/` (a file at the root is in `""`).
fn split(path: &str) -> (&str, &str) {
    match path.rfind('/') {
        Some(at) => (&path[..at], &path[at + 1..]),
        None => ("", path),
    }
}

fn join(dir: &str, name: &str) -> String {
    if dir.is_empty() {
        name.to_string()
    } else {
        format!("{dir}/{name}")
    }
}

impl ScanIndex {
    pub fn insert_file(&mut self, path: &str, stamp: Stamp) {
        let (dir, name) = split(path);
        self.dirs
            .entry(dir.to_string())
            .or_default()
            .files
            .insert(name.to_string(), stamp);
    }

    pub fn insert_dir(&mut self, path: &str, stamp: Stamp) {
        self.dirs.entry(path.to_string()).or_default().stamp = stamp;
    }

    pub fn contains_file(&self, path: &str) -> bool {
        let (dir, name) = split(path);
        self.dirs
            .get(dir)
            .is_some_and(|d| d.files.contains_key(name))
    }

    pub fn file_count(&self) -> usize {
        self.dirs.values().map(|d| d.files.len()).sum()
    }

    fn extend(&mut self, other: ScanIndex) {
        for (path, dir) in other.dirs {
            let entry = self.dirs.entry(path).or_default();
            entry.stamp = dir.stamp;
            entry.files.extend(dir.files);
        }
        self.hot.extend(other.hot);
    }

    pub fn mark_hot(&mut self, found: &[Finding]) {
        self.hot.extend(found.iter().map(|f| f.file.clone()));
    }

    /// The index saved in `state_dir`; None when there is none or it cannot
    /// be read (the next scan is then a full walk).
    pub fn load(state_dir: &Path) -> Option<ScanIndex> {
        let text = fs::read_to_string(state_dir.join(INDEX_FILE)).ok()?;
        let mut lines = text.lines();
        if lines.next()? != HEADER {
            return None;
        }
        let mut index = ScanIndex::default();
        let mut current: Option<String> = None;
        for line in lines {
            let (kind, rest) = line.split_once(' ')?;
            if kind == "h" {
                index.hot.insert(unescape(rest));
                continue;
            }
            let mut fields = rest.splitn(5, ' ');
            let mut number = || fields.next()?.parse::<i64>().ok();
            let stamp = Stamp {
                mtime_ns: number()?,
                ctime_ns: number()?,
                size: number()? as u64,
                inode: number()? as u64,
            };
            let name = unescape(fields.next()?);
            match kind {
                "d" => {
                    index.dirs.entry(name.clone()).or_default().stamp = stamp;
                    current = Some(name);
                }
                "f" => {
                    let dir = index.dirs.get_mut(current.as_ref()?)?;
                    dir.files.insert(name, stamp);
                }
                _ => return None,
            }
        }
        Some(index)
    }

    /// Writes the index atomically (a temp file renamed into place).
    pub fn save(&self, state_dir: &Path) -> io::Result<()> {
        use std::fmt::Write as _;
        let mut out = String::with_capacity(48 * self.file_count() + 64 * self.dirs.len() + 32);
        out.push_str(HEADER);
        out.push('\n');
        let mut line = |kind: &str, stamp: &Stamp, name: &str| {
            let _ = writeln!(
                out,
                "{kind} {} {} {} {} {}",
                stamp.mtime_ns,
                stamp.ctime_ns,
                stamp.size as i64,
                stamp.inode as i64,
                escape(name)
            );
        };
        for (path, dir) in &self.dirs {
            line("d", &dir.stamp, path);
            for (name, stamp) in &dir.files {
                line("f", stamp, name);
            }
        }
        for path in &self.hot {
            let _ = writeln!(out, "h {}", escape(path));
        }
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        let temp = state_dir.join(format!("{INDEX_FILE}.{}.{nanos}.tmp", std::process::id()));
        let result = (|| {
            let mut file = fs::File::create(&temp)?;
            file.write_all(out.as_bytes())?;
            fs::rename(&temp, state_dir.join(INDEX_FILE))
        })();
        if result.is_err() {
            let _ = fs::remove_file(&temp);
        }
        result
    }
}

/// A rescan for a decision (`full`: the whole walk), with the index loaded
/// from and saved to `state_dir`. The index is saved only where the state
/// directory exists: a scan never creates it.
pub fn rescan(state_dir: &Path, target: &ScanTarget, full: bool) -> (Findings, RescanStats) {
    let previous = if full {
        None
    } else {
        ScanIndex::load(state_dir)
    };
    let (findings, index, stats) = decision_scan(target, previous);
    if state_dir.is_dir() {
        if let Err(error) = index.save(state_dir) {
            tracing::warn!("could not save the scan index: {error}");
        }
    }
    tracing::debug!(
        "probe scan: full walk {}, {} stamped, {} read",
        stats.full_walk,
        stats.stamped,
        stats.read
    );
    (findings, stats)
}

fn escape(path: &str) -> String {
    path.replace('\\', "\\\\")
        .replace('\n', "\\n")
        .replace('\r', "\\r")
}

fn unescape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('n') => out.push('\n'),
            Some('r') => out.push('\r'),
            Some(other) => out.push(other),
            None => out.push('\\'),
        }
    }
    out
}

/// How a decision rescan went, for the benchmark and the logs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct RescanStats {
    pub full_walk: bool,
    pub stamped: usize,
    pub read: usize,
}

/// One indexed directory as it is now.
struct DirCheck {
    dir: String,
    /// None: the directory is gone (or is no longer a directory).
    now: Option<Stamp>,
    /// Files still there, with their stamps now.
    files: Vec<(String, Stamp)>,
    /// Files whose stamp changed.
    changed: Vec<String>,
    /// Files gone.
    gone: Vec<String>,
}

/// The decision rescan against `previous` (None: a full walk).
pub fn decision_scan(
    target: &ScanTarget,
    previous: Option<ScanIndex>,
) -> (Findings, ScanIndex, RescanStats) {
    let full = |target: &ScanTarget| {
        let (findings, index) = scan_workspace(target);
        let stats = RescanStats {
            full_walk: true,
            stamped: index.file_count() + index.dirs.len(),
            read: findings.files_read,
        };
        (findings, index, stats)
    };
    let Some(previous) = previous.filter(|p| !p.dirs.is_empty()) else {
        return full(target);
    };
    let root = &target.root;
    let checks = check_dirs(root, &previous);
    let mut next = ScanIndex::default();
    let mut to_read: BTreeSet<String> = previous.hot.clone();
    to_read.extend(target.tracked.iter().cloned());
    let mut changed_dirs = Vec::new();
    for check in checks {
        if check
            .changed
            .iter()
            .chain(&check.gone)
            .any(|name| IGNORE_FILES.contains(&name.as_str()))
        {
            return full(target);
        }
        let Some(now) = check.now else {
            continue; // gone: its files are gone too
        };
        let known = &previous.dirs[&check.dir];
        if now != known.stamp {
            changed_dirs.push(check.dir.clone());
        }
        for name in &check.changed {
            to_read.insert(join(&check.dir, name));
        }
        let entry = next.dirs.entry(check.dir).or_default();
        entry.stamp = now;
        entry.files.extend(check.files);
    }
    let stamped = previous.file_count() + previous.dirs.len();
    let mut findings = Findings::default();
    for dir in changed_dirs {
        let known = &previous.dirs[&dir];
        let mut builder = WalkBuilder::new(root.join(&dir));
        configure(&mut builder, target.state_dir.as_deref());
        builder.max_depth(Some(1));
        for entry in builder.build().flatten() {
            if entry.depth() == 0 {
                continue;
            }
            let path = relative(root, entry.path());
            let Some(kind) = entry.file_type() else {
                continue;
            };
            let name = split(&path).1;
            if kind.is_file() && !known.files.contains_key(name) {
                if IGNORE_FILES.contains(&name) {
                    return full(target);
                }
                if let Ok(meta) = entry.metadata() {
                    next.insert_file(&path, Stamp::of(&meta));
                }
                to_read.insert(path);
            } else if kind.is_dir() && !previous.dirs.contains_key(&path) {
                // A new directory: all of it is new.
                let (found, index) = walk(
                    root,
                    &[entry.path().to_path_buf()],
                    &target.clues,
                    target.state_dir.as_deref(),
                );
                next.extend(index);
                findings.merge(found);
            }
        }
    }
    let to_read: Vec<String> = to_read.into_iter().collect();
    let read = read_files(root, &to_read, &target.clues);
    next.mark_hot(&read.found);
    findings.merge(read);
    let stats = RescanStats {
        full_walk: false,
        stamped,
        read: findings.files_read,
    };
    (findings.sorted(), next, stats)
}

/// Stamps every indexed directory and its files, spread over the cores.
fn check_dirs(root: &Path, previous: &ScanIndex) -> Vec<DirCheck> {
    let dirs: Vec<(&String, &DirStamps)> = previous.dirs.iter().collect();
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .clamp(1, 4);
    let chunk = dirs.len().div_ceil(workers).max(64);
    if dirs.len() <= chunk {
        return dirs
            .iter()
            .map(|(dir, known)| check_dir(root, dir, known))
            .collect();
    }
    std::thread::scope(|scope| {
        let handles: Vec<_> = dirs
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .map(|(dir, known)| check_dir(root, dir, known))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|handle| handle.join().unwrap_or_default())
            .collect()
    })
}

/// One directory: opened once, its files stamped relative to it (one path
/// lookup each), never through a symlink.
#[cfg(unix)]
fn check_dir(root: &Path, dir: &str, known: &DirStamps) -> DirCheck {
    use rustix::fs::{fstat, openat, statat, AtFlags, FileType, Mode, OFlags, CWD};
    let mut check = DirCheck {
        dir: dir.to_string(),
        now: None,
        files: Vec::with_capacity(known.files.len()),
        changed: Vec::new(),
        gone: Vec::new(),
    };
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC | OFlags::NOFOLLOW;
    let Ok(fd) = openat(CWD, root.join(dir), flags, Mode::empty()) else {
        check.gone = known.files.keys().cloned().collect();
        return check;
    };
    check.now = fstat(&fd).ok().map(|st| Stamp::from_stat(&st));
    for (name, stamp) in &known.files {
        match statat(&fd, name.as_str(), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) if FileType::from_raw_mode(st.st_mode as _) == FileType::RegularFile => {
                let now = Stamp::from_stat(&st);
                if now != *stamp {
                    check.changed.push(name.clone());
                }
                check.files.push((name.clone(), now));
            }
            _ => check.gone.push(name.clone()),
        }
    }
    check
}

#[cfg(not(unix))]
fn check_dir(root: &Path, dir: &str, known: &DirStamps) -> DirCheck {
    let base = root.join(dir);
    let mut check = DirCheck {
        dir: dir.to_string(),
        now: fs::symlink_metadata(&base)
            .ok()
            .filter(Metadata::is_dir)
            .map(|m| Stamp::of(&m)),
        files: Vec::new(),
        changed: Vec::new(),
        gone: Vec::new(),
    };
    for (name, stamp) in &known.files {
        match fs::symlink_metadata(base.join(name)) {
            Ok(meta) if meta.is_file() => {
                let now = Stamp::of(&meta);
                if now != *stamp {
                    check.changed.push(name.clone());
                }
                check.files.push((name.clone(), now));
            }
            _ => check.gone.push(name.clone()),
        }
    }
    check
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::findings::Clues;

    const BLOCK: &str = "# #region debug-probe p1 me\nx = 1\n# #endregion debug-probe p1\n";

    fn ids(findings: &Findings) -> Vec<(String, u32)> {
        findings
            .found
            .iter()
            .map(|f| (f.file.clone(), f.line))
            .collect()
    }

    #[test]
    fn a_decision_rescan_sees_what_a_full_walk_sees() {
        let root = std::env::temp_dir().join(format!("ds-index-{}", std::process::id()));
        let _ = fs::remove_dir_all(&root);
        fs::create_dir_all(root.join("src/deep")).unwrap();
        fs::create_dir_all(root.join("state")).unwrap();
        fs::write(root.join("src/a.py"), BLOCK).unwrap();
        fs::write(root.join("src/deep/b.py"), "y = 2\n").unwrap();
        let target = ScanTarget {
            root: root.clone(),
            clues: Clues::new(),
            tracked: Vec::new(),
            state_dir: Some(root.join("state")),
        };
        let (first, index, stats) = decision_scan(&target, None);
        assert!(stats.full_walk);
        index.save(&root.join("state")).unwrap();
        let index = ScanIndex::load(&root.join("state")).unwrap();

        // Unchanged: only the hot file is read.
        let (again, index, stats) = decision_scan(&target, Some(index));
        assert_eq!((stats.full_walk, stats.read), (false, 1));
        assert_eq!(ids(&again), ids(&first));

        // Removed in place, pasted in place elsewhere, and into a new file in
        // a new directory.
        fs::write(root.join("src/a.py"), "x = 1\n").unwrap();
        fs::write(root.join("src/deep/b.py"), format!("y = 2\n{BLOCK}")).unwrap();
        fs::create_dir_all(root.join("src/new")).unwrap();
        fs::write(root.join("src/new/c.py"), BLOCK).unwrap();
        let (after, index, stats) = decision_scan(&target, Some(index));
        assert!(!stats.full_walk);
        let (full, _) = scan_workspace(&target);
        assert_eq!(ids(&after), ids(&full));
        assert_eq!(
            ids(&after),
            [
                ("src/deep/b.py".to_string(), 2),
                ("src/new/c.py".to_string(), 1)
            ]
        );

        // A changed ignore file makes it a full walk.
        fs::write(root.join("src/.gitignore"), "new/\n").unwrap();
        let (ignored, _, stats) = decision_scan(&target, Some(index));
        assert!(stats.full_walk);
        assert_eq!(ids(&ignored), [("src/deep/b.py".to_string(), 2)]);
        fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn paths_survive_the_file() {
        for path in ["a b/c.py", "new\nline\\x.py", "é.rs"] {
            assert_eq!(unescape(&escape(path)), path);
        }
    }
}
