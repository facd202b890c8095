"""A program in a container: Claude Code's model reads the container's path
(/app/app.py) and places a probe with target `docker`; the person runs the
program as `docker run -v "$PWD:/app"` would (its own network namespace on
a `docker0` bridge, its own mount namespace with the workspace at /app);
the line reaches the session's listener on the bridge's address, the model
reads it, fixes, and cleanup ends the listener with the session.

Needs the lab's network namespace (root): the bridge is made there."""

import json
import os
import subprocess
import time

from harness import BUGGY_APP, Failure, check, check_kickoff_names_round, check_rounds
from model_server import Lab, Script, Turn, call, last_tool_result, request_text, say
from scenarios import (HYPOTHESES, PROBLEM, again, claude_names, insert_probe,
                       no_doubled_board, read_round_one_logs, remove_probe, requests_of)

BRIDGE = "docker0"
GATEWAY = "172.17.0.1"

HAND_OFF = {
    "mode": "reproduce",
    "steps": ["Run `docker compose run app python3 app.py 3 4 5`", "Press Proceed"],
    "plan": [{"id": "E1", "method": "runtime_probe",
              "instructions": ["the prices total() receives, posted from the container"]}],
}


def docker_bridge():
    """Docker's default bridge, as dockerd makes it, in the lab's namespace."""
    # /proc/net/dev is this process's namespace's (sysfs is the mounter's).
    with open("/proc/net/dev") as f:
        links = [line.split(":")[0].strip() for line in f.readlines()[2:]]
    if BRIDGE in links:
        return
    if set(links) != {"lo"}:
        raise Failure("needs the lab's own network namespace (scripts/test runs the lab in "
                      f"`unshare -n`); here the machine's links are {sorted(links)}")
    for command in (["ip", "link", "add", BRIDGE, "type", "bridge"],
                    ["ip", "addr", "add", f"{GATEWAY}/16", "dev", BRIDGE],
                    ["ip", "link", "set", BRIDGE, "up"]):
        subprocess.run(command, check=True, capture_output=True)


def run_in_container(ws, *args):
    """The person's `docker run`: the program in namespaces of its own, on
    the bridge as 172.17.0.2, the workspace bound at /app."""
    made_app = not os.path.exists("/app")
    os.makedirs("/app", exist_ok=True)
    script = f"""set -e
read go
ip link set lo up
ip addr add 172.17.0.2/16 dev eth0
ip link set eth0 up
ip route add default via {GATEWAY}
mount --bind '{ws.root}' /app
cd /app
exec python3 app.py {' '.join(args)}
"""
    container = subprocess.Popen(
        ["unshare", "-n", "-m", "--propagation", "private", "sh", "-c", script],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=ws.env, text=True)
    try:
        # unshare makes the namespace before it runs the shell: wait for it.
        ours = os.readlink("/proc/self/ns/net")
        deadline = time.monotonic() + 10
        while os.readlink(f"/proc/{container.pid}/ns/net") == ours:
            check(time.monotonic() < deadline, "the container never got a network of its own")
            time.sleep(0.01)
        subprocess.run(["ip", "link", "add", "veth-lab", "type", "veth", "peer", "name", "eth0",
                        "netns", str(container.pid)], check=True, capture_output=True)
        subprocess.run(["ip", "link", "set", "veth-lab", "master", BRIDGE, "up"],
                       check=True, capture_output=True)
        out, err = container.communicate("go\n", timeout=60)
    finally:
        if container.poll() is None:
            container.kill()
        subprocess.run(["ip", "link", "del", "veth-lab"], capture_output=True)
        if made_app:
            os.rmdir("/app")
    check(container.returncode == 0, f"the container's program failed: {err}")
    return out


def listener(ws):
    path = os.path.join(ws.root, ".debug-sidecar", "sessions", "default", "ingest-docker.json")
    check(os.path.exists(path), "no listener for docker was recorded")
    with open(path) as f:
        return json.load(f)


