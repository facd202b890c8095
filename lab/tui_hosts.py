"""Claude Code's and Codex's interactive terminal UIs driven as a person
drives them (lab/tui.py: tmux, read through pyte): starting in a project
after `install ... --write`, their first dialogs, the prompt box, and
their hand-off forms answered with the keyboard.

Measured with Claude Code 2.1.332, 100x40:
- the trust dialog preselects "No, exit"; Down, Enter accepts it;
- "New MCP server found in this project" preselects "Continue without using
  this MCP server" (Up, Up, Enter approves it);
- the first prompt switches to the alternate screen: what scrolled off is
  in no scrollback, only in the screens seen;
- a hand-off form ('MCP server "debug-sidecar" requests your input') draws
  the message (4 lines at most; a longer one as 3 and "… (+N more
  lines)"), each line cut at the right edge with "…", then per field its
  title and its description on one line (a newline in it drawn as "�"),
  then "Accept    Decline". The focused row has a ❯. The choice field opens
  with Right, Down moves to an option, Space picks it; Down (or Enter)
  moves to the Note field, typed text fills it; Down to Accept, Enter
  sends; Esc cancels the form.
- a hook's systemMessage is drawn under the call or line it follows as
  "<Event>[:<tool>] says: …"; a Stop hook's additionalContext as "Ran 1
  stop hook / Stop hook says: …".

Codex 0.171.0's TUI: a hooks review dialog first; a typed `/debug …` (or
`/debug-proceed`) is answered "Unrecognized command" and reaches no hook;
the MCP form is drawn whole (wrapped) under `approval_policy =
"on-request"`, a numbered list then the note, Enter to go on and to send."""

import json
import os
import re
import time

from harness import check, claude_env, codex_config, Failure
from tui import Tui

COLS, ROWS = 100, 40
FORM_TITLE = "MCP server “debug-sidecar” requests your input"
TRUST = "Yes, I trust this folder"
MCP_DIALOG = "New MCP server found in this project"
# The prompt box is ready: its rule, the ❯ and the footer under it.
READY = re.compile(r"(?m)^─{20,}\n❯ ?.*\n─{20,}\n")
KEY = "lab-key"

# What a Claude Code user cannot press or type: buttons outside a form,
# prompts by a name the prompt box does not take (it takes
# /mcp__debug-sidecar__debug-proceed, not /debug-proceed nor the slash
# menu's /debug-sidecar:debug-proceed).
NOT_IN_THIS_HOST = [
    (re.compile(r"\bpress (Proceed|Mark fixed)\b"), "a button, with no form open"),
    (re.compile(r"(?<![\w-])/?debug-(proceed|done|abort)\b"),
     "a prompt by a name Claude Code does not take (it is /mcp__debug-sidecar__debug-…)"),
    (re.compile(r"/debug-sidecar:debug"), "the slash menu's name, which cannot be typed"),
]



