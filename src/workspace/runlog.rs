//! Run log files: one JSONL file per run, and `active.jsonl`, a link that
//! always points at the current run's file, for probes to append to.

use crate::core::text::ACTIVE_LOG;
use crate::workspace::store::{set_aside_unless, Expected};
use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

pub fn run_file(runs_dir: &Path, run_id: &str) -> PathBuf {
    runs_dir.join(format!("{run_id}.jsonl"))
}

/// Opens a file of the state directory for reading without following a
/// symlink: a state directory may come from elsewhere (committed, unpacked),
/// and a run file linked to `~/.ssh/id_rsa` must not reach the model.
pub fn open_own(file: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.read(true);
    // A FIFO put where a file should be must not block the reader.
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        let flags = rustix::fs::OFlags::NOFOLLOW | rustix::fs::OFlags::NONBLOCK;
        options.custom_flags(flags.bits() as i32);
    }
    options.open(file).map_err(|e| refused_link(file, e))
}

/// The size of a buffer that reads the `left` bytes a file's size says
/// remain, at most `most` at a time. A small or empty run is not read
/// through a large buffer: zeroing 256 KiB, or mapping a megabyte (which
/// raises malloc's mapping threshold, so the next large buffer is zeroed
/// by hand), was a tenth of a hook's time. A file that grows while it is
/// read is still read `MIN_READ` bytes or more at a time.
pub fn read_size(left: u64, most: usize) -> usize {
    const MIN_READ: usize = 8 * 1024;
    usize::try_from(left)
        .unwrap_or(usize::MAX)
        .saturating_add(1)
        .clamp(MIN_READ.min(most), most)
}

/// Opens a run file for appending, never through a symlink and never
/// creating it.
pub fn open_own_append(file: &Path) -> io::Result<File> {
    own_options(OpenOptions::new().append(true))
        .open(file)
        .map_err(|e| refused_link(file, e))
}

/// Creates (or truncates) a small file of the state directory, owner-only,
/// never through a symlink.
pub fn create_own(file: &Path) -> io::Result<File> {
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    own_options(&mut options)
        .open(file)
        .map_err(|e| refused_link(file, e))
}

fn own_options(options: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32);
    }
    options
}

/// A symlink met where a file of ours should be, said plainly.
fn refused_link(file: &Path, error: io::Error) -> io::Error {
    // A link opened without following fails otherwise (ELOOP): a missing
    // file needs no look (a hook reads several that are mostly absent).
    if error.kind() == io::ErrorKind::NotFound {
        return error;
    }
    let linked = fs::symlink_metadata(file).is_ok_and(|m| m.file_type().is_symlink());
    if linked {
        io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} is a symbolic link; the sidecar reads and writes only files it made",
                file.display()
            ),
        )
    } else {
        error
    }
}

/// The run file `active.jsonl` points at, when it is the sidecar's own link:
/// a bare `<runId>.jsonl` name in the same directory. Anything else (a link
/// out of `runs/`, a regular file, a committed link) is refused.
pub fn active_target(runs_dir: &Path) -> io::Result<PathBuf> {
    let active = runs_dir.join(ACTIVE_LOG);
    let target = fs::read_link(&active)?;
    let name = target.to_string_lossy();
    let own = target.components().count() == 1
        && name
            .strip_suffix(".jsonl")
            .and_then(crate::core::run_id::parse_run_id)
            .is_some();
    if !own {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!(
                "{} does not point at a run of its own directory; nothing is written through it",
                active.display()
            ),
        ));
    }
    Ok(runs_dir.join(target))
}

/// The runs that have a file in `runs_dir`, oldest first.
pub fn list_runs(runs_dir: &Path) -> Vec<String> {
    let mut runs: Vec<String> = fs::read_dir(runs_dir)
        .map(|entries| {
            entries
                .flatten()
                .filter_map(|e| {
                    let name = e.file_name().to_string_lossy().into_owned();
                    let run = name.strip_suffix(".jsonl")?.to_string();
                    crate::core::run_id::parse_run_id(&run).map(|_| run)
                })
                .collect()
        })
        .unwrap_or_default();
    runs.sort_by(|a, b| crate::core::run_id::compare_run_ids(a, b));
    runs
}

