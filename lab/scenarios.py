"""The lab's scenarios. Each plays a person and a scripted model through a
real harness and asserts on what the model received and the person saw.
A scenario is `(name, harness, play)`; `play(kind, binary, workspace)`
raises `Failure` naming the first broken expectation."""

import json
import os
import re
import shlex
import time

from harness import check, check_kickoff_names_round, check_rounds
from model_server import Lab, Script, Turn, call, last_tool_result, request_text, say, search

BOARD = "[DEBUG MODE · round"
PROBLEM = "the total is wrong: 3 4 5 gives 9, not 12"


def claude_names(tool):
    # Harness tools are capitalised (Read, Edit, ToolSearch); ours are MCP tools.
    return tool if tool[0].isupper() else f"mcp__debug-sidecar__{tool}"


def codex_names(tool):
    if tool in ("exec_command", "apply_patch", "update_plan"):
        return tool
    return ("mcp__debug_sidecar", tool)


def boards(text):
    """The blackboard copies in a request, in order."""
    starts = [m.start() for m in re.finditer(re.escape(BOARD), text)]
    return [text[s:e] for s, e in zip(starts, starts[1:] + [len(text)])]


def requests_of(lab, turn):
    return [r for r in lab.requests if r["turn"] == turn]


def wait_requests(lab, turn, timeout):
    """The model requests of `turn`, once one came (or none by `timeout`)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = requests_of(lab, turn)
        if found:
            return found
        time.sleep(0.05)
    return []


def no_doubled_board(lab):
    """Item 5: no request carries two copies of the same blackboard."""
    for r in lab.requests:
        if r["turn"] is None:
            continue
        copies = boards(request_text(r["body"]))
        seen = set()
        for copy in copies:
            check(copy not in seen, f"turn {r['turn']}: the same blackboard twice in one request")
            seen.add(copy)


def newest_board(request):
    found = boards(request_text(request["body"]))
    check(found, f"turn {request['turn']}: no blackboard in the request")
    return found[-1]


def probe_block(text):
    match = re.search(r"(?ms)^# #region debug-probe.*?^# #endregion debug-probe \S+$", text)
    check(match, f"no probe block in the snippet result: {text[:300]!r}")
    return match.group(0)


def read_round_one_logs(body):
    """read_logs on the run the person reproduced in (the kickoff names it)."""
    return call("read_logs", {"run": re.findall(r"\br1-[a-z0-9]+", request_text(body))[-1]})


BUGGY_LINE = "    return sum(prices[1:])"


def block_before_bug(body):
    """The block probe_snippet returned, indented into total() above its bug."""
    block = probe_block(last_tool_result(body))
    return "\n".join("    " + line for line in block.splitlines()) + "\n" + BUGGY_LINE


def insert_probe(ws):
    """The model inserts the block probe_snippet returned, inside total()."""
    def step(body):
        return call("Edit", {"file_path": os.path.join(ws.root, "app.py"),
                             "old_string": BUGGY_LINE, "new_string": block_before_bug(body)})
    return step


def probe_in_app(ws):
    """The probe block as it stands in app.py, markers and all."""
    source = ws.read("app.py")
    match = re.search(r"(?ms)^    # #region debug-probe.*?# #endregion debug-probe \S+\n", source)
    check(match, "the probe block is not in app.py at cleanup")
    return match.group(0)


def remove_probe(ws):
    """Cleanup: the model deletes the block, markers and all."""
    def step(body):
        return call("Edit", {"file_path": os.path.join(ws.root, "app.py"),
                             "old_string": probe_in_app(ws), "new_string": ""})
    return step


HYPOTHESES = [
    {"id": "H1", "statement": "total() skips the first price", "status": "open"},
    {"id": "H2", "statement": "the prices are parsed wrongly from argv", "status": "open"},
    {"id": "H3", "statement": "print formats the total wrongly", "status": "open"},
]

HAND_OFF = {
    "mode": "reproduce",
    "steps": ["Run `python3 app.py 3 4 5`", "Press Proceed"],
    "plan": [{"id": "E1", "method": "runtime_probe", "instructions": ["the prices total() receives"]}],
}


def again(hand_off, **changes):
    """A later round's hand-off: `hand_off` with `changes`, without its plan.
    A plan promising runtime_probe needs a probe of its own round (DESIGN
    section 3); the verifying rounds here reuse round 1's probe."""
    out = dict(hand_off, **changes)
    out.pop("plan", None)
    return out


