"""Setting up and driving the real harnesses for the lab: a scratch home,
a throwaway workspace configured exactly as `debug-sidecar install ...
--write` leaves it, and one headless run per prompt."""

import json
import os
import re
import shutil
import subprocess
import tempfile

LAB_DIR = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(LAB_DIR)

BUGGY_APP = """\
import sys


def total(prices):
    # The bug: the first price is skipped.
    return sum(prices[1:])


if __name__ == "__main__":
    prices = [int(p) for p in sys.argv[1:]] or [3, 4, 5]
    print("total:", total(prices))
"""


class Failure(Exception):
    pass


def check(condition, what):
    if not condition:
        raise Failure(what)


ENDED_AFTER = re.compile(r"ended\s+after\s+(\d+)\s+round\(s\)")


# Seconds from a person's Proceed given outside the chat to the agent's next
# model request, per host; `run.py` prints them with their median.
WAKE_TIMES = {}


def record_wake_time(host, seconds):
    WAKE_TIMES.setdefault(host, []).append(seconds)


def check_rounds(shown, rounds, what="the session"):
    """The cleanup summary the person was shown counts `rounds` rounds
    (two hand-offs: 2), as a person would notice a wrong count."""
    found = ENDED_AFTER.search(shown)
    check(found, f"{what}: no cleanup summary with a round count: {shown[-600:]!r}")
    check(found.group(1) == str(rounds),
          f"{what} ended after {found.group(1)} round(s), not {rounds}")


def check_editor_wake(done, host):
    """An editor's command answered that `host` wakes the agent: waiting for
    it, or (a fast host) already delivered by it; either way naming it."""
    wake = done.get("wake") or {}
    message = wake.get("message") or ""
    if wake.get("state") == "waiting":
        check(message.startswith("Waking the agent in ") and host in message,
              f"the editor's command does not say {host} wakes the agent: {wake}")
    else:
        check(wake.get("state") == "delivered" and f"(woken in {host})" in message,
              f"the editor's command does not say the agent is woken in {host}: {wake}")


def check_kickoff_names_round(text, round_no, what="the Proceed kickoff"):
    """A Proceed kickoff the model got names the run of the round it
    closed, and no other round's."""
    named = re.findall(r"Run (r\d+-\S+) of round (\d+) logged", text)
    check(named, f"{what}: no Proceed kickoff in what the model got: {text[-600:]!r}")
    for run, closed in named:
        check(closed == str(round_no) and run.startswith(f"r{round_no}-"),
              f"{what} names run {run} of round {closed}, not round {round_no}'s")
    check("You had not handed round" not in text,
          f"{what}: the model was told it had not handed a round over")


