"""An ACP editor for the lab: it launches the agent through
`debug-sidecar acp -- <agent>` as Zed or a JetBrains IDE would, opens one
session, and sends the person's prompts, allowing every permission the
agent asks for. What the person sees is the agent's message chunks."""

import json
import os
import queue
import subprocess
import threading
import time

from harness import Failure, Shown, claude_env, codex_config


class AcpEditor:
    def __init__(self, command, workspace, env, nudges=None):
        self.ws = workspace
        args = ["debug-sidecar", "acp"]
        if nudges is not None:
            args += ["--nudges", str(nudges)]
        self.stderr = open(os.path.join(workspace.base, "acp-stderr.log"), "w")
        self.proc = subprocess.Popen(args + ["--"] + command, cwd=workspace.root, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.stderr, text=True)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        self.next_id = 0
        self.seen = []  # every message the editor received
        self.session = None

    def _read(self):
        for line in self.proc.stdout:
            try:
                self.lines.put(json.loads(line))
            except ValueError:
                self.lines.put({"notJson": line})
        self.lines.put(None)

    def send(self, message):
        message["jsonrpc"] = "2.0"
        self.proc.stdin.write(json.dumps(message) + "\n")
        self.proc.stdin.flush()

    def request(self, method, params, timeout=180):
        """A request and the messages up to its answer; permission requests
        on the way are allowed, as a person clicking Allow would."""
        self.next_id += 1
        rid = f"editor-{self.next_id}"
        self.send({"id": rid, "method": method, "params": params})
        got = []
        while True:
            try:
                message = self.lines.get(timeout=timeout)
            except queue.Empty:
                raise Failure(f"no answer to {method} in {timeout} s") from None
            if message is None:
                raise Failure(f"the proxy exited before answering {method}: "
                              f"{open(self.stderr.name).read()[-2000:]}")
            self.seen.append(message)
            if message.get("id") == rid and "method" not in message:
                if "error" in message:
                    raise Failure(f"{method} failed: {message['error']}")
                return message["result"], got
            got.append(message)
            if message.get("method") == "session/request_permission":
                options = message["params"].get("options", [])
                allow = next((o for o in options if o.get("kind", "").startswith("allow")),
                             options[0] if options else None)
                self.send({"id": message["id"], "result": {"outcome": {
                    "outcome": "selected", "optionId": allow["optionId"]}}})
            elif "id" in message and "method" in message:
                # fs/terminal requests: this editor offers no such capability.
                self.send({"id": message["id"], "error": {"code": -32601,
                                                          "message": "not offered"}})

    def open(self):
        result, _ = self.request("initialize", {
            "protocolVersion": 1, "clientInfo": {"name": "lab-editor", "version": "1"},
            "clientCapabilities": {"fs": {"readTextFile": False, "writeTextFile": False},
                                   "terminal": False}})
        self.agent = result
        result, updates = self.request("session/new", {"cwd": self.ws.root, "mcpServers": []})
        self.session = result["sessionId"]
        return result

    def prompt(self, text, timeout=180):
        result, got = self.request("session/prompt", {
            "sessionId": self.session, "prompt": [{"type": "text", "text": text}]}, timeout)
        chunks = [m["params"]["update"]["content"].get("text", "") for m in got
                  if m.get("method") == "session/update"
                  and m["params"]["update"].get("sessionUpdate") == "agent_message_chunk"]
        shown = Shown([], "", text="".join(chunks))
        shown.result = result
        shown.updates = got
        return shown

    def chunks(self):
        """The agent_message_chunk texts the editor was shown so far."""
        return [m["params"]["update"]["content"].get("text", "") for m in self.seen
                if m.get("method") == "session/update"
                and m["params"]["update"].get("sessionUpdate") == "agent_message_chunk"]

    def watch(self, until, timeout, what):
        """Reads what the proxy sends unasked (a turn it started itself),
        allowing permission requests as `request` does, until `until()`."""
        deadline = time.monotonic() + timeout
        while not until():
            left = deadline - time.monotonic()
            if left <= 0:
                raise Failure(f"{what}: not within {timeout} s")
            try:
                message = self.lines.get(timeout=min(left, 0.2))
            except queue.Empty:
                continue
            if message is None:
                raise Failure(f"the proxy exited: {open(self.stderr.name).read()[-2000:]}")
            self.seen.append(message)
            if message.get("method") == "session/request_permission":
                options = message["params"].get("options", [])
                allow = next((o for o in options if o.get("kind", "").startswith("allow")),
                             options[0] if options else None)
                self.send({"id": message["id"], "result": {"outcome": {
                    "outcome": "selected", "optionId": allow["optionId"]}}})
            elif "id" in message and "method" in message:
                self.send({"id": message["id"], "error": {"code": -32601,
                                                          "message": "not offered"}})

    def commands(self, wait=10):
        """The newest command list the editor was given, once one came."""
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            try:
                message = self.lines.get(timeout=0.2)
            except queue.Empty:
                if self._lists():
                    break
                continue
            if message is None:
                break
            self.seen.append(message)
        lists = self._lists()
        return [c["name"] for c in lists[-1]] if lists else []

    def _lists(self):
        lists = [m["params"]["update"]["availableCommands"] for m in self.seen
                 if m.get("method") == "session/update"
                 and m["params"]["update"].get("sessionUpdate") == "available_commands_update"]
        return lists

    def close(self):
        try:
            self.proc.stdin.close()
        except OSError:
            pass
        try:
            return self.proc.wait(timeout=15)
        finally:
            self.stderr.close()