def claude_whole_loop(kind, binary, ws):
    ws_tools = ",".join(claude_names(t) for t in (
        "record_hypotheses", "probe_snippet", "hand_off_to_user", "read_logs", "probe_ledger",
        "TaskCreate", "TaskUpdate"))
    script = Script([
        Turn(PROBLEM, [
            call("ToolSearch", {"query": f"select:{ws_tools}", "max_results": 7}),
            call("TaskCreate", {"subject": "Find why the total is wrong",
                                "description": "Evidence first",
                                "activeForm": "Finding why the total is wrong"}),
            call("record_hypotheses", {"hypotheses": HYPOTHESES}),
            # A refused call: a plan promising probes before any is on disk.
            call("hand_off_to_user", HAND_OFF),
            call("Read", {"file_path": os.path.join(ws.root, "app.py")}),
            call("probe_snippet", {"file": "app.py", "hypothesisId": "H1",
                                   "message": "prices total() receives",
                                   "variables": ["prices"]}),
            insert_probe(ws),
            call("hand_off_to_user", HAND_OFF),
            say("Run it, then press Proceed."),
        ], name="start"),
        Turn("debug-proceed", [
            read_round_one_logs,
            call("record_hypotheses", {"hypotheses": [dict(HYPOTHESES[0], status="confirmed",
                                                           evidence=["probe p1: prices [3,4,5]"])]}),
            call("Read", {"file_path": os.path.join(ws.root, "app.py")}),
            call("Edit", {"file_path": os.path.join(ws.root, "app.py"),
                          "old_string": "return sum(prices[1:])", "new_string": "return sum(prices)"}),
            call("hand_off_to_user", again(HAND_OFF, steps=["Run `python3 app.py 3 4 5` again",
                                                           "Mark fixed if it prints 12"])),
            say("Fixed, I think: please check."),
        ], name="proceed"),
        Turn("debug-done", [
            call("Read", {"file_path": os.path.join(ws.root, "app.py")}),
            remove_probe(ws),
            call("probe_ledger", {"rescan": True}),
            say("Every probe is removed."),
        ], name="done"),
    ], claude_names)
    with Lab(script) as lab:
        claude = kind(binary, ws, lab.port)
        before = ws.sidecar("install", "claude", "--check", check_rc=False)
        check(before.returncode == 1, f"install claude --check passed before install: {before.stdout}")
        claude.install()
        # Item 3: what the tools need to run (permissions, a trusted folder).
        after = ws.sidecar("install", "claude", "--check", check_rc=False)
        check(after.returncode == 0, f"install claude --check after install: {after.stdout}")
        claude.prompt(f"/mcp__debug-sidecar__debug {PROBLEM}")
        check(script.unplayed() == ["proceed", "done"],
              f"turn 1 did not play through: unplayed {script.unplayed()}")
        start = requests_of(lab, "start")
        # Item 7: the whole problem, not its first word.
        check(PROBLEM in request_text(start[0]["body"]).split("<command-args>")[-1],
              "the kickoff lacks the whole problem")
        check(ws.status()[0]["problem"] == PROBLEM if ws.status() and "problem" in ws.status()[0]
              else True, "the session's problem is not the whole text")
        # Item 1: tool texts reach the model (the refused hand-off's reason).
        refused = last_tool_result(start[4]["body"])
        check("probe" in refused.lower() and "on disk" in refused.lower(),
              f"the refused hand-off's reason did not reach the model: {refused[:300]!r}")
        snippet_text = last_tool_result(start[6]["body"])
        check("unchanged between its markers" in snippet_text,
              "probe_snippet's instructions did not reach the model")
        handed = last_tool_result(start[8]["body"])
        check("end your turn" in handed.lower() or "one short line" in handed.lower(),
              f"the hand-off's text did not reach the model: {handed[:300]!r}")
        # Item 5: one copy per board, refreshed after a state-changing call.
        no_doubled_board(lab)
        after_record = newest_board(start[3])
        check("H1" in after_record, "the blackboard was not refreshed after record_hypotheses")
        # Item 10: the board says how this harness calls our tools.
        check("mcp__debug-sidecar__" in newest_board(start[0]),
              "the blackboard does not name the tools as Claude Code calls them")
        # Item 12: TaskCreate became the session's progress (todos).
        activity = json.loads(ws.read(".debug-sidecar/sessions/default/activity.json"))
        check("Find why the total is wrong" in json.dumps(activity.get("progress")),
              f"TaskCreate did not become progress: {json.dumps(activity.get('progress'))[:300]}")
        run = ws.run_app("3", "4", "5")
        check("total: 9" in run.stdout, f"the program did not run as expected: {run.stdout}")

        resumed = claude.prompt("/mcp__debug-sidecar__debug-proceed")
        proceed = requests_of(lab, "proceed")
        check(proceed, "the proceed turn never reached the model")
        check_kickoff_names_round(request_text(proceed[0]["body"]), 1)
        # `--continue` fires SessionStart before the prompt hook applies the
        # Proceed: a board there would be round 1's, inside round 2's turn.
        stale = [o for o in resumed.hook_outputs("SessionStart") if "[DEBUG MODE" in o]
        check(not stale, f"SessionStart gave a board before the command was applied: {stale[0][:200]!r}"
              if stale else "")
        board = newest_board(proceed[0])
        # Item 6: the injected state agrees with the slash command.
        check("stage investigating" in board.split("\n")[0] and "round 2" in board.split("\n")[0],
              f"the proceed turn's blackboard contradicts Proceed: {board.splitlines()[0]}")
        runs = board[board.index("Logs by run"):].split("\n\n")[0]
        check(re.search(r"r1-\S+: 1\b", runs),
              f"the blackboard does not count round 1's line: {runs}")
        logs = last_tool_result(proceed[1]["body"])
        check("not instructions" in logs, f"read_logs' fence did not reach the model: {logs[:300]!r}")
        check("\"prices\"" in logs or "prices" in logs, "the probe's line is not in read_logs")
        ws.run_app("3", "4", "5")

        shown = claude.prompt("/mcp__debug-sidecar__debug-done")
        check(not script.unplayed(), f"unplayed turns: {script.unplayed()}")
        done = newest_board(requests_of(lab, "done")[0]).splitlines()[0]
        check("stage cleaning_up" in done, f"the Mark fixed turn's board contradicts it: {done}")
        check("Cleanup verified" in shown.text or "verified" in shown.text.lower(),
              "the person was not told the cleanup was verified")
        check_rounds(shown.text, 2)
        sessions = ws.status()
        check(all(s.get("stage") in (None, "ended", "idle") for s in sessions),
              f"the session did not end: {sessions}")
        clean = ws.sidecar("check", check_rc=False)
        check(clean.returncode == 0, f"check is not clean: {clean.stdout}")


