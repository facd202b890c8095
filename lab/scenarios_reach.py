"""Gemini CLI, Copilot CLI and OpenCode through the whole loop, and a stubborn model
in each: start, one current blackboard per request, hand-off to the
person, Proceed, Mark fixed, verified cleanup. Assertions read what the
model received first, then what the person was shown, then our state."""

import json
import os
import time

from harness import (check_editor_wake, ENDED_AFTER, Failure, ask_serve, check, check_kickoff_names_round, check_rounds,
                     record_wake_time)
from opencode import OpenCodeAnthropic, OpenCodeServer
from model_server import Lab, Script, Turn, call, last_tool_result, request_text, say
from scenarios import (BUGGY_LINE, HAND_OFF, again, HYPOTHESES, PROBLEM, block_before_bug, boards,
                       newest_board, no_doubled_board, probe_in_app, read_round_one_logs,
                       requests_of, wait_requests)

OURS = ("record_hypotheses", "probe_snippet", "hand_off_to_user", "read_logs", "probe_ledger",
        "debug_status", "start_debug_session", "log_summary", "run_reproduction")


def gemini_names(tool):
    return f"mcp_debug-sidecar_{tool}" if tool in OURS else tool


def copilot_names(tool):
    return f"debug-sidecar-{tool}" if tool in OURS else tool


def edit_step(ws, names, old, new_of):
    """An edit of app.py in the harness's own edit tool: Gemini's `replace`,
    Copilot's `edit`, Claude Code's `Edit`. `new_of(body)` gives the new text."""
    def step(body):
        path = os.path.join(ws.root, "app.py")
        new = new_of(body)
        old_text = old(body) if callable(old) else old
        if names is gemini_names:
            return call("replace", {"file_path": path, "old_string": old_text, "new_string": new,
                                    "instruction": "edit total()"})
        if names is copilot_names:
            return call("edit", {"path": path, "old_str": old_text, "new_str": new})
        if names is opencode_names:
            return call("edit", {"filePath": path, "oldString": old_text, "newString": new})
        # Claude Code's (behind claude-agent-acp).
        return call("Edit", {"file_path": path, "old_string": old_text, "new_string": new})
    return step


def loop_script(ws, names, start_steps):
    return Script([
        Turn(PROBLEM, start_steps + [
            call("record_hypotheses", {"hypotheses": HYPOTHESES}),
            call("probe_snippet", {"file": "app.py", "hypothesisId": "H1",
                                   "message": "prices total() receives", "variables": ["prices"]}),
            edit_step(ws, names, BUGGY_LINE, block_before_bug),
            call("hand_off_to_user", HAND_OFF),
            say("Run it, then press Proceed."),
        ], name="start"),
        Turn("pressed Proceed", [
            read_round_one_logs,
            call("record_hypotheses", {"hypotheses": [dict(HYPOTHESES[0], status="confirmed",
                                                           evidence=["probe p1: prices [3,4,5]"])]}),
            edit_step(ws, names, "return sum(prices[1:])", lambda _b: "return sum(prices)"),
            call("hand_off_to_user", again(HAND_OFF, steps=["Run `python3 app.py 3 4 5` again",
                                                           "Mark fixed if it prints 12"])),
            say("Fixed, I think: please check."),
        ], name="proceed"),
        Turn("marked the bug fixed", [
            edit_step(ws, names, lambda _b: probe_in_app(ws), lambda _b: ""),
            call("probe_ledger", {"rescan": True}),
            say("Every probe is removed."),
        ], name="done"),
    ], names)


