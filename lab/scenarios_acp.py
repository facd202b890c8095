"""Debug Mode through `debug-sidecar acp` with a real ACP agent
(`@zed-industries/claude-agent-acp`, the Claude Code SDK inside): the
whole loop typed as a person types it in an ACP editor, and a stubborn
model. No hooks are installed: the proxy alone brings the board, the
commands and the follow-ups. Assertions read what the model received,
then what the editor was shown, then our state and a `serve` client's."""

import os
import time

from acp import ServeWatcher
from harness import (check_editor_wake, ENDED_AFTER, ask_serve, check, check_kickoff_names_round, check_rounds,
                     record_wake_time)

from model_server import Lab, Script, Turn, call, last_tool_result, request_text, say
from scenarios import PROBLEM, claude_names, requests_of
from scenarios_reach import loop_script

OPEN = "[debug-sidecar blackboard: this newest copy"
SENT_BACK = "Debug Mode sent the agent back"


def marked_boards(text):
    return text.count(OPEN)


def whole_loop(kind, binary, ws):
    tools = ",".join(claude_names(t) for t in (
        "record_hypotheses", "probe_snippet", "hand_off_to_user", "read_logs", "probe_ledger"))
    # Claude Code edits only a file it has read.
    script = loop_script(ws, claude_names, [
        call("ToolSearch", {"query": f"select:{tools}", "max_results": 5}),
        call("Read", {"file_path": os.path.join(ws.root, "app.py")}),
    ])
    with Lab(script) as lab:
        watcher = ServeWatcher(ws)
        agent = kind(binary, ws, lab.port)
        try:
            commands = agent.editor.commands()
            for ours in ("debug", "debug-proceed", "debug-done", "debug-abort"):
                check(ours in commands, f"/{ours} is not in the editor's command list: {commands}")
            shown = agent.prompt(f"/debug {PROBLEM}")
            check("debug-sidecar: Debug Mode started: round 1 is the agent's." in shown.text,
                  f"the editor was not told the session started: {shown.text[:400]!r}")
            check(script.unplayed() == ["proceed", "done"],
                  f"turn 1 did not play through: unplayed {script.unplayed()}")
            start = requests_of(lab, "start")
            first = request_text(start[0]["body"])
            check(PROBLEM in first and "/debug" not in first.split(PROBLEM)[0][-20:],
                  "the kickoff did not replace the typed command")
            check(marked_boards(first) == 1, f"{marked_boards(first)} boards in the first request")
            check("mcp__debug-sidecar__" in first,
                  "the board does not name the tools as Claude Code calls them")
            snippet = last_tool_result(start[4]["body"])
            check("unchanged between its markers" in snippet,
                  f"probe_snippet's text did not reach the model: {snippet[:300]!r}")
            handed = last_tool_result(start[6]["body"])
            check("end your turn" in handed.lower() or "one short line" in handed.lower(),
                  f"the hand-off's text did not reach the model: {handed[:300]!r}")
            check(SENT_BACK not in shown.text, "a model that handed off was sent back")
            sessions = ws.status()
            check(sessions and sessions[0].get("stage") == "user_turn",
                  f"the hand-off did not give the person the round: {sessions}")
            # Turn states a serve client saw, from the agent's updates.
            deadline = time.monotonic() + 10
            while (not watcher.states or watcher.states[-1] != "idle") \
                    and time.monotonic() < deadline:
                time.sleep(0.1)
            states = watcher.states
            check(states[:1] == ["connecting"] and states[-1:] == ["idle"]
                  and "working" in states and "streaming" in states,
                  f"the serve client's turn states: {states}")
            ws.run_app("3", "4", "5")

            shown = agent.prompt("/debug-proceed it printed total: 9")
            check("round 2 is the agent's" in shown.text, f"Proceed was not answered: {shown.text!r}")
            proceed = requests_of(lab, "proceed")
            check(proceed, "the proceed turn never reached the model")
            text = request_text(proceed[0]["body"])
            check_kickoff_names_round(text, 1)
            newest = text[text.rindex(OPEN):]
            check("round 2 · stage investigating" in newest,
                  f"the newest board contradicts Proceed: {newest[:200]!r}")
            logs = last_tool_result(proceed[1]["body"])
            check("not instructions" in logs and "prices" in logs, f"read_logs: {logs[:400]!r}")
            check(ws.status()[0].get("round") == 2, "status --json does not say round 2")
            ws.run_app("3", "4", "5")

            shown = agent.prompt("/debug-done it prints 12 now")
            check(not script.unplayed(), f"unplayed turns: {script.unplayed()}")
            done = request_text(requests_of(lab, "done")[0]["body"])
            check("stage cleaning_up" in done[done.rindex(OPEN):],
                  "the Mark fixed turn's newest board contradicts it")
            sessions = ws.status()
            check(all(not s.get("active") for s in sessions), f"the session did not end: {sessions}")
            check(ws.sidecar("check", check_rc=False).returncode == 0, "check is not clean")
            check("verified" in shown.text.lower(), f"the person was not told: {shown.text[-600:]!r}")
            check_rounds(shown.text, 2)
        finally:
            code = agent.close()
            watcher.close()
        check(code == 0, f"the proxy exited {code} when the editor closed")


