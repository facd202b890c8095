//! Host profiles (DESIGN section 9): the program a person meets Debug Mode
//! in, what they press or type there to give each of their commands, and
//! how much of a hand-off form it draws. Every text that names an action of
//! the person's takes it from the profile of the client in front of it, so
//! nothing names a button, prompt or command that host does not have.
//! Measured in the lab where the host runs here (see `docs/hosts/`).

use crate::core::harness_memory::PersonCommandKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub enum Host {
    /// A plain MCP client, or one we do not know: MCP prompts by their
    /// names, and the terminal.
    #[default]
    Mcp,
    ClaudeCode,
    Codex,
    Gemini,
    Copilot,
    OpenCode,
    Pi,
    OhMyPi,
    /// An editor speaking ACP to `debug-sidecar acp -- <agent>` (Zed,
    /// JetBrains, CodeCompanion, agent-shell).
    Acp,
    VsCode,
    Neovim,
    Emacs,
}

/// Every host, in the order the docs list them.
pub const HOSTS: &[Host] = &[
    Host::ClaudeCode,
    Host::Codex,
    Host::Gemini,
    Host::Copilot,
    Host::OpenCode,
    Host::Pi,
    Host::OhMyPi,
    Host::Acp,
    Host::VsCode,
    Host::Neovim,
    Host::Emacs,
    Host::Mcp,
];

/// The environment variable a launcher sets on `debug-sidecar mcp` to name
/// the host the person sees, where the MCP client's own name would mislead
/// (the ACP proxy: the agent's SDK connects, the person is in an editor).
pub const HOST_ENV: &str = "DEBUG_SIDECAR_HOST";

/// How the person gives their commands from a terminal, in every host.
pub const TERMINAL_PROCEED: &str = "debug-sidecar proceed [what you saw]";
pub const TERMINAL_DONE: &str = "debug-sidecar done";