class AcpAgent:
    """An ACP agent behind the proxy, opened in one session."""

    def __init__(self, binary, workspace, env, nudges):
        self.editor = AcpEditor(["node", binary], workspace, env, nudges)
        self.editor.open()

    def prompt(self, text, timeout=180):
        return self.editor.prompt(text, timeout)

    def close(self):
        return self.editor.close()


class ClaudeAcp(AcpAgent):
    """`@zed-industries/claude-agent-acp` (the Claude Code SDK inside) behind
    the proxy, its model our scripted server."""

    name = "claude-acp"
    shows_hook_messages = True

    @staticmethod
    def names(tool):
        return tool if tool[0].isupper() else f"mcp__debug-sidecar__{tool}"

    def __init__(self, binary, workspace, port, nudges=None):
        env = claude_env(workspace, port)
        # Root may not skip permissions: with IS_SANDBOX the agent's
        # session/new fails as root.
        env.pop("IS_SANDBOX", None)
        with open(os.path.join(workspace.home, ".claude.json"), "w") as f:
            json.dump({"projects": {workspace.root: {"hasTrustDialogAccepted": True}},
                       "hasCompletedOnboarding": True}, f)
        super().__init__(binary, workspace, env, nudges)


class ServeWatcher:
    """A `debug-sidecar serve` client, as an editor's status line is: it
    keeps every turn state the server announces."""

    def __init__(self, ws):
        self.server = subprocess.Popen(["debug-sidecar", "serve"], cwd=ws.root, env=ws.env,
                                       stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       stderr=subprocess.DEVNULL)
        self.states = []
        self.initialized = threading.Event()
        threading.Thread(target=self._read, daemon=True).start()
        self._send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                    "params": {"capabilities": {}, "rootUri": f"file://{ws.root}"}})
        if not self.initialized.wait(30):
            raise Failure("debug-sidecar serve did not answer initialize")
        self._send({"jsonrpc": "2.0", "method": "initialized", "params": {}})

    def _send(self, message):
        body = json.dumps(message).encode()
        self.server.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.server.stdin.flush()

    def _read(self):
        out = self.server.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(out.read(length))
            if message.get("id") == 1:
                self.initialized.set()
            if message.get("method") == "turn/stateChanged":
                state = message["params"]["state"]
                if not self.states or self.states[-1] != state:
                    self.states.append(state)

    def close(self):
        self.server.stdin.close()
        try:
            self.server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.server.kill()


class CodexAcp(AcpAgent):
    """`@zed-industries/codex-acp` behind the proxy, its model provider our
    scripted Responses server (the person's own `config.toml`)."""

    name = "codex-acp"
    shows_hook_messages = True

    @staticmethod
    def names(tool):
        return tool if tool in ("exec_command", "apply_patch", "update_plan") \
            else ("mcp__debug_sidecar", tool)

    def __init__(self, binary, workspace, port, nudges=None):
        codex_home = os.path.join(workspace.home, ".codex")
        os.makedirs(codex_home, exist_ok=True)
        codex_config(codex_home, port, workspace.root)
        env = dict(workspace.env, CODEX_HOME=codex_home, LAB_KEY="lab-key")
        super().__init__(binary, workspace, env, nudges)