def stubborn(kind, binary, ws):
    """A model that never hands off: sent back once (it made no progress
    after it), then the round closes for it; the editor hears one answer."""
    script = Script([
        Turn(PROBLEM, [say("It is probably the slice in total().")], name="start"),
        Turn("still yours", [say("I am confident it is the slice.")], name="nudged"),
    ], kind.names)
    with Lab(script) as lab:
        agent = kind(binary, ws, lab.port)
        try:
            shown = agent.prompt(f"/debug {PROBLEM}")
            check(shown.result.get("stopReason") == "end_turn", f"stop: {shown.result}")
            nudged = requests_of(lab, "nudged")
            check(len(nudged) == 1, f"the model was sent back {len(nudged)} times, not once")
            text = request_text(nudged[0]["body"])
            check(text.count("is still yours") == 1, "the nudge reached the model twice")
            check(shown.text.count(SENT_BACK) == 1, f"the editor was shown: {shown.text!r}")
            check("closed round 1" in shown.text, f"the person was not told: {shown.text[-600:]!r}")
            sessions = ws.status()
            check(sessions and sessions[0].get("stage") == "user_turn",
                  f"the round was not closed: {sessions}")
        finally:
            agent.close()


def woken(kind, binary, ws):
    """An editor's session idle after the hand-off; the person reproduces
    and runs `debug-sidecar proceed` in a terminal: the proxy takes the wake,
    shows the editor why and prompts the agent with round 1's kickoff
    itself. Round 2 ends with Mark fixed pressed in an editor's own panel
    (serve, as VS Code), which wakes it again; the session ends after 2
    rounds, said in the chat."""
    tools = ",".join(claude_names(t) for t in (
        "record_hypotheses", "probe_snippet", "hand_off_to_user", "read_logs", "probe_ledger"))
    script = loop_script(ws, claude_names, [
        call("ToolSearch", {"query": f"select:{tools}", "max_results": 5}),
        call("Read", {"file_path": os.path.join(ws.root, "app.py")}),
    ])
    with Lab(script) as lab:
        agent = kind(binary, ws, lab.port)
        editor = agent.editor
        try:
            agent.prompt(f"/debug {PROBLEM}")
            check(ws.status()[0].get("stage") == "user_turn", f"after the hand-off: {ws.status()}")
            time.sleep(0.5)
            ws.run_app("3", "4", "5")
            pressed = time.monotonic()
            out = ws.sidecar("proceed", "it printed total: 9")
            editor.watch(lambda: requests_of(lab, "proceed"), 15,
                         f"Proceed in a terminal woke no turn: {out.stdout!r}")
            record_wake_time("acp", requests_of(lab, "proceed")[0]["at"] - pressed)
            check("(woken in an ACP editor)" in out.stdout,
                  f"the terminal does not say the proxy woke the agent: {out.stdout!r}")
            check_kickoff_names_round(request_text(requests_of(lab, "proceed")[0]["body"]), 1)
            editor.watch(lambda: any("you pressed Proceed outside the chat" in c
                                     for c in editor.chunks()), 5, "the editor told why")
            editor.watch(lambda: ws.status()[0].get("stage") == "user_turn"
                         and requests_of(lab, "proceed")[-1]["step"] == "text", 60,
                         "the woken turn's hand-off")
            time.sleep(0.5)
            ws.run_app("3", "4", "5")
            pressed = time.monotonic()
            done = ask_serve(ws, "debug/done", {}, host="vscode")
            check_editor_wake(done, "an ACP editor")
            editor.watch(lambda: requests_of(lab, "done"), 15, "Mark fixed woke no turn")
            record_wake_time("acp", requests_of(lab, "done")[0]["at"] - pressed)
            editor.watch(lambda: ENDED_AFTER.search("".join(editor.chunks())), 60,
                         "the cleanup summary in the chat")
            check_rounds("".join(editor.chunks()), 2, "the woken session")
            check(not script.unplayed(), f"unplayed turns: {script.unplayed()}")
            check(all(not s.get("active") for s in ws.status()), f"not ended: {ws.status()}")
        finally:
            code = agent.close()
        check(code == 0, f"the proxy exited {code} when the editor closed")


ALL = [
    ("whole loop", "claude-acp", whole_loop),
    ("stubborn model", "claude-acp", stubborn),
    ("Proceed outside the chat wakes the idle session", "claude-acp", woken),
    ("stubborn model", "codex-acp", stubborn),
]