class Workspace:
    """A git repository with one buggy program, a scratch HOME, and the
    sidecar on PATH under the name `install` writes into the configs."""

    def __init__(self, name, sidecar):
        self.base = tempfile.mkdtemp(prefix=f"lab-{name}-")
        self.root = os.path.join(self.base, "repo")
        self.home = os.path.join(self.base, "home")
        os.makedirs(self.root)
        os.makedirs(self.home)
        subprocess.run(["git", "init", "-q", self.root], check=True)
        with open(os.path.join(self.root, "app.py"), "w") as f:
            f.write(BUGGY_APP)
        bin_dir = os.path.join(self.base, "bin")
        os.makedirs(bin_dir)
        if os.environ.get("LAB_TRACE_HOOKS"):
            # Every hook's input and answer, in hooks.log beside the repo.
            trace = os.path.join(self.base, "hooks.log")
            with open(os.path.join(bin_dir, "debug-sidecar"), "w") as f:
                f.write(f"""#!/bin/sh
[ "$1" = hook ] || exec {sidecar} "$@"
input=$(cat)
out=$(printf '%s' "$input" | {sidecar} "$@")
printf '== %s\\n%s\\n-> %s\\n' "$*" "$input" "$out" >> {trace}
printf '%s' "$out"
""")
            os.chmod(os.path.join(bin_dir, "debug-sidecar"), 0o755)
        else:
            os.symlink(sidecar, os.path.join(bin_dir, "debug-sidecar"))
        self.env = {
            "PATH": bin_dir + os.pathsep + os.environ.get("PATH", ""),
            "HOME": self.home,
            "LANG": "C.UTF-8",
            "TERM": "dumb",
            "TMPDIR": os.path.join(self.base, "tmp"),
        }
        os.makedirs(self.env["TMPDIR"])

    def sidecar(self, *args, cwd=None, check_rc=True):
        out = subprocess.run(
            ["debug-sidecar", *args], cwd=cwd or self.root, env=self.env,
            capture_output=True, text=True, timeout=60,
        )
        if check_rc and out.returncode != 0:
            raise Failure(f"debug-sidecar {' '.join(args)} exited {out.returncode}: {out.stderr}")
        return out

    def run_app(self, *args):
        """The person reproduces: runs the program as they would."""
        return subprocess.run(
            ["python3", "app.py", *args], cwd=self.root, env=self.env,
            capture_output=True, text=True, timeout=60,
        )

    def read(self, path):
        with open(os.path.join(self.root, path)) as f:
            return f.read()

    def status(self):
        return json.loads(self.sidecar("status", "--json").stdout)

    def cleanup(self):
        shutil.rmtree(self.base, ignore_errors=True)


def claude_env(workspace, port):
    """Claude Code's environment against the scripted model, offline."""
    return dict(
        workspace.env,
        ANTHROPIC_BASE_URL=f"http://127.0.0.1:{port}",
        ANTHROPIC_API_KEY="lab-key",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
    )


def codex_config(codex_home, port, root, approvals="never", extra=""):
    """The person's own Codex config: our model provider on loopback, and
    the project trusted; `approvals` None keeps Codex's default."""
    policy = f'approval_policy = "{approvals}"\n' if approvals else ""
    with open(os.path.join(codex_home, "config.toml"), "a") as f:
        f.write(
            f'model = "gpt-5.5"\nmodel_provider = "lab"\n{policy}'
            f'[model_providers.lab]\nname = "lab"\nbase_url = "http://127.0.0.1:{port}/v1"\n'
            'wire_api = "responses"\nenv_key = "LAB_KEY"\n'
            f'[projects."{root}"]\ntrust_level = "trusted"\n{extra}'
        )


class Claude:
    """Claude Code in print mode, one process per prompt (`--continue`
    after the first), as a person scripting it would run it."""

    name = "claude"

    def __init__(self, binary, workspace, port):
        self.binary = binary
        self.ws = workspace
        self.started = False
        # As in an interactive session: the todo tools (TaskCreate, TaskUpdate).
        self.env = dict(claude_env(workspace, port), CLAUDE_CODE_ENABLE_TODO_TOOLS="1")

    def install(self, cwd=None, trusted=None):
        """`install claude --write` in the repository; the person trusts
        `trusted` (the folder they start Claude Code in)."""
        out = self.ws.sidecar("install", "claude", "--write", cwd=cwd)
        cwd = trusted
        # The person accepted Claude Code's trust dialog for this folder once
        # (without it, project permissions are ignored); that is all we add.
        state = os.path.join(self.ws.home, ".claude.json")
        with open(state, "w") as f:
            folders = {self.ws.root, cwd or self.ws.root}
            json.dump({"projects": {d: {"hasTrustDialogAccepted": True} for d in folders},
                       "hasCompletedOnboarding": True}, f)
        return out

    def prompt(self, text, cwd=None, timeout=120):
        # Edits are allowed as a person scripting `claude -p` allows them.
        args = [self.binary, "-p", text, "--output-format", "stream-json", "--verbose",
                "--include-hook-events", "--permission-mode", "acceptEdits"]
        if self.started:
            args.append("--continue")
        self.started = True
        out, events = run_harness("claude", args, cwd or self.ws.root, self.env, timeout)
        return Shown(events, out.stderr)