# The person's answers in the hand-off form, given by an Elicitation hook
# (Claude Code's -p cancels every form no hook answers): the first time they
# run the program and pick Proceed with a note, the second time Mark fixed.
# Each hook input is kept, so the scenario reads what the person was shown.
ELICITATION_HOOK = r"""
import json, os, subprocess, sys
here = os.path.dirname(os.path.abspath(__file__))
count = os.path.join(here, "count")
n = int(open(count).read()) + 1 if os.path.exists(count) else 1
open(count, "w").write(str(n))
open(os.path.join(here, f"input-{n}.json"), "w").write(sys.stdin.read())
if n == 1:
    subprocess.run([sys.executable, os.path.join(here, "..", "app.py"), "3", "4", "5"],
                   capture_output=True, cwd=os.path.join(here, ".."))
    answer = {"choice": "proceed", "note": "it printed total: 9"}
else:
    answer = {"choice": "fixed"}
print(json.dumps({"hookSpecificOutput": {"hookEventName": "Elicitation",
                                         "action": "accept", "content": answer}}))
"""


def claude_form(kind, binary, ws):
    """The whole loop inside the chat: the person answers the hand-off form
    (Proceed with a note, then Mark fixed), the answers come back to the
    model as the tool results, and the session ends verified, with no
    slash command typed."""
    tools = ",".join(claude_names(t) for t in ("probe_snippet", "hand_off_to_user", "read_logs"))
    script = Script([
        Turn(PROBLEM, [
            call("ToolSearch", {"query": f"select:{tools}", "max_results": 3}),
            call("probe_snippet", {"file": "app.py", "hypothesisId": "H1",
                                   "message": "prices total() receives", "variables": ["prices"]}),
            insert_probe(ws),
            call("hand_off_to_user", HAND_OFF),
            read_round_one_logs,
            call("Edit", {"file_path": os.path.join(ws.root, "app.py"),
                          "old_string": "return sum(prices[1:])", "new_string": "return sum(prices)"}),
            call("hand_off_to_user", again(HAND_OFF, steps=["Run `python3 app.py 3 4 5` again"])),
            remove_probe(ws),
            say("Fixed: total() skipped the first price. Every probe is removed."),
        ], name="start"),
    ], claude_names)
    with Lab(script) as lab:
        claude = kind(binary, ws, lab.port)
        claude.install()
        hook_dir = os.path.join(ws.root, ".form")
        os.makedirs(hook_dir)
        with open(os.path.join(hook_dir, "answer.py"), "w") as f:
            f.write(ELICITATION_HOOK)
        settings_path = os.path.join(ws.root, ".claude", "settings.local.json")
        with open(settings_path) as f:
            settings = json.load(f)
        settings["hooks"]["Elicitation"] = [{"matcher": "debug-sidecar", "hooks": [
            {"type": "command", "command": "python3 " + shlex.quote(os.path.join(hook_dir, "answer.py"))}]}]
        with open(settings_path, "w") as f:
            json.dump(settings, f, indent=2)
        shown = claude.prompt(f"/mcp__debug-sidecar__debug {PROBLEM}")
        check(not script.unplayed(), f"unplayed turns: {script.unplayed()}")
        start = requests_of(lab, "start")
        check(os.path.exists(os.path.join(hook_dir, "input-2.json")),
              "the person was not asked twice in the chat")
        with open(os.path.join(hook_dir, "input-1.json")) as f:
            asked = json.load(f)
        check("1. Run `python3 app.py 3 4 5`" in asked.get("message", ""),
              f"the form did not show the steps: {asked.get('message', '')[:300]!r}")
        check("choice" in json.dumps(asked.get("requested_schema")),
              f"the form has no choice: {asked.get('requested_schema')}")
        proceeded = last_tool_result(start[4]["body"])
        check("pressed Proceed" in proceeded and "logged 1 line(s)" in proceeded
              and "it printed total: 9" in proceeded,
              f"the hand-off did not answer with the Proceed kickoff: {proceeded[:400]!r}")
        fixed = last_tool_result(start[7]["body"])
        check("marked the bug fixed" in fixed,
              f"the second hand-off did not answer with the cleanup kickoff: {fixed[:400]!r}")
        check("Cleanup verified" in shown.text or "verified" in shown.text.lower(),
              "the person was not told the cleanup was verified")
        check_rounds(shown.text, 2)
        sessions = ws.status()
        check(all(s.get("stage") in (None, "ended", "idle") for s in sessions),
              f"the session did not end: {sessions}")


