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