/// Create the run's file and point `active.jsonl` at it.
pub fn start_run(runs_dir: &Path, run_id: &str) -> io::Result<PathBuf> {
    let file = create_run(runs_dir, run_id)?;
    point_active(runs_dir, run_id)?;
    Ok(file)
}

/// The run's file, made when missing: a regular file of the sidecar's own
/// (never one reached through a symlink).
pub fn create_run(runs_dir: &Path, run_id: &str) -> io::Result<PathBuf> {
    // A file or a link where `runs/` should be (never followed out of the
    // state directory) is moved aside, so a session can always start.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    set_aside_unless(runs_dir, Expected::Directory, now)?;
    fs::create_dir_all(runs_dir)?;
    let file = run_file(runs_dir, run_id);
    own_options(OpenOptions::new().create(true).append(true))
        .open(&file)
        .map_err(|e| refused_link(&file, e))?;
    Ok(file)
}

/// Point `active.jsonl` at the run's file. The link is swapped by renaming
/// a fresh one over it, so a probe never sees it missing. Only once the
/// state naming the run is durable: a link ahead of the state sends lines
/// to a run nobody reads.
pub fn point_active(runs_dir: &Path, run_id: &str) -> io::Result<()> {
    let active = runs_dir.join(ACTIVE_LOG);
    let staged = runs_dir.join(format!(".{ACTIVE_LOG}.{run_id}.tmp"));
    let _ = fs::remove_file(&staged);
    link(Path::new(&format!("{run_id}.jsonl")), &staged)?;
    fs::rename(&staged, &active).inspect_err(|_| {
        let _ = fs::remove_file(&staged);
    })
}

/// Make `active.jsonl` the sidecar's own link to the run it should point at
/// (the state's current run `run_id`, or the agent's run while it holds a
/// live lease, see `lend_active`) when it is not: a process killed between
/// writing the state and switching the link, a link that failed to switch,
/// an agent's run that ended or died. Whether it had to be repaired.
pub fn follow_run(runs_dir: &Path, run_id: &str) -> io::Result<bool> {
    let linked = linked_run(runs_dir, run_id, wall_ms());
    if active_target(runs_dir).is_ok_and(|target| target == run_file(runs_dir, &linked)) {
        return Ok(false);
    }
    create_run(runs_dir, &linked)?;
    point_active(runs_dir, &linked)?;
    Ok(true)
}

/// The run `active.jsonl` should point at now: the agent's run while its
/// lease is live, else the state's current run `run_id`.
pub fn linked_run(runs_dir: &Path, run_id: &str, now: u64) -> String {
    lent_run(runs_dir, now).map_or_else(|| run_id.to_string(), |(lent, _)| lent)
}

/// The file the lease on `active.jsonl` is kept in, beside the link.
pub const AGENT_LEASE: &str = "agent-run.lease";

/// A lease is never honoured for longer than the agent's longest run and
/// its drain, whatever the file says (a state directory may come from
/// elsewhere).
const LEASE_MOST_MS: u64 = (crate::core::reproduction::AGENT_TIMEOUT_MAX_SEC + 10) * 1000;

/// Lends `active.jsonl` to the agent's run `run_id` until `until` (ms since
/// the epoch): probes write into it while the agent's program runs. The
/// lease is written before the link moves, so a process killed in between
/// leaves a lease that expires by itself; every repair of the link
/// (`follow_run`) then points it back at the state's current run.
pub fn lend_active(runs_dir: &Path, run_id: &str, until: u64) -> io::Result<()> {
    use std::io::Write;
    // Written aside and renamed into place: a reader never sees it empty
    // (an unreadable lease is removed as broken).
    let lease = runs_dir.join(AGENT_LEASE);
    let staged = runs_dir.join(format!(".{AGENT_LEASE}.{run_id}.tmp"));
    let written = create_own(&staged).and_then(|mut file| {
        file.write_all(format!("{run_id} {until}\n").as_bytes())?;
        file.sync_all()
    });
    if let Err(error) = written.and_then(|()| fs::rename(&staged, &lease)) {
        let _ = fs::remove_file(&staged);
        return Err(error);
    }
    point_active(runs_dir, run_id)
}

