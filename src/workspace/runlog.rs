//! Run log files: one JSONL file per run, and `active.jsonl`, a link that
//! always points at the current run's file, for probes to append to.

use crate::core::text::ACTIVE_LOG;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read};
use std::path::{Path, PathBuf};

pub fn run_file(runs_dir: &Path, run_id: &str) -> PathBuf {
    runs_dir.join(format!("{run_id}.jsonl"))
}

/// Create the run's file and point `active.jsonl` at it. The link is swapped
/// by renaming a fresh one over it, so a probe never sees it missing.
pub fn start_run(runs_dir: &Path, run_id: &str) -> io::Result<PathBuf> {
    fs::create_dir_all(runs_dir)?;
    let file = run_file(runs_dir, run_id);
    OpenOptions::new().create(true).append(true).open(&file)?;
    let active = runs_dir.join(ACTIVE_LOG);
    let staged = runs_dir.join(format!(".{ACTIVE_LOG}.{run_id}.tmp"));
    let _ = fs::remove_file(&staged);
    link(Path::new(&format!("{run_id}.jsonl")), &staged)?;
    fs::rename(&staged, &active)?;
    Ok(file)
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

/// Lines in a run file: newline count, plus a final unterminated line.
pub fn count_lines(file: &Path) -> io::Result<u64> {
    let mut handle = match File::open(file) {
        Ok(handle) => handle,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(0),
        Err(e) => return Err(e),
    };
    let mut buffer = vec![0u8; 64 * 1024];
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