/// Whether the agent is woken by itself in a host (see [`Host::wake`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Wake {
    /// How the host's waker starts the agent's turn.
    Woken(&'static str),
    /// Why nothing can.
    None(&'static str),
    /// An editor: the person presses Proceed there; the agent runs elsewhere.
    Elsewhere,
}

/// How the person gives one command in a host: typed text (a slash
/// command, an editor command) or a button's label and where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spelling {
    Typed(&'static str),
    /// Words the person asks the agent in (the agent calls the tool).
    Asked(&'static str),
    /// A button's label, and where it is.
    Button(&'static str, &'static str),
}

impl Spelling {
    /// The clause a sentence uses: "type /x", "press Proceed in ...".
    pub fn clause(self) -> String {
        match self {
            Spelling::Typed(text) => format!("type {text}"),
            Spelling::Asked(words) => format!("ask the agent: \"{words}\""),
            Spelling::Button(label, place) => format!("press {label} {place}"),
        }
    }

    /// What is typed or pressed, without where.
    pub fn what(self) -> &'static str {
        match self {
            Spelling::Typed(text) | Spelling::Asked(text) | Spelling::Button(text, _) => text,
        }
    }
}

impl Host {
    /// From a client's self-given name (MCP `clientInfo.name`, protocol v1
    /// `clientInfo.name`, a hook's dialect name or `DEBUG_SIDECAR_HOST`).
    pub fn of_client(name: &str) -> Self {
        let name = name.to_ascii_lowercase();
        let name = name.trim();
        if name.contains("acp") {
            Host::Acp
        } else if name.starts_with("claude-code") || name == "claude code" {
            // Not Claude Desktop (`claude-ai`): it has none of these commands.
            Host::ClaudeCode
        } else if name.starts_with("codex") {
            Host::Codex
        } else if name.starts_with("gemini") {
            Host::Gemini
        } else if name.contains("copilot") {
            Host::Copilot
        } else if name.starts_with("opencode") {
            Host::OpenCode
        } else if name.starts_with("oh-my-pi") || name == "omp" {
            Host::OhMyPi
        } else if name == "pi" || name.starts_with("pi-") {
            Host::Pi
        } else if name.contains("visual studio code")
            || name.contains("vscode")
            || name.contains("code-server")
        {
            Host::VsCode
        } else if name.contains("neovim") || name.contains("nvim") {
            Host::Neovim
        } else if name.contains("emacs") || name.ends_with(".el") {
            Host::Emacs
        } else {
            Host::Mcp
        }
    }

    /// From an MCP client's name: an editor's own MCP client (VS Code's,
    /// for its chat) is not our editor extension, whose buttons it lacks.
    pub fn of_mcp_client(name: &str) -> Self {
        match Host::of_client(name) {
            Host::VsCode | Host::Neovim | Host::Emacs => Host::Mcp,
            host => host,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Host::Mcp => "an MCP client",
            Host::ClaudeCode => "Claude Code",
            Host::Codex => "Codex",
            Host::Gemini => "Gemini CLI",
            Host::Copilot => "Copilot CLI",
            Host::OpenCode => "OpenCode",
            Host::Pi => "pi",
            Host::OhMyPi => "oh-my-pi",
            Host::Acp => "an ACP editor",
            Host::VsCode => "VS Code",
            Host::Neovim => "Neovim",
            Host::Emacs => "Emacs",
        }
    }

    /// The name of the host's page under `docs/hosts/`.
    pub fn slug(self) -> &'static str {
        match self {
            Host::Mcp => "mcp",
            Host::ClaudeCode => "claude-code",
            Host::Codex => "codex",
            Host::Gemini => "gemini-cli",
            Host::Copilot => "copilot-cli",
            Host::OpenCode => "opencode",
            Host::Pi => "pi",
            Host::OhMyPi => "oh-my-pi",
            Host::Acp => "acp",
            Host::VsCode => "vscode",
            Host::Neovim => "neovim",
            Host::Emacs => "emacs",
        }
    }

    /// The host a slug names (as [`Host::slug`] writes it).
    pub fn of_slug(slug: &str) -> Option<Host> {
        HOSTS.iter().copied().find(|host| host.slug() == slug)
    }

    /// The table of the person's commands on the host's page (the docs
    /// test keeps each page's copy equal to it).
    pub fn doc_table(self) -> String {
        use PersonCommandKind::{Abort, Done, Proceed, Start};
        let mut out = String::from("| You want to | In this host |\n|---|---|\n");
        for (what, kind) in [
            ("start Debug Mode on a problem", Start),
            ("hand the round back after reproducing (Proceed)", Proceed),
            ("say it is fixed (Mark fixed)", Done),
            ("stop the session", Abort),
        ] {
            let how = match self.spelling(kind) {
                Spelling::Typed(text) => format!("type `{text}`"),
                Spelling::Asked(words) => format!("ask the agent in words: \"{words}\""),
                Spelling::Button(label, place) => format!("press **{label}** {place}"),
            };
            out.push_str(&format!("| {what} | {how} |\n"));
        }
        let form = match self.form_lines() {
            Some(n) => format!(
                "the agent's hand-off opens a form in the chat; the host draws {n} lines of its \
                 message, so the form says what to run in 2 lines and the choices in the third"
            ),
            None => "the hand-off form, where the host shows one, is drawn whole".to_string(),
        };
        out.push_str(&format!("| see the steps to reproduce | {form} |\n"));
        out.push_str(&format!(
            "| do any of it from a terminal | `{TERMINAL_PROCEED}`, `{TERMINAL_DONE}`, \
             `debug-sidecar start [the problem]`, `debug-sidecar abort` |\n"
        ));
        let wake = match self.wake() {
            Wake::Woken(how) => format!("the agent's next turn starts by itself: {how}"),
            Wake::None(why) => format!(
                "nothing here starts the agent's turn ({why}): say \"go on\" in the chat and it \
                 reads the evidence"
            ),
            Wake::Elsewhere => "the agent is woken where it runs, in a host that can be (the \
                                README's table)"
                .to_string(),
        };
        out.push_str(&format!(
            "| go on after Proceed or Mark fixed given elsewhere (a terminal, an editor) | \
             {wake} |\n"
        ));
        out
    }

    /// Whether a person's Proceed given away from the chat starts the
    /// agent's next turn in this host, and how (measured in the lab), or why
    /// not.
    pub fn wake(self) -> Wake {
        match self {
            Host::ClaudeCode => Wake::Woken(
                "a second Stop hook waits in the background after each turn (`asyncRewake`) \
                 and wakes the idle session with the kickoff; the chat shows \"Stop hook \
                 feedback\"",
            ),
            Host::Pi | Host::OhMyPi => Wake::Woken(
                "the extension sends the kickoff as your message (`pi.sendUserMessage`) while \
                 the agent is idle, and says why",
            ),
            Host::OpenCode => Wake::Woken(
                "the plugin prompts the conversation with the kickoff \
                 (`client.session.promptAsync`) while it is idle, and says why in a toast",
            ),
            Host::Acp => Wake::Woken(
                "the proxy sends the agent the kickoff as a prompt of its own \
                 (`session/prompt`) and shows the chat why",
            ),
            Host::Codex => Wake::None(
                "Codex 0.171.0's hooks run only inside a turn, `notify` only reports a turn's \
                 end, and its remote control goes through OpenAI's servers with an account",
            ),
            Host::Gemini => Wake::None(
                "Gemini CLI 0.61.0's hooks run only inside a turn and nothing else starts one",
            ),
            Host::Copilot => Wake::None(
                "Copilot CLI 1.0.102's hooks run only inside a turn and nothing else starts one",
            ),
            Host::Mcp => Wake::None("MCP gives a server no way to start the client's turn"),
            Host::VsCode | Host::Neovim | Host::Emacs => Wake::Elsewhere,
        }
    }

    /// What the person types or presses there for `kind`. Words a command
    /// takes are shown in brackets (no angle brackets: Gemini CLI escapes
    /// them in hook text).
    pub fn spelling(self, kind: PersonCommandKind) -> Spelling {
        use PersonCommandKind::{Abort, Done, Proceed, Start};
        let typed = Spelling::Typed;
        match (self, kind) {
            (Host::ClaudeCode, Start) => typed("/mcp__debug-sidecar__debug [the problem]"),
            (Host::ClaudeCode, Proceed) => {
                typed("/mcp__debug-sidecar__debug-proceed [what you saw]")
            }
            (Host::ClaudeCode, Done) => typed("/mcp__debug-sidecar__debug-done"),
            (Host::ClaudeCode, Abort) => typed("/mcp__debug-sidecar__debug-abort"),
            // Codex's TUI rejects every `/` it does not know; its prompt
            // hook sees words. No MCP prompts there.
            (Host::Codex, Start) => Spelling::Asked("use Debug Mode on this: [the problem]"),
            (Host::Codex, Proceed) => typed("debug-proceed [what you saw]"),
            (Host::Codex, Done) => typed("debug-done"),
            (Host::Codex, Abort) => typed("debug-abort"),
            (Host::OpenCode, Start) => typed("/debug-sidecar:debug [the problem]"),
            (Host::OpenCode, Proceed) => typed("/debug-sidecar:debug-proceed"),
            (Host::OpenCode, Done) => typed("/debug-sidecar:debug-done"),
            (Host::OpenCode, Abort) => typed("/debug-sidecar:debug-abort"),
            (Host::VsCode, Start) => {
                Spelling::Button("Debug Mode: Start", "in the command palette")
            }
            (Host::VsCode, Proceed) => {
                Spelling::Button("Proceed", "in the Debug Mode notification")
            }
            (Host::VsCode, Done) => {
                Spelling::Button("Mark Fixed", "in the Debug Mode notification")
            }
            (Host::VsCode, Abort) => {
                Spelling::Button("Debug Mode: Abort", "in the command palette")
            }
            (Host::Neovim, Start) => typed(":DebugStart [the problem]"),
            (Host::Neovim, Proceed) => typed(":DebugProceed [what you saw]"),
            (Host::Neovim, Done) => typed(":DebugDone"),
            (Host::Neovim, Abort) => typed(":DebugAbort"),
            (Host::Emacs, Start) => typed("M-x debug-sidecar-start"),
            (Host::Emacs, Proceed) => typed("M-x debug-sidecar-proceed"),
            (Host::Emacs, Done) => typed("M-x debug-sidecar-done"),
            (Host::Emacs, Abort) => typed("M-x debug-sidecar-abort"),
            // Copilot CLI (its prompt hook applies what is typed),
            // Gemini CLI (our MCP prompts), pi, oh-my-pi (the extension's
            // commands), ACP editors (the proxy's commands), plain MCP.
            (_, Start) => typed("/debug [the problem]"),
            (_, Proceed) => typed("/debug-proceed [what you saw]"),
            (_, Done) => typed("/debug-done"),
            (_, Abort) => typed("/debug-abort"),
        }
    }

    /// Whether the host shows our MCP prompts as slash commands, or has
    /// commands of its own for them; a plain MCP client may have neither,
    /// so texts add the terminal commands.
    pub fn has_commands(self) -> bool {
        self != Host::Mcp
    }

    /// Whether something tells the sidecar when the agent's turn ends (a
    /// Stop hook, an extension's turn events, the ACP proxy). A plain MCP
    /// client (Cursor, Zed's own agent) sends none: its cleanup ends when a
    /// call finds the ledger clean.
    pub fn reports_stops(self) -> bool {
        self != Host::Mcp
    }

    /// How many lines of a hand-off form's message the host draws; None
    /// where it shows forms whole or has none. Claude Code 2.1.332 draws
    /// three, then "… (+N more lines)", and nothing expands it.
    pub fn form_lines(self) -> Option<usize> {
        match self {
            Host::ClaudeCode => Some(3),
            _ => None,
        }
    }

    /// Whether the host may decline a form by itself, without showing it
    /// to anyone (`codex exec` declines every elicitation).
    pub fn declines_forms_unseen(self) -> bool {
        self == Host::Codex
    }

    /// Whether the host closes a form the server withdraws (MCP's
    /// `notifications/cancelled` for its `elicitation/create`). Codex
    /// 0.171.0 keeps it queued and shows it again after the next form, so
    /// there the form stays until the person closes it.
    pub fn withdraws_forms(self) -> bool {
        self != Host::Codex
    }

    /// Whether the host's `/debug` is a command of its own: Claude Code's
    /// built-in Debug skill (its session debug log), which the person's
    /// `/debug` runs; ours is spelled `/mcp__debug-sidecar__debug` there.
    pub fn owns_bare_debug(self) -> bool {
        self == Host::ClaudeCode
    }

    /// Whether the host shows the person the text a stop hook sends the
    /// model back with (Claude Code: "Stop hook says: …"; Codex's TUI:
    /// "Blocked by hook" and its reason): it must read right to both.
    pub fn shows_send_back(self) -> bool {
        matches!(self, Host::ClaudeCode | Host::Codex)
    }

    /// One sentence telling the person how to go on after reproducing:
    /// Proceed, or Mark fixed, as this host spells them.
    pub fn go_on_line(self) -> String {
        let proceed = self.spelling(PersonCommandKind::Proceed).clause();
        let done = self.spelling(PersonCommandKind::Done).clause();
        let terminal = if self.has_commands() {
            String::new()
        } else {
            format!(" (in a terminal: `{TERMINAL_PROCEED}`, `{TERMINAL_DONE}`)")
        };
        format!("Once you have reproduced it, {proceed}; if it is fixed, {done}{terminal}.")
    }

    /// What the person types here to mark it fixed with `words` (a note the
    /// command carries to the session); None where Mark fixed takes no
    /// words (VS Code's button, OpenCode's and a plain MCP client's
    /// prompts, which declare no note).
    pub fn done_with(self, words: &str) -> Option<String> {
        match self {
            Host::VsCode | Host::OpenCode | Host::Mcp => None,
            Host::Emacs => Some(format!("C-u M-x debug-sidecar-done RET {words} RET")),
            _ => Some(format!(
                "{} {words}",
                self.spelling(PersonCommandKind::Done).what()
            )),
        }
    }

    /// The same for the model's texts: how the person continues here.
    pub fn go_on_for_model(self) -> String {
        let proceed = self.spelling(PersonCommandKind::Proceed).clause();
        let done = self.spelling(PersonCommandKind::Done).clause();
        format!(
            "they {proceed} once they have reproduced it, or {done} if it is fixed (in a \
             terminal: `{TERMINAL_PROCEED}`, `{TERMINAL_DONE}`)"
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clients_are_known_by_their_names() {
        assert_eq!(Host::of_client("claude-code"), Host::ClaudeCode);
        assert_eq!(Host::of_client("Claude Code"), Host::ClaudeCode);
        assert_eq!(Host::of_client("claude-ai"), Host::Mcp);
        assert_eq!(Host::of_mcp_client("Visual Studio Code"), Host::Mcp);
        assert_eq!(Host::of_mcp_client("claude-code"), Host::ClaudeCode);
        assert_eq!(Host::of_client("codex-mcp-client"), Host::Codex);
        assert_eq!(Host::of_client("gemini-cli-mcp-client"), Host::Gemini);
        assert_eq!(Host::of_client("github-copilot-developer"), Host::Copilot);
        assert_eq!(Host::of_client("opencode"), Host::OpenCode);
        assert_eq!(Host::of_client("pi"), Host::Pi);
        assert_eq!(Host::of_client("oh-my-pi"), Host::OhMyPi);
        assert_eq!(Host::of_client("acp"), Host::Acp);
        assert_eq!(Host::of_client("Visual Studio Code"), Host::VsCode);
        assert_eq!(Host::of_client("code-server"), Host::VsCode);
        assert_eq!(Host::of_client("Neovim"), Host::Neovim);
        assert_eq!(Host::of_client("debug-sidecar.el"), Host::Emacs);
        assert_eq!(Host::of_client("something else"), Host::Mcp);
        assert_eq!(Host::of_client(""), Host::Mcp);
    }

    #[test]
    fn no_host_is_told_of_a_command_it_lacks() {
        // Claude Code types ours with the MCP prefix only: its own `/debug`
        // is another command, and `/debug-proceed` does not exist there.
        for kind in [
            PersonCommandKind::Start,
            PersonCommandKind::Proceed,
            PersonCommandKind::Done,
            PersonCommandKind::Abort,
        ] {
            let Spelling::Typed(text) = Host::ClaudeCode.spelling(kind) else {
                panic!("Claude Code has no buttons of ours");
            };
            assert!(text.starts_with("/mcp__debug-sidecar__debug"), "{text}");
        }
        assert!(!Host::ClaudeCode.go_on_line().contains("press"));
        assert!(Host::VsCode.go_on_line().contains("press Proceed"));
        assert!(Host::Mcp.go_on_line().contains(TERMINAL_PROCEED));
        for host in HOSTS {
            assert!(!host.go_on_line().contains('<'), "{host:?}");
        }
    }
}