/// Ends the lease of the agent's run `run_id` (a lease of another run is
/// left alone). The link itself is moved back by the next `follow_run`.
pub fn end_lease(runs_dir: &Path, run_id: &str) -> io::Result<()> {
    if read_lease(runs_dir).is_some_and(|(lent, _)| lent == run_id) {
        fs::remove_file(runs_dir.join(AGENT_LEASE))?;
    }
    Ok(())
}

/// The agent's run holding `active.jsonl` now, and until when; an expired,
/// unreadable or implausible lease is removed and is none.
pub fn lent_run(runs_dir: &Path, now: u64) -> Option<(String, u64)> {
    let lease = runs_dir.join(AGENT_LEASE);
    match read_lease(runs_dir) {
        Some((run_id, until))
            if now < until
                && until <= now.saturating_add(LEASE_MOST_MS)
                && fs::symlink_metadata(run_file(runs_dir, &run_id)).is_ok_and(|m| m.is_file()) =>
        {
            Some((run_id, until))
        }
        _ => {
            if fs::symlink_metadata(&lease).is_ok() {
                let _ = fs::remove_file(&lease);
            }
            None
        }
    }
}

/// The agent's run in progress now (its lease live on the wall clock).
pub fn running_agent_run(runs_dir: &Path) -> Option<String> {
    lent_run(runs_dir, wall_ms()).map(|(run_id, _)| run_id)
}

fn read_lease(runs_dir: &Path) -> Option<(String, u64)> {
    let mut text = String::new();
    open_own(&runs_dir.join(AGENT_LEASE))
        .ok()?
        .take(256)
        .read_to_string(&mut text)
        .ok()?;
    let (run_id, until) = text.trim_end().split_once(' ')?;
    crate::core::run_id::parse_run_id(run_id)?;
    Some((run_id.to_string(), until.parse().ok()?))
}

fn wall_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

#[cfg(unix)]
fn link(target: &Path, at: &Path) -> io::Result<()> {
    std::os::unix::fs::symlink(target, at)
}

#[cfg(not(unix))]
fn link(target: &Path, at: &Path) -> io::Result<()> {
    // Without symlinks a hard link would freeze the run; fail loudly instead.
    let _ = (target, at);
    Err(io::Error::new(
        io::ErrorKind::Unsupported,
        "run log links need a Unix file system",
    ))
}

/// Counts run file lines incrementally: each file's count is kept with the
/// offset it reached, so a recount reads only what was appended since.
#[derive(Debug, Default)]
pub struct LineCounter {
    files: HashMap<PathBuf, Counted>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
struct Counted {
    offset: u64,
    newlines: u64,
    /// The byte at `offset - 1` was not a newline: a line is still open.
    open_line: bool,
    /// The file counted (its inode): a replaced file is counted anew.
    #[serde(default)]
    inode: u64,
}

/// What a process counted in a run file, kept beside it (`<run>.<kind>`:
/// listings take only `.jsonl`) for the next process: a hook or a `run`
/// is a new process each time, and without it each read the whole run
/// again, which grows with every reproduction recorded into it (issue 33).
/// None when there is none or it does not read.
pub fn read_beside<T: serde::de::DeserializeOwned>(file: &Path, kind: &str) -> Option<T> {
    let mut text = String::new();
    open_own(&file.with_extension(kind))
        .and_then(|handle| handle.take(512).read_to_string(&mut text))
        .ok()?;
    serde_json::from_str(&text).ok()
}

/// Keeps `value` beside the run file for the next process; best effort:
/// without it that process counts again.
pub fn keep_beside<T: serde::Serialize>(file: &Path, kind: &str, value: &T) {
    if let Ok(text) = serde_json::to_string(value) {
        let _ = create_own(&file.with_extension(kind))
            .and_then(|mut handle| handle.write_all(text.as_bytes()));
    }
}

/// The count of lines kept beside a run.
const LINES_KEPT: &str = "lines";

impl LineCounter {
    pub fn new() -> Self {
        Self::default()
    }