class ClaudeTui:
    """Claude Code's interactive UI in tmux, as a person starts it in the
    project after `install claude --write`."""

    name = "claude"

    def __init__(self, binary, workspace, port):
        self.binary = binary
        self.ws = workspace
        self.env = claude_env(workspace, port)
        self.tui = None

    def install(self):
        out = self.ws.sidecar("install", "claude", "--write")
        # What a person who has used Claude Code before has in ~/.claude.json:
        # onboarding (theme, login) done and the API key in the environment
        # approved once ("Detected a custom API key in your environment",
        # which keeps the last 20 characters). No folder is trusted yet.
        with open(os.path.join(self.ws.home, ".claude.json"), "w") as f:
            json.dump({"hasCompletedOnboarding": True,
                       "customApiKeyResponses": {"approved": [KEY[-20:]], "rejected": []}}, f)
        return out

    def start(self, *args):
        self.tui = Tui([self.binary, *args], self.ws.root, self.env, self.ws.base,
                       cols=COLS, rows=ROWS)
        return self.tui

    def first_start(self, approve_mcp=True):
        """Accept the trust dialog with the keyboard; then, where Claude Code
        asks about the project's MCP server, approve it (or fail, with
        approve_mcp False). The prompt box is ready after."""
        t = self.tui
        t.wait_for(TRUST, 40, "the trust dialog")
        # Keys sent while the program is still drawing its first screen are lost.
        shown = t.settle(0.8)
        check("❯ No, exit" in shown, f"the trust dialog's preselection:\n{t.dump()}")
        t.keys("Down")
        t.wait_for(f"❯ {TRUST}", 5, "the cursor on 'Yes, I trust this folder'")
        t.keys("Enter")
        deadline = time.monotonic() + 40
        while time.monotonic() < deadline:
            text = t.text()
            if MCP_DIALOG in text:
                if not approve_mcp:
                    raise Failure("after `install claude --write` Claude Code still asks "
                                  f"\"{MCP_DIALOG}\":\n{t.dump()}")
                t.keys("Up", "Up")
                t.wait_for("❯ Use this MCP server", 5, "the cursor on 'Use this MCP server'")
                t.keys("Enter")
                t.wait_gone(MCP_DIALOG, 10)
            elif READY.search(text) and TRUST not in text:
                return t.settle()
            time.sleep(0.1)
        raise Failure(f"the prompt box never came after the trust dialog:\n{t.dump()}")

    def submit(self, text):
        """Type a line into the prompt box and send it."""
        t = self.tui
        t.wait_for(READY, 30, "the prompt box")
        t.type(text)
        t.wait_for(text[:60], 5, "the typed text in the prompt box")
        t.keys("Enter")

    def kill(self):
        if self.tui:
            self.tui.kill()


# The form

def form_of(screen):
    """The form on a screen, as its lines (title to the key help); None."""
    lines = screen.split("\n")
    start = next((i for i, line in enumerate(lines) if FORM_TITLE in line), None)
    if start is None:
        return None
    end = next((i for i in range(start, len(lines)) if "Esc to cancel" in lines[i]), len(lines) - 1)
    return lines[start:end + 1]


def form_message(form):
    """The message lines a form draws: after the title, up to the first field."""
    out = []
    for line in form[1:]:
        if re.match(r"^\s*(❯ )?\s*[*✔]? ?What now\?", line):
            break
        out.append(line)
    return [line for line in out if line.strip()]


def wait_form(t, round_no, timeout=25):
    """The next form, for round `round_no`: its lines."""
    t.wait_for(re.compile(re.escape(FORM_TITLE) + r"\n\n.*\b[Rr]ound " + str(round_no) + r"\b"),
               timeout, f"the round {round_no} hand-off form")
    t.wait_for("Accept    Decline", 5, "the form's buttons")
    return form_of(t.settle(0.3))


def check_forms_whole(t):
    """Every form seen showed all of its text: no "… (+N more lines)" in
    the message, no line cut at the right edge ("…"), no character drawn
    as "�" (Claude Code draws a newline inside a field's description so)."""
    for screen in t.screens_with(FORM_TITLE):
        form = form_of(screen)
        if not form or "Accept    Decline" not in "\n".join(form):
            continue  # a form still being drawn
        shown = "\n".join(form)
        check(not any("more lines" in line for line in form_message(form)),
              "the form hides part of its message:\n" + shown)
        for line in form[1:-1]:
            if "Type something…" in line:
                continue  # the note field's placeholder
            check(not line.rstrip().endswith("…"),
                  f"a line of the form is cut at the screen's edge: {line.strip()!r}\n" + shown)
            check("\ufffd" not in line,
                  f"a line of the form draws a character as \ufffd: {line.strip()!r}\n" + shown)


