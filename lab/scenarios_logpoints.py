"""Logpoints in a real harness: Claude Code's model places a Python logpoint
through the MCP tools (no file is edited), runs the reproduction itself with
run_reproduction, hands the turn to the person, who reproduces through
`debug-sidecar run`, reads the logpoint's values, fixes the bug (the only
edit) and removes the logpoint at cleanup. Assertions read what the model
received and the person was shown, then the workspace."""

import re

from harness import BUGGY_APP, check, check_kickoff_names_round, check_rounds
from model_server import Lab, Script, Turn, call, last_tool_result, request_text, say
from scenarios import HYPOTHESES, again, PROBLEM, claude_names, no_doubled_board, requests_of

# `    return sum(prices[1:])` in harness.BUGGY_APP.
BUG_LINE = BUGGY_APP.splitlines().index("    return sum(prices[1:])") + 1
COMMAND = ["python3", "app.py", "3", "4", "5"]

HAND_OFF = {
    "mode": "reproduce",
    "steps": ["Run `debug-sidecar run -- python3 app.py 3 4 5`", "Press Proceed"],
    "plan": [{"id": "E1", "method": "runtime_probe",
              "instructions": ["logpoint p1 records the prices total() receives"]}],
}


def read_agent_run(body):
    """read_logs on the run run_reproduction just recorded."""
    found = re.findall(r"Agent run (\S+) of", last_tool_result(body))
    check(found, f"run_reproduction's answer names no run: {last_tool_result(body)[:300]!r}")
    return call("read_logs", {"run": found[-1]})


def read_person_run(person):
    """read_logs on the run the person's `debug-sidecar run` named."""
    def step(_body):
        return call("read_logs", {"run": person["run"]})
    return step