    /// `count`, starting from the count an earlier process left and
    /// leaving this one for the next (best effort both ways).
    pub fn count_and_keep(&mut self, file: &Path) -> io::Result<u64> {
        let known = match self.files.get(file) {
            Some(known) => Some(*known),
            None => read_beside::<Counted>(file, LINES_KEPT),
        };
        if let Some(known) = known {
            self.files.insert(file.to_path_buf(), known);
        }
        let lines = self.count(file)?;
        if let Some(counted) = self.files.get(file).filter(|c| Some(**c) != known) {
            keep_beside(file, LINES_KEPT, counted);
        }
        Ok(lines)
    }

    /// Lines in the file now: newlines, plus a final unterminated line.
    pub fn count(&mut self, file: &Path) -> io::Result<u64> {
        let mut handle = match open_own(file) {
            Ok(handle) => handle,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                self.files.remove(file);
                return Ok(0);
            }
            Err(e) => return Err(e),
        };
        let meta = handle.metadata()?;
        let (len, inode) = (meta.len(), file_inode(&meta));
        let mut counted = self.files.get(file).copied().unwrap_or_default();
        let impossible = counted.newlines > counted.offset;
        if impossible || len < counted.offset || (counted.offset > 0 && counted.inode != inode) {
            // Truncated or replaced: start over.
            counted = Counted::default();
        }
        counted.inode = inode;
        handle.seek(SeekFrom::Start(counted.offset))?;
        let mut buffer = vec![0u8; read_size(len.saturating_sub(counted.offset), 256 * 1024)];
        loop {
            let read = handle.read(&mut buffer)?;
            if read == 0 {
                break;
            }
            counted.newlines += memchr::memchr_iter(b'\n', &buffer[..read]).count() as u64;
            counted.open_line = buffer[read - 1] != b'\n';
            counted.offset += read as u64;
        }
        self.files.insert(file.to_path_buf(), counted);
        Ok(counted.newlines + u64::from(counted.open_line))
    }
}

/// The file's inode: a count kept for a replaced file is not taken up.
#[cfg(unix)]
pub fn file_inode(meta: &fs::Metadata) -> u64 {
    std::os::unix::fs::MetadataExt::ino(meta)
}

#[cfg(not(unix))]
pub fn file_inode(_: &fs::Metadata) -> u64 {
    0
}

/// Follows one run file for `debug/logAppended`: how far its complete lines
/// have been announced. A line still being written is never announced, so a
/// reader following the cursor never sees half a record.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogTail {
    /// Just past the last announced newline.
    offset: u64,
    lines: u64,
}

/// Complete lines that reached a run file since it was last looked at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Appended {
    /// Complete lines in the file now.
    pub lines: u64,
    /// A `debug/logs` cursor at the first of the new lines.
    pub cursor: String,
}

impl LogTail {
    /// Read what was appended; `None` when no complete line was.
    pub fn advance(&mut self, file: &Path) -> io::Result<Option<Appended>> {
        let mut handle = match open_own(file) {
            Ok(handle) => handle,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(e),
        };
        let len = handle.metadata()?.len();
        if len < self.offset {
            // Truncated or replaced: announce it again from the start.
            *self = LogTail::default();
        }
        let from = *self;
        handle.seek(SeekFrom::Start(self.offset))?;
        let mut buffer = vec![0u8; read_size(len.saturating_sub(self.offset), 256 * 1024)];
        let mut read_to = self.offset;
        loop {
            let read = handle.read(&mut buffer)?;
            if read == 0 {
                break;
            }
            for at in memchr::memchr_iter(b'\n', &buffer[..read]) {
                self.lines += 1;
                self.offset = read_to + at as u64 + 1;
            }
            read_to += read as u64;
        }
        Ok((self.lines > from.lines).then(|| Appended {
            lines: self.lines,
            cursor: format!("{}:{}", from.offset, from.lines),
        }))
    }
}

