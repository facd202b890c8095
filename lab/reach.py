"""Drivers for the harnesses issue 21 brought into the lab: Gemini CLI
and Copilot CLI, each headless against the scripted model, configured
exactly as `debug-sidecar install <harness> --write` leaves the project.
The person's own settings (the model provider, the auth method) are
written into the scratch home, as a person would have them."""

import json
import os

from harness import Shown, run_harness


class Gemini:
    """`gemini -p`, one process per prompt (`--resume latest` after the
    first). Its output is one JSON document; hook messages go to stderr."""

    name = "gemini"
    shows_hook_messages = True

    def __init__(self, binary, workspace, port):
        self.binary = binary
        self.ws = workspace
        self.started = False
        self.env = dict(
            workspace.env,
            GEMINI_API_KEY="lab-key",
            GOOGLE_GEMINI_BASE_URL=f"http://127.0.0.1:{port}",
            # What trusting the folder once in the interactive CLI does.
            GEMINI_CLI_TRUST_WORKSPACE="true",
        )
        os.makedirs(os.path.join(workspace.home, ".gemini"), exist_ok=True)
        with open(os.path.join(workspace.home, ".gemini", "settings.json"), "w") as f:
            json.dump({"security": {"auth": {"selectedType": "gemini-api-key"}},
                       "general": {"disableAutoUpdate": True},
                       "privacy": {"usageStatisticsEnabled": False}}, f)

    def install(self, cwd=None):
        return self.ws.sidecar("install", "gemini", "--write", cwd=cwd)

    def prompt(self, text, cwd=None, timeout=180):
        args = [self.binary, "-m", "gemini-2.5-flash", "--approval-mode", "yolo",
                "--output-format", "json"]
        if self.started:
            args += ["--resume", "latest"]
        args += ["-p", text]
        self.started = True
        out, _ = run_harness("gemini", args, cwd or self.ws.root, self.env, timeout)
        try:
            result = json.loads(out.stdout)
        except ValueError:
            result = {}
        shown = Shown([], out.stderr, text=(result.get("response") or "") + "\n" + out.stderr)
        shown.result = result
        return shown


class Copilot:
    """`copilot -p`, one process and one session per prompt, offline with
    our model as its provider. Output: JSON lines of events."""

    name = "copilot"
    # 1.0.102 keeps only `decision` and `reason` of a Stop hook's answer
    # (its session events show the output normalised): a `systemMessage`
    # reaches no one, in `-p` mode at least.
    shows_hook_messages = False

    def __init__(self, binary, workspace, port):
        self.binary = binary
        self.ws = workspace
        self.env = dict(
            workspace.env,
            COPILOT_OFFLINE="true",
            COPILOT_PROVIDER_BASE_URL=f"http://127.0.0.1:{port}/v1",
            COPILOT_PROVIDER_API_KEY="lab-key",
            COPILOT_MODEL="gpt-4.1",
        )

    def install(self, cwd=None):
        return self.ws.sidecar("install", "copilot", "--write", cwd=cwd)

    def prompt(self, text, cwd=None, timeout=180):
        # In `-p` mode a repository's hooks run only with `--trust-folder`
        # (a saved `trustedFolders` entry is not enough, 1.0.102), which
        # starts a new session each time: it cannot go with `--continue`
        # or `--resume`. So every prompt is a conversation of its own.
        args = [self.binary, "-p", text, "--allow-all-tools", "--trust-folder",
                "--no-auto-update", "--disable-builtin-mcps", "--output-format", "json"]
        out, events = run_harness("copilot", args, cwd or self.ws.root, self.env, timeout)
        lines = [e.get("data", {}).get("content") or e.get("data", {}).get("message") or ""
                 for e in events if e.get("type") in ("assistant.message", "session.info",
                                                      "session.warning", "hook.end",
                                                      "system.message")]
        return Shown(events, out.stderr, text="\n".join(l for l in lines if isinstance(l, str))
                     + "\n" + out.stdout + "\n" + out.stderr)