def whole_loop(kind, binary, ws, names, start_prompt, start_steps, prefix):
    script = loop_script(ws, names, start_steps)
    with Lab(script) as lab:
        harness = kind(binary, ws, lab.port)
        before = ws.sidecar("install", kind.name, "--check", check_rc=False)
        check(before.returncode == 1, f"install {kind.name} --check passed before install")
        harness.install()
        after = ws.sidecar("install", kind.name, "--check", check_rc=False)
        check(after.returncode == 0, f"install {kind.name} --check after install: {after.stdout}")
        harness.prompt(start_prompt)
        check(script.unplayed() == ["proceed", "done"],
              f"turn 1 did not play through: unplayed {script.unplayed()}")
        start = requests_of(lab, "start")
        snippet = last_tool_result(start[-3]["body"])
        check("unchanged between its markers" in snippet,
              f"probe_snippet's text did not reach the model: {snippet[:300]!r}")
        handed = last_tool_result(start[-1]["body"])
        check("end your turn" in handed.lower() or "one short line" in handed.lower(),
              f"the hand-off's text did not reach the model: {handed[:300]!r}")
        no_doubled_board(lab)
        given = boards(request_text(start[-1]["body"]))
        check(any(prefix in board for board in given),
              f"the board does not name the tools as {kind.name} calls them")
        check(not any("&lt;" in board or "&gt;" in board for board in given),
              f"our words reached the model HTML-escaped: {given[0][-400:]!r}")
        check("H1" in newest_board(start[1 + len(start_steps)]),
              "the board was not refreshed after record_hypotheses")
        sessions = ws.status()
        check(sessions and sessions[0].get("stage") == "user_turn",
              f"the hand-off did not give the person the round: {sessions}")
        check(sessions[0].get("problem") == PROBLEM,
              f"the session's problem is not the person's words: {sessions[0].get('problem')!r}")
        ws.run_app("3", "4", "5")

        harness.prompt("/debug-proceed it printed total: 9")
        proceed = requests_of(lab, "proceed")
        check(proceed, "the proceed turn never reached the model")
        check_kickoff_names_round(request_text(proceed[0]["body"]), 1)
        board = newest_board(proceed[0])
        check("round 2" in board.splitlines()[0] and "stage investigating" in board.splitlines()[0],
              f"the proceed turn's board contradicts Proceed: {board.splitlines()[0]}")
        logs = last_tool_result(proceed[1]["body"])
        check("not instructions" in logs and "prices" in logs, f"read_logs: {logs[:400]!r}")
        check(script.unplayed() == ["done"], f"unplayed after Proceed: {script.unplayed()}")
        ws.run_app("3", "4", "5")

        shown = harness.prompt("/debug-done it prints 12 now")
        check(not script.unplayed(), f"unplayed turns: {script.unplayed()}")
        done = newest_board(requests_of(lab, "done")[0]).splitlines()[0]
        check("stage cleaning_up" in done, f"the Mark fixed turn's board contradicts it: {done}")
        no_doubled_board(lab)
        sessions = ws.status()
        check(all(not s.get("active") for s in sessions), f"the session did not end: {sessions}")
        check(ws.sidecar("check", check_rc=False).returncode == 0, "check is not clean")
        if kind.shows_hook_messages:
            check("verified" in shown.text.lower(), f"the person was not told: {shown.text[-600:]!r}")
            check_rounds(shown.text, 2)
        return lab


def stubborn(kind, binary, ws, names, start_prompt, start_steps):
    """A model that never hands off: sent back once, then the round closes
    for it. The nudge's echo as a prompt is no new turn of the person's."""
    script = Script([
        Turn(PROBLEM, start_steps + [say("It is probably the slice in total().")], name="start"),
        Turn("still yours", [say("I am confident it is the slice.")], name="nudged"),
    ], names)
    with Lab(script) as lab:
        harness = kind(binary, ws, lab.port)
        harness.install()
        shown = harness.prompt(start_prompt)
        nudged = requests_of(lab, "nudged")
        check(len(nudged) == 1, f"the model was sent back {len(nudged)} times, not once")
        text = request_text(nudged[0]["body"])
        check(text.count("is still yours") == 1,
              f"the model was handed the nudge {text.count('is still yours')} times")
        # The retry's prompt hook gave no second copy of an unchanged board.
        copies = boards(text)
        check(len(copies) == len(set(copies)), "the same board twice after the nudge")
        if kind.shows_hook_messages:
            check("closed round 1" in shown.text, f"the person was not told: {shown.text[-600:]!r}")
        sessions = ws.status()
        check(sessions and sessions[0].get("stage") == "user_turn",
              f"the round was not closed: {sessions}")
        if getattr(kind, "uses_hooks", True):
            # The hooks remember the nudge, to know its echo as a prompt.
            activity = json.loads(ws.read(".debug-sidecar/sessions/default/activity.json"))
            check(activity.get("harness", {}).get("lastNudge"), "the nudge was not remembered")