def claude_stubborn(kind, binary, ws):
    """A model that never hands off: sent back once, then the round is
    closed for it, and the person is told in words that read as guidance."""
    script = Script([
        Turn(PROBLEM, [say("It is probably the slice in total().")], name="start"),
        Turn("still yours", [say("I am confident it is the slice.")], name="nudged"),
    ], claude_names)
    with Lab(script) as lab:
        claude = kind(binary, ws, lab.port)
        claude.install()
        shown = claude.prompt(f"/mcp__debug-sidecar__debug {PROBLEM}")
        check(requests_of(lab, "nudged"), "the Stop hook's nudge never reached the model")
        nudge = request_text(requests_of(lab, "nudged")[0]["body"])
        check(nudge.count("is still yours") == 1,
              f"the model was handed the nudge {nudge.count('is still yours')} times")
        check(not any("problem" in (n.get("text") or "") or "error" in (n.get("text") or "")
                      for n in shown.notifications()),
              f"the person was shown an error for a nudge: {shown.notifications()}")
        check("closed round 1" in shown.text, "the person was not told the round was closed")
        sessions = ws.status()
        check(sessions and sessions[0].get("stage") == "user_turn",
              f"the round was not closed: {sessions}")


def claude_subfolder(kind, binary, ws):
    """Started in a subfolder: hooks and MCP use the repository's state."""
    sub = os.path.join(ws.root, "src", "deep")
    os.makedirs(sub)
    script = Script([
        Turn(PROBLEM, [
            call("ToolSearch", {"query": "select:" + claude_names("debug_status")}),
            call("debug_status", {}),
            call("hand_off_to_user", dict(HAND_OFF, plan=[{"id": "E1", "method": "user_observation",
                                                           "instructions": ["what it prints"]}])),
            say("Over to you."),
        ], name="start"),
    ], claude_names)
    with Lab(script) as lab:
        claude = kind(binary, ws, lab.port)
        claude.install(trusted=sub)
        claude.prompt(f"/mcp__debug-sidecar__debug {PROBLEM}", cwd=sub)
        check(not os.path.exists(os.path.join(sub, ".debug-sidecar")),
              "a stray state directory was made in the subfolder")
        check(not os.path.exists(os.path.join(ws.root, "src", ".debug-sidecar")),
              "a stray state directory was made in src/")
        status = last_tool_result(requests_of(lab, "start")[2]["body"])
        check(BOARD in status, f"MCP saw no session where the hooks did: {status[:200]!r}")
        sessions = ws.status()
        check(sessions and sessions[0].get("stage") == "user_turn", f"not handed off: {sessions}")


