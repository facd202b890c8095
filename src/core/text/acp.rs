//! What the ACP proxy adds to a conversation. ACP has no system-prompt
//! channel and cannot take back what it sent: the board rides in a prompt
//! as user content, and earlier copies stay in the agent's history. Each
//! copy is marked so the model knows the newest one is the state.

use crate::core::budget;

/// The line before a copy of the board in a prompt.
pub const ACP_BOARD_OPEN: &str = "[debug-sidecar blackboard: this newest copy is the current \
state of the debug session; every earlier copy in this conversation is out of date]";
/// The line after it.
pub const ACP_BOARD_CLOSE: &str = "[end of debug-sidecar blackboard]";

/// The most a board copy with its two marker lines takes in a prompt.
pub const ACP_BOARD_MAX: usize =
    budget::BLACKBOARD + ACP_BOARD_OPEN.len() + ACP_BOARD_CLOSE.len() + 2;

/// The board as one block of a prompt, between its markers. The board is
/// held to its own cap first, so the block stays inside `ACP_BOARD_MAX`.
pub fn acp_board(board: &str) -> String {
    let board = budget::fit(
        board.to_string(),
        budget::BLACKBOARD,
        "the board was cut; read_logs and the probe ledger have the rest",
    );
    format!("{ACP_BOARD_OPEN}\n{board}\n{ACP_BOARD_CLOSE}")
}

/// The text a proxy-made prompt carries: a kickoff or a nudge, then the
/// board when the conversation does not hold its current copy.
pub fn acp_prompt(lead: &str, board: Option<&str>) -> String {
    match board {
        Some(board) => format!("{lead}\n\n{}", acp_board(board)),
        None => lead.to_string(),
    }
}

/// What the person sees in the agent's pane when the proxy answered one of
/// their commands, or has something to say about the round.
pub fn acp_said(said: &str) -> String {
    format!("debug-sidecar: {said}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_flooded_board_stays_inside_the_block_cap() {
        let board = "x".repeat(50_000);
        let block = acp_board(&board);
        assert!(
            block.len() <= ACP_BOARD_MAX,
            "{} > {ACP_BOARD_MAX}",
            block.len()
        );
        assert!(block.starts_with(ACP_BOARD_OPEN));
        assert!(block.ends_with(ACP_BOARD_CLOSE));
    }

    #[test]
    fn a_prompt_without_a_board_is_its_lead() {
        assert_eq!(acp_prompt("go on", None), "go on");
        let with = acp_prompt("go on", Some("B"));
        assert!(with.starts_with("go on\n\n[debug-sidecar blackboard"));
    }
}