def claude_logpoints(kind, binary, ws):
    tools = ",".join(claude_names(t) for t in (
        "record_hypotheses", "probe_snippet", "run_reproduction", "read_logs",
        "hand_off_to_user", "remove_logpoints", "log_summary"))
    person = {}
    script = Script([
        Turn(PROBLEM, [
            call("ToolSearch", {"query": f"select:{tools}", "max_results": 7}),
            call("record_hypotheses", {"hypotheses": HYPOTHESES}),
            call("probe_snippet", {"file": "app.py", "kind": "logpoint", "line": BUG_LINE,
                                   "hypothesisId": "H1",
                                   "variables": ["prices", "prices[1:]", "undefined_name"]}),
            call("run_reproduction", {"command": COMMAND, "timeoutSec": 30}),
            read_agent_run,
            call("hand_off_to_user", HAND_OFF),
            say("Run it through debug-sidecar run, then press Proceed."),
        ], name="start"),
        Turn("debug-proceed", [
            read_person_run(person),
            call("record_hypotheses", {"hypotheses": [dict(
                HYPOTHESES[0], status="confirmed",
                evidence=["logpoint p1: prices [3,4,5], prices[1:] [4,5]"])]}),
            call("Edit", {"file_path": f"{ws.root}/app.py",
                          "old_string": "return sum(prices[1:])", "new_string": "return sum(prices)"}),
            call("hand_off_to_user", again(HAND_OFF, mode="verify", steps=[
                "Run `debug-sidecar run -- python3 app.py 3 4 5` again",
                "Mark fixed if it prints 12"])),
            say("Fixed: please check."),
        ], name="proceed"),
        Turn("debug-done", [
            call("log_summary", {}),
            call("remove_logpoints", {"probeIds": ["p1"]}),
            say("The logpoint is removed; no file held a probe."),
        ], name="done"),
    ], claude_names)
    with Lab(script) as lab:
        claude = kind(binary, ws, lab.port)
        claude.install()
        claude.prompt(f"/mcp__debug-sidecar__debug {PROBLEM}")
        check(script.unplayed() == ["proceed", "done"],
              f"turn 1 did not play through: unplayed {script.unplayed()}")
        start = requests_of(lab, "start")
        placed = last_tool_result(start[3]["body"])
        check("no file was edited" in placed and "debug-sidecar run" in placed,
              f"probe_snippet's logpoint answer did not reach the model: {placed[:300]!r}")
        check(ws.read("app.py") == BUGGY_APP, "placing a logpoint edited app.py")
        ran = last_tool_result(start[4]["body"])
        check("Agent run" in ran and "total: 9" in ran,
              f"run_reproduction's answer did not reach the model: {ran[:400]!r}")
        agent_logs = last_tool_result(start[5]["body"])
        check(re.search(r'"source":\s*"logpoint"', agent_logs)
              and re.search(r'"prices":\s*\[3,\s*4,\s*5\]', agent_logs),
              f"the agent run's logpoint values did not reach the model: {agent_logs[:600]!r}")
        check(re.search(r'"undefined_name":\s*\{"\$error":\s*"NameError', agent_logs),
              f"a failing expression was not recorded as an error: {agent_logs[:600]!r}")
        check("agentRun" in agent_logs, "the agent's run is not marked as the agent's")
        check(f"p1 H1 app.py:{BUG_LINE} (logpoint)" in request_text(start[3]["body"]),
              "the blackboard does not list the logpoint once it is placed")

        # The person reproduces through `debug-sidecar run`: output passed
        # through, the logpoint's values recorded into their run.
        run = ws.sidecar("run", "--", *COMMAND)
        check(run.stdout == "total: 9\n", f"run did not pass the output through: {run.stdout!r}")
        named = re.search(r"into run (\S+) of session", run.stderr)
        check("recorded 1 stdout" in run.stderr and named, f"run's closing line: {run.stderr!r}")
        person["run"] = named.group(1)
        check(ws.read("app.py") == BUGGY_APP, "the person's run changed app.py")

        claude.prompt("/mcp__debug-sidecar__debug-proceed")
        proceed = requests_of(lab, "proceed")
        check(proceed, "the proceed turn never reached the model")
        check_kickoff_names_round(request_text(proceed[0]["body"]), 1)
        logs = last_tool_result(proceed[1]["body"])
        check(re.search(r'"prices\[1:\]":\s*\[4,\s*5\]', logs),
              f"the person's run's logpoint values did not reach the model: {logs[:600]!r}")
        check("agentRun" not in logs, "the person's run holds the agent's records")

        verify = ws.sidecar("run", "--", *COMMAND)
        check(verify.stdout == "total: 12\n", f"the fix did not take: {verify.stdout!r}")
        check("is not set: the line changed" in verify.stderr,
              f"run did not say the logpoint's line changed: {verify.stderr!r}")

        shown = claude.prompt("/mcp__debug-sidecar__debug-done")
        check(not script.unplayed(), f"unplayed turns: {script.unplayed()}")
        done = requests_of(lab, "done")
        kickoff = request_text(done[0]["body"])
        check("remove_logpoints" in kickoff and "p1" in kickoff,
              "the Mark fixed kickoff does not ask for the logpoint's removal")
        # The hit table of the verifying run: the logpoint logged nothing, and why.
        table = last_tool_result(done[1]["body"])
        check(f"p1 (H1) at app.py:{BUG_LINE}: no value [notSet]: the runtime did not set it" in table
              and "the line changed since it was placed" in table,
              f"log_summary did not say why the logpoint logged nothing: {table[:600]!r}")
        check("verified" in shown.text.lower(),
              f"the person was not told the cleanup was verified: {shown.text[-400:]!r}")
        check_rounds(shown.text, 2)
        no_doubled_board(lab)
        sessions = ws.status()
        check(all(s.get("stage") in (None, "ended", "idle") for s in sessions),
              f"the session did not end: {sessions}")
        clean = ws.sidecar("check", check_rc=False)
        check(clean.returncode == 0, f"check is not clean: {clean.stdout}")
        check(ws.read("app.py") == BUGGY_APP.replace("sum(prices[1:])", "sum(prices)"),
              "app.py differs from the original by more than the fix")


ALL = [
    ("whole loop with logpoints only", "claude", claude_logpoints),
]