def claude_docker_target(kind, binary, ws):
    docker_bridge()
    tools = ",".join(claude_names(t) for t in (
        "record_hypotheses", "probe_snippet", "hand_off_to_user", "read_logs", "probe_ledger"))
    script = Script([
        Turn(PROBLEM, [
            call("ToolSearch", {"query": f"select:{tools}", "max_results": 5}),
            call("record_hypotheses", {"hypotheses": HYPOTHESES}),
            # The path the model saw in the container's traceback.
            call("probe_snippet", {"file": "/app/app.py", "hypothesisId": "H1", "target": "docker",
                                   "message": "prices total() receives", "variables": ["prices"]}),
            insert_probe(ws),
            call("hand_off_to_user", HAND_OFF),
            say("Run it in the container, then press Proceed."),
        ], name="start"),
        Turn("debug-proceed", [
            read_round_one_logs,
            call("record_hypotheses", {"hypotheses": [dict(
                HYPOTHESES[0], status="confirmed", evidence=["probe p1: prices [3,4,5]"])]}),
            call("Edit", {"file_path": os.path.join(ws.root, "app.py"),
                          "old_string": "return sum(prices[1:])", "new_string": "return sum(prices)"}),
            call("hand_off_to_user", again(HAND_OFF, mode="verify", steps=[
                "Run `docker compose run app python3 app.py 3 4 5` again",
                "Mark fixed if it prints 12"])),
            say("Fixed: please check."),
        ], name="proceed"),
        Turn("debug-done", [
            remove_probe(ws),
            call("probe_ledger", {"rescan": True}),
            say("The probe is removed."),
        ], name="done"),
    ], claude_names)
    with Lab(script) as lab:
        claude = kind(binary, ws, lab.port)
        claude.install()
        # The person maps the container's /app to the workspace.
        os.makedirs(os.path.join(ws.root, ".debug-sidecar"), exist_ok=True)
        settings = os.path.join(ws.root, ".debug-sidecar", "targets.json")
        with open(settings, "w") as f:
            json.dump({"paths": {"/app": "."}}, f)
        os.chmod(settings, 0o600)
        claude.prompt(f"/mcp__debug-sidecar__debug {PROBLEM}")
        check(script.unplayed() == ["proceed", "done"],
              f"turn 1 did not play through: unplayed {script.unplayed()}")
        start = requests_of(lab, "start")
        placed = last_tool_result(start[3]["body"])
        check(f"http://{GATEWAY}:" in placed and "target `docker`" in placed,
              f"probe_snippet's posting block did not reach the model: {placed[:600]!r}")
        check("registered for app.py" in placed,
              f"the container's path was not mapped to the workspace's: {placed[:200]!r}")
        at = listener(ws)
        check(at["bind"] == GATEWAY, f"the listener is not on the bridge alone: {at}")
        listening = f"Listening for target `docker` (Docker containers) on {GATEWAY}:{at['port']}"
        check(any(listening in request_text(r["body"]) for r in start[3:]),
              "the blackboard does not say where the session listens")

        out = run_in_container(ws, "3", "4", "5")
        check(out == "total: 9\n", f"the container's program printed {out!r}")
        # The MCP server ended with `claude -p`; the listener did not.
        check(os.path.exists(f"/proc/{at['pid']}"), "the listener ended with the harness")

        claude.prompt("/mcp__debug-sidecar__debug-proceed")
        proceed = requests_of(lab, "proceed")
        check(proceed, "the proceed turn never reached the model")
        check_kickoff_names_round(request_text(proceed[0]["body"]), 1)
        logs = last_tool_result(proceed[1]["body"])
        check('"prices"' in logs and "[3, 4, 5]" in logs.replace("[3,4,5]", "[3, 4, 5]")
              and '"location":"app.py' in logs.replace('": "', '":"'),
              f"the container's line did not reach the model: {logs[:600]!r}")

        fixed = run_in_container(ws, "3", "4", "5")
        check(fixed == "total: 12\n", f"the fix did not take in the container: {fixed!r}")

        shown = claude.prompt("/mcp__debug-sidecar__debug-done")
        check(not script.unplayed(), f"unplayed turns: {script.unplayed()}")
        check("verified" in shown.text.lower(),
              f"the person was not told the cleanup was verified: {shown.text[-400:]!r}")
        check_rounds(shown.text, 2)
        no_doubled_board(lab)
        deadline = time.monotonic() + 10
        while os.path.exists(f"/proc/{at['pid']}") and time.monotonic() < deadline:
            time.sleep(0.1)
        check(not os.path.exists(f"/proc/{at['pid']}"), "the listener outlived the session")
        clean = ws.sidecar("check", check_rc=False)
        check(clean.returncode == 0, f"check is not clean: {clean.stdout}")
        check(ws.read("app.py") == BUGGY_APP.replace("sum(prices[1:])", "sum(prices)"),
              "app.py differs from the original by more than the fix")


ALL = [
    ("a program in a Docker container probes through target docker", "claude",
     claude_docker_target),
]
