//! `debug-sidecar status`: the workspace's debug sessions, for people (a
//! table) and scripts (`--json`).

use super::Where;
use crate::core::escape::inline_cut;
use crate::engine::SessionSummary;

/// The problem as a row of the table shows it: on one line, inert, cut.
const PROBLEM_CELL: usize = 120;
/// A session id as the table shows it.
const ID_CELL: usize = 48;
use std::process::ExitCode;

pub fn run(place: Where, json: bool) -> anyhow::Result<ExitCode> {
    let (mut engine, _) = place.open()?;
    let state_dir = engine.config().state_dir.clone();
    let sessions = engine.sessions()?;
    if json {
        println!("{}", serde_json::to_string_pretty(&sessions)?);
        return Ok(ExitCode::SUCCESS);
    }
    if sessions.is_empty() {
        println!("No debug sessions in {}.", state_dir.display());
        return Ok(ExitCode::SUCCESS);
    }
    println!("{}", table(&sessions, crate::engine::owner::now_ms()));
    Ok(ExitCode::SUCCESS)
}

fn table(sessions: &[SessionSummary], now: u64) -> String {
    let rows: Vec<[String; 6]> = sessions
        .iter()
        .map(|s| {
            let snapshot = &s.snapshot;
            [
                inline_cut(&snapshot.session_id, ID_CELL),
                snapshot
                    .stage
                    .map_or("inactive".to_string(), |stage| stage.as_str().to_string()),
                snapshot.round.map_or("-".into(), |r| r.to_string()),
                snapshot.probes.live.to_string(),
                ago(now, s.updated_at),
                // Set by the agent: escaped and cut like every other text
                // that reaches a terminal.
                inline_cut(
                    snapshot.problem.as_deref().unwrap_or_default(),
                    PROBLEM_CELL,
                ),
            ]
        })
        .collect();
    let header = [
        "SESSION",
        "STAGE",
        "ROUND",
        "PROBES",
        "LAST ACTIVE",
        "PROBLEM",
    ];
    let mut widths: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: Vec<&str>| {
        let last = cells.len() - 1;
        cells
            .iter()
            .enumerate()
            .map(|(i, cell)| {
                if i == last {
                    cell.to_string()
                } else {
                    format!("{cell:<width$}", width = widths[i])
                }
            })
            .collect::<Vec<_>>()
            .join("  ")
    };
    let mut out = vec![line(header.to_vec())];
    out.extend(
        rows.iter()
            .map(|row| line(row.iter().map(String::as_str).collect())),
    );
    out.join("\n")
}

/// "12s ago", "5m ago", "3h ago", "2d ago".
fn ago(now: u64, then: u64) -> String {
    if then == 0 {
        return "-".into();
    }
    let seconds = now.saturating_sub(then) / 1000;
    match seconds {
        0..=59 => format!("{seconds}s ago"),
        60..=3599 => format!("{}m ago", seconds / 60),
        3600..=86_399 => format!("{}h ago", seconds / 3600),
        _ => format!("{}d ago", seconds / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::ago;

    #[test]
    fn a_hostile_problem_reaches_the_terminal_inert_and_cut() {
        use crate::engine::SessionSummary;
        let problem = format!(
            "\u{1b}[2J\u{202e}evil\u{2028}forged\nSESSION x{}",
            "y".repeat(1 << 20)
        );
        use crate::core::snapshot::{ProbeSummary, Snapshot};
        let summary = SessionSummary {
            snapshot: Snapshot {
                session_id: "s1".into(),
                active: true,
                stage: None,
                round: None,
                handoff: None,
                problem: Some(problem),
                run_id: None,
                log_file: None,
                ingest_url: None,
                probes: ProbeSummary {
                    live: 0,
                    list: vec![],
                },
                hypotheses: vec![],
                steps: vec![],
                pending_user_actions: vec![],
                evidence_summary: None,
                user_commands: vec![],
                revision: 0,
                warning: None,
            },
            updated_at: 0,
        };
        let shown = super::table(&[summary], 0);
        assert_eq!(shown.lines().count(), 2, "{shown}");
        for line in shown.lines() {
            assert!(
                !line
                    .chars()
                    .any(|c| c.is_control() || matches!(c, '\u{202e}' | '\u{2028}')),
                "{line}"
            );
        }
        assert!(shown.len() < 400, "{} bytes", shown.len());
        assert!(shown.contains("\\u{1b}[2J"), "{shown}");
    }

    #[test]
    fn ages_read_like_a_person_would_say_them() {
        let now = 1_000_000_000;
        assert_eq!(ago(now, now - 12_000), "12s ago");
        assert_eq!(ago(now, now - 300_000), "5m ago");
        assert_eq!(ago(now, now - 3 * 3_600_000), "3h ago");
        assert_eq!(ago(now, now - 2 * 86_400_000), "2d ago");
        assert_eq!(ago(now, 0), "-");
    }
}
