"""OpenCode in the lab: `opencode run --format json`, one process per
prompt (`--continue` after the first), against the scripted model as a
custom `@ai-sdk/openai-compatible` provider, with the project configured
exactly as `debug-sidecar install opencode --write` leaves it (the plugin
in `.opencode/`, the MCP server in `opencode.json`)."""

import json
import os

from harness import Failure, Shown, run_harness

# A person's `/debug...` typed in the TUI is an MCP prompt; `opencode run`
# takes it as `--command <server>:<prompt>` with the rest as arguments.
COMMANDS = ("/debug-proceed", "/debug-done", "/debug-abort", "/debug")


class OpenCode:
    name = "opencode"
    # The plugin prints the sidecar's notices to stderr under `opencode run`.
    shows_hook_messages = True
    # No command hooks: the plugin speaks `serve`, which knows its nudges.
    uses_hooks = False

    # The AI SDK package OpenCode talks to the model with: chat completions
    # by default, Anthropic Messages for `OpenCodeAnthropic`.
    provider = "@ai-sdk/openai-compatible"

    def __init__(self, binary, workspace, port):
        self.binary = binary
        self.ws = workspace
        self.started = False
        self.env = dict(
            workspace.env,
            OPENCODE_DISABLE_MODELS_FETCH="1",
            OPENCODE_DISABLE_AUTOUPDATE="1",
            # OpenCode (1.18.33) installs `@opencode-ai/plugin` into every
            # config folder in the background and waits for that whenever a
            # plugin is configured; offline, npm's retries take ~70 s before
            # it gives up. The lab has no network: npm is told so.
            npm_config_offline="true",
        )
        config = os.path.join(workspace.home, ".config", "opencode")
        os.makedirs(config, exist_ok=True)
        # The person's own provider: our model, as OpenCode's docs show a
        # custom OpenAI-compatible one.
        with open(os.path.join(config, "opencode.json"), "w") as f:
            json.dump({
                "$schema": "https://opencode.ai/config.json",
                "provider": {"lab": {
                    "npm": self.provider,
                    "name": "Lab",
                    "options": {"baseURL": f"http://127.0.0.1:{port}/v1", "apiKey": "lab-key"},
                    "models": {"scripted": {"name": "Scripted", "tool_call": True}},
                }},
                "model": "lab/scripted",
                "autoupdate": False,
                "share": "disabled",
            }, f)

    def install(self, cwd=None):
        return self.ws.sidecar("install", "opencode", "--write", cwd=cwd)

    def prompt(self, text, cwd=None, timeout=240):
        args = [self.binary, "run", "--format", "json"]
        if self.started:
            args.append("--continue")
        self.started = True
        command = next((c for c in COMMANDS if text == c or text.startswith(c + " ")), None)
        if command:
            args += ["--command", f"debug-sidecar:{command[1:]}", text[len(command):].strip()]
        else:
            args.append(text)
        out, events = run_harness("opencode", args, cwd or self.ws.root, self.env, timeout)
        said = [e["part"].get("text", "") for e in events
                if e.get("type") == "text" and isinstance(e.get("part"), dict)]
        errors = [json.dumps(e.get("error")) for e in events if e.get("type") == "error"]
        shown = Shown(events, out.stderr, text="\n".join(said + errors) + "\n" + out.stderr)
        shown.errors = errors
        return shown


class OpenCodeAnthropic(OpenCode):
    """The same over Anthropic Messages, whose stream ends a text before
    the step's tool calls: the plugin decides such stops at idle."""

    provider = "@ai-sdk/anthropic"


class OpenCodeServer:
    """`opencode serve`: one long-lived OpenCode with the project's plugin
    loaded, driven over its HTTP API as its own TUI and editors drive it;
    a session stays idle between prompts, as an interactive one does."""

    def __init__(self, host):
        import socket
        import subprocess
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = s.getsockname()[1]
        self.proc = subprocess.Popen(
            [host.binary, "serve", "--port", str(self.port), "--hostname", "127.0.0.1"],
            cwd=host.ws.root, env=host.env, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self.wait_up()
        # What the person's TUI is sent (toasts among it), from the event stream.
        import threading
        self.events = []
        threading.Thread(target=self._listen, daemon=True).start()

    def _listen(self):
        import urllib.request
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/event", timeout=600) as stream:
                for line in stream:
                    line = line.decode("utf-8", "replace").strip()
                    if line.startswith("data:"):
                        try:
                            self.events.append(json.loads(line[5:]))
                        except ValueError:
                            pass
        except OSError:
            pass

    def toasts(self):
        """The toast messages the TUI was asked to show."""
        return [(e.get("properties") or {}).get("message", "") for e in list(self.events)
                if e.get("type") == "tui.toast.show"]

    def call(self, method, path, body=None, timeout=240):
        import urllib.request
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", data=data,
                                         method=method,
                                         headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            text = answer.read().decode()
        return json.loads(text) if text else None

    def wait_up(self, timeout=90):
        import time
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise Failure(f"opencode serve exited {self.proc.returncode}: "
                              f"{self.proc.stderr.read().decode()[-2000:]}")
            try:
                self.call("GET", "/session", timeout=5)
                return
            except OSError:
                time.sleep(0.2)
        raise Failure("opencode serve did not answer")

    def new_session(self):
        return self.call("POST", "/session", {})["id"]

    def command(self, session, command, arguments):
        """A person's slash command in the session (blocks until its loop ends)."""
        return self.call("POST", f"/session/{session}/command",
                         {"command": command, "arguments": arguments})

    def messages(self, session):
        return self.call("GET", f"/session/{session}/message")

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except Exception:
                self.proc.kill()
