//! Domain errors: what a person or a model can act on, never a stack trace.

use super::model::Stage;
use serde::Serialize;
use std::fmt;

/// Every command a client can send, by its protocol method name (without the
/// `debug/` prefix), so a refusal's `legal` list names methods a client can call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "camelCase")]
pub enum CommandName {
    Start,
    HandOff,
    Proceed,
    Done,
    Abort,
    Observe,
    Attach,
    RecordHypotheses,
    /// Registering a probe is what `debug/probeSnippet` does.
    #[serde(rename = "probeSnippet")]
    RegisterProbe,
    /// `debug-sidecar run`: the person's reproduction, recorded.
    Run,
    /// The agent's `run_reproduction` tool.
    RunReproduction,
    /// `debug-sidecar mark`: the person marks the moment in the current run.
    Mark,
}

impl CommandName {
    pub fn as_str(self) -> &'static str {
        match self {
            CommandName::Start => "start",
            CommandName::HandOff => "handOff",
            CommandName::Proceed => "proceed",
            CommandName::Done => "done",
            CommandName::Abort => "abort",
            CommandName::Observe => "observe",
            CommandName::Attach => "attach",
            CommandName::RecordHypotheses => "recordHypotheses",
            CommandName::RegisterProbe => "probeSnippet",
            CommandName::Run => "run",
            CommandName::RunReproduction => "runReproduction",
            CommandName::Mark => "mark",
        }
    }

    /// What a person calls the command.
    pub fn label(self) -> &'static str {
        match self {
            CommandName::Start => "start",
            CommandName::HandOff => "hand off",
            CommandName::Proceed => "proceed",
            CommandName::Done => "mark fixed",
            CommandName::Abort => "abort",
            CommandName::Observe => "observe",
            CommandName::Attach => "attach",
            CommandName::RecordHypotheses => "record hypotheses",
            CommandName::RegisterProbe => "place a probe",
            CommandName::Run => "record a run",
            CommandName::RunReproduction => "run the reproduction",
            CommandName::Mark => "mark",
        }
    }

    fn action(self) -> &'static str {
        match self {
            CommandName::Start => "start a debug session",
            CommandName::HandOff => "hand the round to the user",
            CommandName::Proceed => "proceed",
            CommandName::Done => "mark the bug fixed",
            CommandName::Abort => "abort",
            CommandName::Observe => "record an observation",
            CommandName::Attach => "attach an artifact",
            CommandName::RecordHypotheses => "record hypotheses",
            CommandName::RegisterProbe => "place a probe",
            CommandName::Run => "record this run",
            CommandName::RunReproduction => "run the reproduction yourself",
            CommandName::Mark => "mark the moment in the run",
        }
    }

    /// Commands a person issues (buttons, slash commands); the rest come from
    /// the agent's tools.
    pub fn is_user_command(self) -> bool {
        matches!(
            self,
            CommandName::Start
                | CommandName::Proceed
                | CommandName::Done
                | CommandName::Abort
                | CommandName::Run
                | CommandName::Mark
        )
    }
}

impl fmt::Display for CommandName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DomainError {
    /// The command is not legal in the current stage. The state is unchanged.
    #[error("{}", illegal_message(*command, *stage, legal))]
    Illegal {
        command: CommandName,
        /// None when no debug session is active.
        stage: Option<Stage>,
        legal: Vec<CommandName>,
    },
    /// A parameter is unusable; `field` names it.
    #[error("invalid {field}: {reason}")]
    Invalid { field: String, reason: String },
    /// The command is legal in the stage but the evidence it needs is not
    /// there yet (Mark fixed on a flaky bug's one lucky run); `reason` says
    /// what would do and what the person may do instead.
    #[error("{reason}")]
    Refused {
        command: CommandName,
        reason: String,
    },
}

impl DomainError {
    pub fn invalid(field: impl Into<String>, reason: impl Into<String>) -> Self {
        DomainError::Invalid {
            field: field.into(),
            reason: reason.into(),
        }
    }
}

fn illegal_message(command: CommandName, stage: Option<Stage>, legal: &[CommandName]) -> String {
    let why = match (command, stage) {
        (CommandName::Start, Some(stage)) => format!(
            "a debug session is already active (stage {}); abort it or finish it first",
            stage.as_str()
        ),
        (_, None) => "no debug session is active; start one first".to_string(),
        (CommandName::RunReproduction, Some(Stage::UserTurn)) => {
            "the person holds the round: they reproduce it and press Proceed (or Mark fixed); \
             wait for that"
                .to_string()
        }
        (CommandName::Done, Some(Stage::CleaningUp)) => {
            "the session is already cleaning up its probes".to_string()
        }
        (_, Some(Stage::CleaningUp)) => {
            "the session is cleaning up; only removing probes and aborting remain".to_string()
        }
        (_, Some(stage)) => format!("not possible while the stage is {}", stage.as_str()),
    };
    let legal: Vec<&str> = legal.iter().map(|c| c.label()).collect();
    format!(
        "Cannot {}: {why}. Possible now: {}.",
        command.action(),
        legal.join(", ")
    )
}
