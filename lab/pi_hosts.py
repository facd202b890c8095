"""Driving pi headless for the lab: a scratch agent directory whose
`models.json` points a provider at the scripted model (Anthropic
Messages), the extension from `editors/pi` loaded with `-e`, and one
print-mode run per call (`-c` continues the session of the run before)."""

import os
import subprocess

from harness import REPO, Failure

EXTENSION = os.path.join(REPO, "editors", "pi", "index.ts")


class Pi:
    name = "pi"

    def __init__(self, binary, workspace, port):
        self.binary = binary
        self.ws = workspace
        self.port = port
        self.agent_dir = os.path.join(workspace.home, ".pi", "agent")
        self.env = dict(workspace.env, PI_CODING_AGENT_DIR=self.agent_dir, PI_OFFLINE="1",
                        DEBUG_SIDECAR_BIN=os.path.join(workspace.base, "bin", "debug-sidecar"))

    def install(self):
        os.makedirs(self.agent_dir, exist_ok=True)
        models = {"providers": {"lab": {
            "baseUrl": f"http://127.0.0.1:{self.port}",
            "api": "anthropic-messages",
            "apiKey": "lab",
            "models": [{"id": "scripted", "contextWindow": 200000, "maxTokens": 4096}],
        }}}
        import json
        with open(os.path.join(self.agent_dir, "models.json"), "w") as f:
            json.dump(models, f)

    def command(self, *prompts, resume=False):
        args = [self.binary, "--offline", "--no-extensions", "-e", EXTENSION,
                "--model", "lab/scripted", "-p"]
        if resume:
            args.append("-c")
        return args + list(prompts)

    def start(self, *prompts, resume=False):
        """The run as a process of its own (a scenario that kills it)."""
        return subprocess.Popen(self.command(*prompts, resume=resume), cwd=self.ws.root,
                                env=self.env, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def prompt(self, *prompts, resume=False, timeout=180):
        """One headless run; what the person saw (stdout and stderr)."""
        try:
            out = subprocess.run(self.command(*prompts, resume=resume), cwd=self.ws.root,
                                 env=self.env, stdin=subprocess.DEVNULL,
                                 capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired as expired:
            raise Failure(f"pi did not finish within {timeout} s: {expired.stderr!r}")
        if out.returncode != 0:
            raise Failure(f"pi exited {out.returncode}: {out.stderr[-2000:]}")
        return out.stdout + out.stderr


class OhMyPi(Pi):
    """oh-my-pi on Bun (the `bun` npm package beside it in node_modules/.bin):
    `models.yml` in its agent directory, print mode without its title, LSP
    or PTY."""

    name = "omp"

    def __init__(self, binary, workspace, port):
        super().__init__(binary, workspace, port)
        self.agent_dir = os.path.join(workspace.home, ".omp", "agent")
        bin_dir = os.path.dirname(binary)
        self.env = dict(self.env, PI_CODING_AGENT_DIR=self.agent_dir,
                        PATH=bin_dir + os.pathsep + self.env["PATH"])

    def install(self):
        os.makedirs(self.agent_dir, exist_ok=True)
        with open(os.path.join(self.agent_dir, "models.yml"), "w") as f:
            f.write(f"""providers:
  lab:
    baseUrl: http://127.0.0.1:{self.port}
    api: anthropic-messages
    apiKey: lab
    models:
      - id: scripted
        contextWindow: 200000
        maxTokens: 4096
""")

    def command(self, *prompts, resume=False):
        args = [self.binary, "-p", "--no-title", "--no-lsp", "--no-pty",
                "--model", "lab/scripted", "-e", EXTENSION]
        if resume:
            args.append("-c")
        return args + list(prompts)


class PiSubagents(Pi):
    """pi under its later name (`@earendil-works/pi-coding-agent`, which needs
    Node 22.19+: run on the Node of $LAB_NODE24) with the `pi-subagents`
    extension beside ours (its `index.ts`, $LAB_PI_SUBAGENTS)."""

    name = "pi-subagents"

    def __init__(self, binary, workspace, port):
        super().__init__(binary, workspace, port)
        node = os.environ.get("LAB_NODE24", "node")
        self.node = node
        self.env = dict(self.env, PATH=os.path.dirname(node) + os.pathsep + self.env["PATH"],
                        PI_SUBAGENTS_TEMP_ROOT=os.path.join(workspace.base, "subagents"))

    def command(self, *prompts, resume=False):
        args = [self.node, self.binary, "--offline", "--no-extensions", "-e", EXTENSION,
                "-e", os.environ["LAB_PI_SUBAGENTS"], "--model", "lab/scripted", "-p"]
        if resume:
            args.append("-c")
        return args + list(prompts)


class RpcSession:
    """pi or oh-my-pi in RPC mode (`--mode rpc`): one long-lived session
    driven over stdin/stdout as an editor embeds it; it stays idle between
    prompts, as an interactive session does. Dialogs the extension opens
    (`extension_ui_request` select) are recorded and left open, as a person
    who looks away does; notifications are recorded."""

    def __init__(self, host):
        import threading
        args = host.command()
        # Print mode (`-p`) becomes RPC mode, wherever the host puts it.
        at = args.index("-p")
        args[at:at + 1] = ["--mode", "rpc"]
        self.proc = subprocess.Popen(args, cwd=host.ws.root, env=host.env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE)
        self.events = []
        self.lock = threading.Lock()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        import json
        for line in self.proc.stdout:
            try:
                event = json.loads(line.decode("utf-8").rstrip("\r\n"))
            except ValueError:
                continue
            with self.lock:
                self.events.append(event)

    def send(self, message):
        import json
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def prompt(self, text):
        self.send({"type": "prompt", "message": text})

    def count(self, kind):
        with self.lock:
            return sum(1 for e in self.events if e.get("type") == kind)

    def notices(self):
        with self.lock:
            return [e.get("message", "") for e in self.events
                    if e.get("type") == "extension_ui_request" and e.get("method") == "notify"]

    def wait_for(self, kind, count, timeout, what):
        import time
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.count(kind) >= count:
                return
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        raise Failure(f"{what}: no {kind} #{count} within {timeout} s "
                      f"(events: {[e.get('type') for e in self.events][-20:]})")

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(timeout=10)