def run_harness(name, args, cwd, env, timeout):
    """One headless run: the finished process and its JSON-lines events."""
    out = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                         timeout=timeout, stdin=subprocess.DEVNULL)
    events = []
    for line in out.stdout.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            pass
    if out.returncode != 0:
        raise Failure(f"{name} exited {out.returncode}: {out.stderr[-2000:]}")
    return out, events


class Shown:
    """What the person was shown by one harness run."""

    def __init__(self, events, stderr, text=None):
        self.events = events
        self.stderr = stderr
        self.text = text if text is not None else "\n".join(self._lines())

    def _lines(self):
        for event in self.events:
            kind, sub = event.get("type"), event.get("subtype")
            if kind == "system" and sub in ("informational", "notification"):
                yield event.get("content") or event.get("text") or ""
            elif kind == "assistant":
                for block in event.get("message", {}).get("content", []):
                    if block.get("type") == "text":
                        yield block["text"]
            elif kind == "result":
                yield event.get("result") or ""

    def notifications(self):
        return [e for e in self.events if e.get("type") == "system"
                and e.get("subtype") == "notification"]

    def hook_outputs(self, event_name):
        return [e.get("output", "") for e in self.events
                if e.get("subtype") == "hook_response" and e.get("hook_event") == event_name]


class Codex:
    """`codex exec`, one process per prompt (`exec resume --last` after the
    first)."""

    name = "codex"

    def __init__(self, binary, workspace, port):
        self.binary = binary
        self.ws = workspace
        self.port = port
        self.started = False
        self.codex_home = os.path.join(workspace.home, ".codex")
        os.makedirs(self.codex_home, exist_ok=True)
        self.env = dict(workspace.env, CODEX_HOME=self.codex_home, LAB_KEY="lab-key")

    def install(self, cwd=None):
        out = self.ws.sidecar("install", "codex", "--write", cwd=cwd)
        # The person's own config, with the trust `install codex` asks for.
        codex_config(self.codex_home, self.port, self.ws.root)
        return out

    def prompt(self, text, cwd=None, timeout=120, trust_hooks=True):
        args = [self.binary, "exec", "--skip-git-repo-check", "--json"]
        if trust_hooks:
            # What accepting the hooks in the TUI once does; `exec` cannot ask.
            args.append("--dangerously-bypass-hook-trust")
        if self.started:
            args += ["resume", "--last"]
        args.append(text)
        self.started = True
        out, events = run_harness("codex", args, cwd or self.ws.root, self.env, timeout)
        return Shown(events, out.stderr, text=out.stdout + "\n" + out.stderr)


def ask_serve(ws, method, params=None, host=None):
    """One request to a `debug-sidecar serve` of the workspace (as an editor
    would ask; `host` names it, as VS Code's extension does), after
    initialize; the result."""
    server = subprocess.Popen(["debug-sidecar", "serve"], cwd=ws.root, env=ws.env,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)

    def send(message):
        body = json.dumps(message).encode()
        server.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        server.stdin.flush()

    def answer(wanted):
        while True:
            length = None
            while True:
                line = server.stdout.readline()
                if not line:
                    raise Failure("debug-sidecar serve ended before answering")
                if line in (b"\r\n", b"\n"):
                    break
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            message = json.loads(server.stdout.read(length))
            if message.get("id") == wanted:
                return message

    try:
        send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"capabilities": {}, "rootUri": f"file://{ws.root}",
                         "initializationOptions": {"host": host} if host else None}})
        answer(1)
        send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        send({"jsonrpc": "2.0", "id": 2, "method": method, "params": params or {}})
        result = answer(2)
        send({"jsonrpc": "2.0", "id": 3, "method": "shutdown"})
        answer(3)
        send({"jsonrpc": "2.0", "method": "exit"})
        server.wait(timeout=10)
        return result.get("result")
    finally:
        if server.poll() is None:
            server.kill()