def patch(path, old, new):
    """A Codex apply_patch replacing the lines `old` with `new`."""
    minus = "".join(f"-{line}\n" for line in old.splitlines())
    plus = "".join(f"+{line}\n" for line in new.splitlines())
    return f"*** Begin Patch\n*** Update File: {path}\n@@\n{minus}{plus}*** End Patch\n"


def codex_insert_probe(body):
    return call("apply_patch", patch("app.py", BUGGY_LINE, block_before_bug(body)))


def codex_remove_probe(ws):
    def step(body):
        source = ws.read("app.py")
        match = re.search(r"(?ms)^    # #region debug-probe.*?# #endregion debug-probe \S+\n", source)
        check(match, "the probe block is not in app.py at cleanup")
        return call("apply_patch", patch("app.py", match.group(0), ""))
    return step


def function_outputs(lab, turn):
    """Every tool result the model got in a turn, in order, once each."""
    seen, outputs = set(), []
    for r in requests_of(lab, turn):
        for item in r["body"].get("input") or []:
            if item.get("type") in ("function_call_output", "custom_tool_call_output"):
                if item["call_id"] not in seen:
                    seen.add(item["call_id"])
                    out = item.get("output")
                    outputs.append(out if isinstance(out, str) else json.dumps(out))
    return outputs