/// Lines in a run file: newline count, plus a final unterminated line.
pub fn count_lines(file: &Path) -> io::Result<u64> {
    let mut handle = match open_own(file) {
        Ok(handle) => handle,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut buffer = vec![0u8; read_size(handle.metadata()?.len(), 64 * 1024)];
    let (mut lines, mut last) = (0u64, b'\n');
    loop {
        let read = handle.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        lines += buffer[..read].iter().filter(|b| **b == b'\n').count() as u64;
        last = buffer[read - 1];
    }
    Ok(lines + u64::from(last != b'\n'))
}

/// Every line of a run file, for small files (the demo and tests).
pub fn read_lines(file: &Path) -> io::Result<Vec<String>> {
    match fs::read_to_string(file) {
        Ok(text) => Ok(text.lines().map(str::to_string).collect()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(Vec::new()),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tail_announces_complete_lines_once_with_a_cursor_at_the_first_new_one() {
        let dir = temp_dir("tail");
        let file = dir.join("r.jsonl");
        let mut tail = LogTail::default();
        assert_eq!(tail.advance(&file).expect("missing file"), None);
        fs::write(&file, "{\"a\":1}\n{\"a\":2}\n{\"a\":").expect("write");
        let first = tail.advance(&file).expect("read").expect("two lines");
        assert_eq!(
            first,
            Appended {
                lines: 2,
                cursor: "0:0".into()
            }
        );
        assert_eq!(
            tail.advance(&file).expect("read"),
            None,
            "half a line is not announced"
        );
        let mut handle = OpenOptions::new().append(true).open(&file).expect("open");
        std::io::Write::write_all(&mut handle, b"3}\n").expect("append");
        let second = tail
            .advance(&file)
            .expect("read")
            .expect("the finished line");
        assert_eq!(
            second,
            Appended {
                lines: 3,
                cursor: "16:2".into()
            }
        );
        let page = crate::workspace::logread::read_page(
            &file,
            &crate::workspace::logread::LogQuery {
                cursor: Some(second.cursor),
                ..Default::default()
            },
            &crate::core::redact::Redactor::default(),
        )
        .expect("page");
        let lines: Vec<u64> = page.entries.iter().map(|e| e.line).collect();
        assert_eq!(lines, [3], "the cursor reads exactly the new line");
        fs::write(&file, "{}\n").expect("truncate");
        let again = tail.advance(&file).expect("read").expect("a fresh file");
        assert_eq!(
            again,
            Appended {
                lines: 1,
                cursor: "0:0".into()
            }
        );
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn a_count_left_by_one_process_is_taken_up_by_the_next() {
        let dir = std::env::temp_dir().join(format!("ds-count-keep-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        let file = dir.join("r1-a.jsonl");
        fs::write(&file, "a\nb\nc").unwrap();
        assert_eq!(LineCounter::new().count_and_keep(&file).unwrap(), 3);
        let mut handle = OpenOptions::new().append(true).open(&file).unwrap();
        handle.write_all(b"\nd\n").unwrap();
        // A new process: it reads on from the kept offset.
        assert_eq!(LineCounter::new().count_and_keep(&file).unwrap(), 4);
        assert_eq!(LineCounter::new().count(&file).unwrap(), 4);
        // A replaced file (another inode) is counted anew.
        let other = dir.join("other");
        fs::write(&other, "x\ny\nz\nw\nv\n").unwrap();
        fs::rename(&other, &file).unwrap();
        assert_eq!(LineCounter::new().count_and_keep(&file).unwrap(), 5);
        // A count that cannot be right (more newlines than bytes) is not used.
        let inode = file_inode(&fs::metadata(&file).unwrap());
        let bogus = format!(r#"{{"offset":2,"newlines":900,"open_line":false,"inode":{inode}}}"#);
        fs::write(file.with_extension(LINES_KEPT), bogus).unwrap();
        assert_eq!(LineCounter::new().count_and_keep(&file).unwrap(), 5);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_read_buffer_fits_what_is_left_within_its_bounds() {
        assert_eq!(read_size(0, 256 * 1024), 8 * 1024, "an empty file");
        assert_eq!(
            read_size(100_000, 256 * 1024),
            100_001,
            "the end seen in one read"
        );
        assert_eq!(read_size(1 << 30, 256 * 1024), 256 * 1024);
        assert_eq!(read_size(u64::MAX, 64 * 1024), 64 * 1024);
        assert_eq!(read_size(0, 4096), 4096, "never past the most");
    }

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("ds-runlog-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn counts_terminated_and_unterminated_lines() {
        let dir = temp_dir("count");
        let file = dir.join("r.jsonl");
        assert_eq!(
            count_lines(&file).unwrap(),
            0,
            "a missing file has no lines"
        );
        fs::write(&file, "").unwrap();
        assert_eq!(count_lines(&file).unwrap(), 0);
        fs::write(&file, "{}\n{}\n").unwrap();
        assert_eq!(count_lines(&file).unwrap(), 2);
        fs::write(&file, "{}\n{}").unwrap();
        assert_eq!(count_lines(&file).unwrap(), 2);
        fs::remove_dir_all(dir).unwrap();
    }

    #[test]
    fn the_counter_reads_only_what_was_appended() {
        use std::io::Write;
        let dir = temp_dir("counter");
        let file = dir.join("r.jsonl");
        let mut counter = LineCounter::new();
        assert_eq!(counter.count(&file).unwrap(), 0);
        fs::write(&file, "{}\n{\"a\":").unwrap();
        assert_eq!(counter.count(&file).unwrap(), 2);
        let mut f = OpenOptions::new().append(true).open(&file).unwrap();
        f.write_all(b"1}\n{}\n").unwrap();
        assert_eq!(counter.count(&file).unwrap(), 3);
        assert_eq!(
            counter.files[&file].offset, 14,
            "the next count starts here"
        );
        fs::write(&file, "{}\n").unwrap();
        assert_eq!(
            counter.count(&file).unwrap(),
            1,
            "a truncated file is recounted"
        );
        fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn a_lease_lends_the_link_until_it_ends_and_an_expired_or_implausible_one_is_dropped() {
        let dir = temp_dir("lease");
        start_run(&dir, "r1-a").unwrap();
        create_run(&dir, "r1-b").unwrap();
        let now = wall_ms();
        lend_active(&dir, "r1-b", now + 60_000).unwrap();
        assert_eq!(linked_run(&dir, "r1-a", now), "r1-b");
        assert!(
            !follow_run(&dir, "r1-a").unwrap(),
            "a live lease keeps the link"
        );
        assert_eq!(active_target(&dir).unwrap(), run_file(&dir, "r1-b"));
        end_lease(&dir, "r1-a").unwrap();
        assert!(
            dir.join(AGENT_LEASE).exists(),
            "another run's lease is kept"
        );
        end_lease(&dir, "r1-b").unwrap();
        assert!(follow_run(&dir, "r1-a").unwrap(), "the link goes back");
        assert_eq!(active_target(&dir).unwrap(), run_file(&dir, "r1-a"));

        for (lease, why) in [
            (format!("r1-b {}\n", now - 1), "expired"),
            (
                format!("r1-b {}\n", now + LEASE_MOST_MS + 60_000),
                "too long",
            ),
            (format!("../x {}\n", now + 60_000), "not a run"),
            (format!("r9-z {}\n", now + 60_000), "no such run file"),
        ] {
            fs::write(dir.join(AGENT_LEASE), lease).unwrap();
            assert_eq!(linked_run(&dir, "r1-a", now), "r1-a", "{why}");
            assert!(!dir.join(AGENT_LEASE).exists(), "{why}: removed");
        }
        std::os::unix::fs::symlink(dir.join("r1-b.jsonl"), dir.join(AGENT_LEASE)).unwrap();
        assert_eq!(linked_run(&dir, "r1-a", now), "r1-a", "a linked lease");
        assert!(fs::symlink_metadata(dir.join(AGENT_LEASE)).is_err());
        assert!(dir.join("r1-b.jsonl").exists(), "what it linked to stays");
        fs::remove_dir_all(dir).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn the_active_link_follows_the_current_run() {
        use std::io::Write;
        let dir = temp_dir("active");
        start_run(&dir, "r1-a").unwrap();
        let append = |text: &str| {
            let mut f = OpenOptions::new()
                .append(true)
                .open(dir.join(ACTIVE_LOG))
                .unwrap();
            f.write_all(text.as_bytes()).unwrap();
        };
        append("one\n");
        start_run(&dir, "r2-b").unwrap();
        append("two\n");
        append("three\n");
        assert_eq!(read_lines(&run_file(&dir, "r1-a")).unwrap(), vec!["one"]);
        assert_eq!(count_lines(&run_file(&dir, "r2-b")).unwrap(), 2);
        fs::remove_dir_all(dir).unwrap();
    }
}