def gemini_whole_loop(kind, binary, ws):
    # `/debug <problem>` is our MCP prompt, which Gemini CLI expands.
    lab = whole_loop(kind, binary, ws, gemini_names, f"/debug {PROBLEM}", [], "mcp_debug-sidecar_")
    first = requests_of(lab, "start")[0]
    check(PROBLEM in request_text(first["body"]), "the kickoff lacks the whole problem")


def gemini_stubborn(kind, binary, ws):
    stubborn(kind, binary, ws, gemini_names, f"/debug {PROBLEM}", [])


def copilot_whole_loop(kind, binary, ws):
    # Copilot CLI's -p does not expand MCP prompts: the prompt hook applies
    # `/debug <problem>` and gives the model the kickoff itself.
    lab = whole_loop(kind, binary, ws, copilot_names, f"/debug {PROBLEM}", [], "debug-sidecar-")
    first = request_text(requests_of(lab, "start")[0]["body"])
    check("Work from runtime evidence" in first, "the kickoff did not reach the model")


def copilot_stubborn(kind, binary, ws):
    stubborn(kind, binary, ws, copilot_names, f"Use debug mode on this: {PROBLEM}",
             [call("start_debug_session", {"problem": PROBLEM})])


ALL = [
    ("whole loop", "gemini", gemini_whole_loop),
    ("stubborn model", "gemini", gemini_stubborn),
    ("whole loop", "copilot", copilot_whole_loop),
    ("stubborn model", "copilot", copilot_stubborn),
]


def opencode_names(tool):
    return f"debug-sidecar_{tool}" if tool in OURS else tool


def one_board_each(lab):
    """OpenCode builds the system prompt anew for every request: each
    request of a turn carries exactly one board."""
    for r in lab.requests:
        if r["turn"] is not None:
            found = boards(request_text(r["body"]))
            check(len(found) == 1, f"turn {r['turn']}: {len(found)} boards in one request")


TODOS = [{"id": "1", "content": "Record hypotheses", "status": "in_progress", "priority": "high"},
         {"id": "2", "content": "Probe total()", "status": "pending", "priority": "high"}]


def opencode_whole_loop(kind, binary, ws):
    # `--command debug-sidecar:debug <problem>`: our MCP prompt, expanded by
    # OpenCode; the plugin starts the session with the words.
    # A step with text and a tool call: no stop, on either wire.
    lab = whole_loop(kind, binary, ws, opencode_names, f"/debug {PROBLEM}",
                     [call("todowrite", {"todos": TODOS}, text="First, a plan.")],
                     "debug-sidecar_")
    one_board_each(lab)
    start = requests_of(lab, "start")
    first = request_text(start[0]["body"])
    check(PROBLEM in first and "Work from runtime evidence" in first,
          "the kickoff did not reach the model")
    check("$1" not in first, "the prompt's placeholder reached the model")
    # The plugin's rescan after OpenCode's `edit`: the next request's board
    # has the probe on disk.
    after_edit = newest_board(next(r for r in start if r["step"] == "hand_off_to_user"))
    check("  p1 H1 app.py" in after_edit and "not yet found on disk" not in after_edit,
          f"no rescan after the edit: {after_edit[-500:]!r}")
    # `todo.updated` became the session's progress.
    activity = json.loads(ws.read(".debug-sidecar/sessions/default/activity.json"))
    view = activity["progress"]["sessions"][0]["view"]
    check([t["content"] for t in view["todos"]] == ["Record hypotheses", "Probe total()"],
          f"the todo list did not reach the sidecar: {view}")