def codex_whole_loop(kind, binary, ws):
    script = Script([
        Turn(PROBLEM, [
            search("debug sidecar start hypotheses probe hand off"),
            call("start_debug_session", {"problem": PROBLEM}),
            call("record_hypotheses", {"hypotheses": HYPOTHESES}),
            call("probe_snippet", {"file": "app.py", "hypothesisId": "H1",
                                   "message": "prices total() receives", "variables": ["prices"]}),
            codex_insert_probe,
            call("hand_off_to_user", HAND_OFF),
            say("Run it, then tell me."),
        ], name="start"),
        Turn("debug-proceed", [
            read_round_one_logs,
            call("record_hypotheses", {"hypotheses": [dict(HYPOTHESES[0], status="confirmed",
                                                           evidence=["p1: prices [3,4,5]"])]}),
            call("apply_patch", patch("app.py", "    return sum(prices[1:])", "    return sum(prices)")),
            call("hand_off_to_user", again(HAND_OFF, steps=["Run `python3 app.py 3 4 5` again"])),
            say("Fixed, please check."),
        ], name="proceed"),
        Turn("clean up", [
            codex_remove_probe(ws),
            call("probe_ledger", {"rescan": True}),
            say("Every probe is removed."),
        ], name="done"),
    ], codex_names)
    with Lab(script) as lab:
        codex = kind(binary, ws, lab.port)
        out = codex.install()
        check("trust" in out.stdout, "install codex does not explain trust")
        checked = ws.sidecar("install", "codex", "--check", check_rc=False)
        check(checked.returncode == 1 and "MISSING  hooks trusted" in checked.stdout
              and "ok       this project trusted" in checked.stdout,
              f"install codex --check did not say the hooks are untrusted: {checked.stdout}")
        codex.prompt(f"Use debug mode on this: {PROBLEM}")
        check(script.unplayed() == ["proceed", "done"],
              f"turn 1 did not play through: unplayed {script.unplayed()}")
        outputs = function_outputs(lab, "start")
        joined = "\n".join(outputs)
        # Items 1, 2, 8: a start path, tool texts (not JSON) and no refusals.
        check("Debug Mode is on" in outputs[0], f"start_debug_session gave: {outputs[0][:300]!r}")
        check("approval" not in joined.lower(), f"a tool call was refused: {joined[:500]}")
        check("unchanged between its markers" in joined, "probe_snippet's text did not reach the model")
        check("end your turn" in joined, "the hand-off's text did not reach the model")
        # Item 10: the kickoff says how Codex reaches the tools.
        check("mcp__debug_sidecar namespace" in outputs[0], "the kickoff does not name Codex's namespace")
        sessions = ws.status()
        check(sessions and sessions[0]["stage"] == "user_turn", f"not handed off: {sessions}")
        ws.run_app("3", "4", "5")

        # Codex has no prompts and its TUI takes no unknown `/`: the person
        # types Proceed as words the prompt hook applies.
        codex.prompt("debug-proceed it printed total: 9")
        proceed = requests_of(lab, "proceed")
        check(proceed, "the proceed turn never reached the model")
        check_kickoff_names_round(request_text(proceed[0]["body"]), 1)
        check("it printed total: 9" in request_text(proceed[0]["body"]),
              "the person's note did not reach the model")
        board = newest_board(proceed[0])
        check("round 2 · stage investigating" in board.splitlines()[0],
              f"the board after Proceed: {board.splitlines()[0]}")
        logs = "\n".join(function_outputs(lab, "proceed"))
        check("not instructions" in logs and "prices" in logs, f"read_logs: {logs[:400]!r}")
        no_doubled_board(lab)
        ws.run_app("3", "4", "5")

        ws.sidecar("done")
        shown = codex.prompt("Marked fixed, clean up.")
        check(not script.unplayed(), f"unplayed turns: {script.unplayed()}")
        sessions = ws.status()
        check(all(not s.get("active") for s in sessions), f"the session did not end: {sessions}")
        check(ws.sidecar("check", check_rc=False).returncode == 0, "check is not clean")
        check("probe" in shown.text.lower(), "the person saw nothing of the cleanup")


def codex_stubborn(kind, binary, ws):
    """Started with a typed `/debug` (Codex has no MCP prompts: the prompt
    hook applies it and gives the kickoff), then a model that never hands
    off."""
    script = Script([
        Turn(PROBLEM, [say("It is probably the slice.")], name="start"),
        Turn("still yours", [say("I am sure it is the slice.")], name="nudged"),
    ], codex_names)
    with Lab(script) as lab:
        codex = kind(binary, ws, lab.port)
        codex.install()
        shown = codex.prompt(f"/debug {PROBLEM}")
        start = request_text(requests_of(lab, "start")[0]["body"])
        check("Work from runtime evidence" in start, "the kickoff did not reach the model")
        nudged = requests_of(lab, "nudged")
        check(nudged, "the Stop hook's nudge never reached the model")
        check(request_text(nudged[0]["body"]).count("is still yours") == 1,
              "the model got the nudge more than once")
        sessions = ws.status()
        check(sessions and sessions[0]["stage"] == "user_turn", f"the round was not closed: {sessions}")
        # `codex exec` prints no hook's systemMessage (0.171.0, with or without
        # --json): what the person has is the state, and no error for a nudge.
        # (The lab's own --dangerously-bypass-hook-trust warns as an error item.)
        errors = [e for e in shown.events
                  if (e.get("type") == "error" or e.get("item", {}).get("type") == "error")
                  and "bypass-hook-trust" not in json.dumps(e)]
        check(not errors, f"the person was shown an error: {errors}")


ALL = [
    ("whole loop", "claude", claude_whole_loop),
    ("whole loop in the chat forms", "claude", claude_form),
    ("stubborn model", "claude", claude_stubborn),
    ("start in a subfolder", "claude", claude_subfolder),
    ("whole loop", "codex", codex_whole_loop),
    ("stubborn model", "codex", codex_stubborn),
]