def pick(t, label):
    """Open the choice field (Right), move to `label`, pick it (Space)."""
    t.wait_for(re.compile(r"❯ [*✔] What now\?"), 5, "the cursor on the choice field")
    t.keys("Right")
    t.wait_for(label, 5, f"the option {label!r}")
    for _ in range(5):
        if re.search(r"❯ [◯◉●] " + re.escape(label), t.text()):
            break
        t.keys("Down")
    else:
        raise Failure(f"the cursor never reached {label!r}:\n{t.dump()}")
    t.keys("Space")
    t.wait_for(re.compile(r"✔ What now\?: ▸? ?" + re.escape(label)), 5, f"{label!r} picked")


def write_note(t, note):
    t.keys("Down")
    t.wait_for(re.compile(r"❯ +[*✔]? ?Note:"), 5, "the cursor on the note field")
    t.type(note)
    t.wait_for(f"Note: {note}", 5, "the note in the form")


def accept(t):
    for _ in range(4):
        if "❯ Accept" in t.text():
            break
        t.keys("Down")
    t.wait_for("❯ Accept", 5, "the cursor on Accept")
    t.keys("Enter")
    t.wait_gone("❯ Accept", 10, "the form closing")



class CodexTui:
    """Codex's interactive UI in tmux, started in the project after
    `install codex --write`, with the person's own config: the model
    provider, the project trusted, and Codex's default approvals
    (`on-request`: under `never` Codex declines every MCP form unseen).
    `--no-daemon`: without it the TUI leaves a background app server
    running after it exits."""

    name = "codex"

    def __init__(self, binary, workspace, port):
        self.binary = binary
        self.ws = workspace
        self.port = port
        self.codex_home = os.path.join(workspace.home, ".codex")
        os.makedirs(self.codex_home, exist_ok=True)
        self.env = dict(workspace.env, CODEX_HOME=self.codex_home, LAB_KEY="lab-key")
        self.tui = None

    def install(self):
        out = self.ws.sidecar("install", "codex", "--write")
        # Codex's default approvals; "Meet GPT-6 Sol" (a model upgrade offer)
        # answered once before.
        codex_config(self.codex_home, self.port, self.ws.root, approvals=None,
                     extra='[notice.model_migrations]\n"gpt-5.5" = "gpt-6-sol"\n')
        return out

    def start(self):
        self.tui = Tui([self.binary, "--no-daemon"], self.ws.root, self.env, self.ws.base,
                       cols=COLS, rows=ROWS)
        return self.tui

    def trust_hooks(self):
        """The hooks review dialog, answered "Trust all and continue"."""
        t = self.tui
        t.wait_for("Hooks need review", 40, "Codex's hooks review dialog")
        t.settle(0.5)
        t.keys("Down")
        t.wait_for("› 2. Trust all and continue", 5, "the cursor on 'Trust all and continue'")
        t.keys("Enter")
        t.wait_for("Ask Codex to do anything", 30, "Codex's prompt box")
        return t.settle(0.5)

    def submit(self, text):
        t = self.tui
        t.type(text)
        t.wait_for(text[:40], 5, "the typed text in the prompt box")
        t.keys("Enter")

    def kill(self):
        if self.tui:
            self.tui.kill()


CODEX_FORM = re.compile(r"Field 1/2")


def codex_answer(t, option, note=None):
    """Codex's form: a numbered list (Down moves, Enter picks and goes to
    the note), the note typed, Enter sends both."""
    t.wait_for(CODEX_FORM, 40, "Codex's hand-off form")
    t.settle(0.3)
    for _ in range(4):
        if re.search(r"› \d\. " + re.escape(option), t.text()):
            break
        t.keys("Down")
    t.wait_for(re.compile(r"› \d\. " + re.escape(option)), 5, f"the cursor on {option!r}")
    t.keys("Enter")
    t.wait_for("Field 2/2", 5, "the note field")
    t.settle(0.3)
    if note:
        t.type(note)
        t.wait_for(note, 5, "the note in the form")
    t.keys("Enter")
    t.wait_gone("Field 2/2", 10, "the form closing")