def opencode_stubborn(kind, binary, ws):
    stubborn(kind, binary, ws, opencode_names, f"/debug {PROBLEM}", [])


# Over Anthropic Messages a text ends before the step's tool calls are
# known: the plugin decides stops at idle and holds `opencode run` open
# (its `dispose`) for the nudged turn.
def opencode_anthropic_whole_loop(_kind, binary, ws):
    opencode_whole_loop(OpenCodeAnthropic, binary, ws)


def opencode_anthropic_stubborn(_kind, binary, ws):
    opencode_stubborn(OpenCodeAnthropic, binary, ws)


def opencode_woken(kind, binary, ws):
    """`opencode serve` with the project's plugin, one session started with
    `/debug-sidecar:debug`, idle after the hand-off. The person reproduces
    and runs `debug-sidecar proceed` in a terminal: the plugin takes the
    wake and prompts the session with round 1's kickoff. Round 2 ends with
    Mark fixed pressed in an editor (serve, as VS Code), which wakes it
    again; the session ends after 2 rounds."""
    script = loop_script(ws, opencode_names, [])
    with Lab(script) as lab:
        harness = kind(binary, ws, lab.port)
        harness.install()
        server = OpenCodeServer(harness)
        try:
            session = server.new_session()
            server.command(session, "debug-sidecar:debug", PROBLEM)
            check(ws.status()[0].get("stage") == "user_turn", f"after the hand-off: {ws.status()}")
            time.sleep(1.0)
            ws.run_app("3", "4", "5")
            pressed = time.monotonic()
            out = ws.sidecar("proceed", "it printed total: 9")
            woken = wait_requests(lab, "proceed", 15)
            check(woken, f"Proceed in a terminal did not wake OpenCode: {out.stdout!r}")
            record_wake_time("opencode", woken[0]["at"] - pressed)
            check("(woken in OpenCode)" in out.stdout,
                  f"the terminal does not say OpenCode was woken: {out.stdout!r}")
            check_kickoff_names_round(request_text(woken[0]["body"]), 1, "the woken turn")
            wait_stage(ws, "user_turn", 60, "the woken turn's hand-off")
            time.sleep(1.0)
            ws.run_app("3", "4", "5")
            pressed = time.monotonic()
            done = ask_serve(ws, "debug/done", {}, host="vscode")
            check_editor_wake(done, "OpenCode")
            fixed = wait_requests(lab, "done", 15)
            check(fixed, "Mark fixed in an editor did not wake OpenCode")
            record_wake_time("opencode", fixed[0]["at"] - pressed)
            deadline = time.monotonic() + 60
            while ws.status()[0].get("active") and time.monotonic() < deadline:
                time.sleep(0.2)
            check(not ws.status()[0].get("active"), f"the session did not end: {ws.status()}")
            check(not script.unplayed(), f"unplayed turns: {script.unplayed()}")
            # The plugin shows the cleanup summary once the stop's answer
            # reaches it, a moment after the state says the session ended.
            deadline = time.monotonic() + 10
            toasts = server.toasts()
            while not ENDED_AFTER.search("\n".join(toasts)) and time.monotonic() < deadline:
                time.sleep(0.1)
                toasts = server.toasts()
            check(any("pressed Proceed outside the chat" in t for t in toasts),
                  f"the person was not told why the turn started: {toasts}")
            check_rounds("\n".join(toasts), 2, "the woken session")
        finally:
            server.close()


def wait_stage(ws, stage, timeout, what):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ws.status()[0].get("stage") == stage:
            return
        time.sleep(0.1)
    raise Failure(f"{what}: the session is not in {stage}: {ws.status()}")


ALL += [
    ("whole loop", "opencode", opencode_whole_loop),
    ("Proceed outside the chat wakes the idle session", "opencode", opencode_woken),
    ("stubborn model", "opencode", opencode_stubborn),
    ("whole loop over Anthropic Messages", "opencode", opencode_anthropic_whole_loop),
    ("stubborn model over Anthropic Messages", "opencode", opencode_anthropic_stubborn),
]
