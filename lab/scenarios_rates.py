"""A flaky bug in a real harness (issue 31): the person measures the
reproduction's failure rate with `debug-sidecar run --repeat 20`, the agent
fixes, one lucky run does not let Mark fixed through (the person is told,
in Claude Code's own words, how to mark it fixed anyway), the person marks
it fixed anyway, the agent is told the fix is not proven by runs, and the
session's certificate says so. Assertions read what the person was shown
and the model received, then the workspace."""

import json
import os

from harness import check, check_kickoff_names_round, check_rounds
from model_server import Lab, Script, Turn, call, request_text, say
from scenarios import claude_names, requests_of

# Fails on runs 2, 5, 8, 11, 13, 16 and 19 of every 20 (a counter file),
# unless `fixed` exists: 7 of 20.
FLAKY = """import os, sys
n = int(open('count').read()) if os.path.exists('count') else 0
open('count', 'w').write(str(n + 1))
if not os.path.exists('fixed') and n % 20 in (1, 4, 7, 10, 12, 15, 18):
    print('lost an update', file=sys.stderr)
    sys.exit(1)
print('ok')
"""
PROBLEM = "updates get lost now and then"
HYPOTHESES = [
    {"id": "H1", "statement": "two writers race on the counter", "status": "open"},
    {"id": "H2", "statement": "the file is read before it is flushed", "status": "open"},
    {"id": "H3", "statement": "an exception is swallowed", "status": "open"},
]
HAND_OFF = {
    "mode": "reproduce",
    "steps": ["Run `debug-sidecar run --repeat 20 -- python3 flaky.py`", "Press Proceed"],
    "plan": [{"id": "E1", "method": "user_report", "instructions": ["how often it failed"]}],
}


def claude_flaky_gate(kind, binary, ws):
    with open(os.path.join(ws.root, "flaky.py"), "w") as f:
        f.write(FLAKY)
    tools = ",".join(claude_names(t) for t in ("record_hypotheses", "hand_off_to_user"))
    script = Script([
        Turn(PROBLEM, [
            call("ToolSearch", {"query": f"select:{tools}", "max_results": 2}),
            call("record_hypotheses", {"hypotheses": HYPOTHESES}),
            call("hand_off_to_user", HAND_OFF),
            say("Run it 20 times through debug-sidecar run, then press Proceed."),
        ], name="start"),
        Turn("debug-proceed", [
            call("Write", {"file_path": os.path.join(ws.root, "fixed"), "content": ""}),
            call("hand_off_to_user", {"mode": "reproduce",
                                      "steps": ["Run `debug-sidecar run -- python3 flaky.py`",
                                                "Mark fixed if it passes"]}),
            say("Fixed, I think: please check."),
        ], name="proceed"),
        Turn("debug-done", [say("Nothing to remove: no probe was placed.")], name="done"),
    ], claude_names)
    with Lab(script) as lab:
        claude = kind(binary, ws, lab.port)
        claude.install()
        claude.prompt(f"/mcp__debug-sidecar__debug {PROBLEM}")
        check(script.unplayed() == ["proceed", "done"],
              f"turn 1 did not play through: unplayed {script.unplayed()}")
        measured = ws.sidecar("run", "--repeat", "20", "--", "python3", "flaky.py", check_rc=False)
        check(measured.returncode == 1
              and "the reproduction failed 7 of 20 (35%, 95% interval 18%-57%)" in measured.stderr,
              f"run --repeat 20: {measured.stderr[-400:]!r}")

        claude.prompt("/mcp__debug-sidecar__debug-proceed")
        proceed = requests_of(lab, "proceed")
        check(proceed, "the proceed turn never reached the model")
        kickoff = request_text(proceed[0]["body"])
        check_kickoff_names_round(kickoff, 1)
        check("Its reproduction ran 20 times and failed 7 of 20 (35%, 95% interval 18%-57%)."
              in kickoff, "the kickoff does not give the measured rate")
        check(os.path.exists(os.path.join(ws.root, "fixed")), "the fix was not made")

        lucky = ws.sidecar("run", "--", "python3", "flaky.py")
        check("ok" in lucky.stdout, f"the fixed program: {lucky.stdout!r}")
        # One lucky run proves nothing: Mark fixed is refused, the person is
        # told how to go on in Claude Code's words, and no model turn runs.
        refused = claude.prompt("/mcp__debug-sidecar__debug-done")
        told = refused.text + "\n".join(refused.hook_outputs("UserPromptSubmit"))
        check("Mark fixed needs more evidence" in told
              and "type `/mcp__debug-sidecar__debug-done fixed anyway`" in told,
              f"the refusal the person saw: {told[-1500:]!r}")
        check(script.unplayed() == ["done"], f"a refused Mark fixed played {script.unplayed()}")
        status = ws.status()
        check(status and status[0].get("stage") == "user_turn",
              f"a refused Mark fixed changed the stage: {status}")

        shown = claude.prompt("/mcp__debug-sidecar__debug-done fixed anyway")
        check(not script.unplayed(), f"unplayed turns: {script.unplayed()}")
        cleanup = request_text(requests_of(lab, "done")[0]["body"])
        check("The person marked it fixed anyway, without the evidence of a lower rate" in cleanup,
              "the cleanup kickoff does not tell the agent the fix is not proven by runs")
        check_rounds(shown.text, 2)
        check(not any(s.get("active") for s in ws.status()), f"the session did not end: {ws.status()}")
        ws.sidecar("certificate", "--out", "fix.json")
        certificate = json.loads(ws.read("fix.json"))
        flaky = certificate["fix"]["flaky"]
        check(certificate["fix"]["anyway"] and flaky and flaky["before"]["failed"] == 7
              and flaky["after"]["total"] == 1 and not flaky["significant"],
              f"the certificate's fix: {certificate['fix']}")
        verified = ws.sidecar("check", "--certificate", "fix.json", check_rc=False)
        check(verified.returncode == 0, f"the certificate does not hold: {verified.stdout}")


ALL = [("a flaky bug's Mark fixed needs a better rate", "claude", claude_flaky_gate)]
