"""The lab's scenarios for pi with the extension in `editors/pi`: each plays
a person and a scripted model through real pi runs in print mode and
asserts on what the model received, what the person saw and
`debug-sidecar status --json`."""

import json
import os
import re
import signal
import time

from harness import (check_editor_wake, ask_serve, check, check_kickoff_names_round, check_rounds, Failure,
                     record_wake_time)
from model_server import Lab, Script, Turn, call, last_tool_result, request_text, say
from pi_hosts import RpcSession
from scenarios import (BOARD, BUGGY_LINE, HAND_OFF, HYPOTHESES, PROBLEM, probe_block,
                       read_round_one_logs, requests_of, wait_requests)

TOOLS = ["hand_off_to_user", "probe_snippet", "probe_ledger", "read_logs", "log_summary",
         "record_hypotheses", "debug_status", "start_debug_session", "run_reproduction"]


def wire_name(kind, tool):
    """The name a host offers a tool under: oh-my-pi prefixes `_`."""
    return f"_{tool}" if kind.name == "omp" else tool


def act(kind, tool, args=None):
    """A call as the host's model makes it: oh-my-pi requires its intent
    field `i` in every call (and strips it before the tool runs)."""
    args = dict(args or {})
    if kind.name == "omp":
        args["i"] = f"lab: {tool}"
    return call(tool, args)


def edit_app(kind, ws, old, new):
    """The host's own edit tool changing app.py (read when the step is due):
    pi's `edit`; oh-my-pi's patch-shaped `edit` is replaced by its `write`."""
    if kind.name == "omp":
        return act(kind, "write", {"path": os.path.join(ws.root, "app.py"),
                                   "content": ws.read("app.py").replace(old, new, 1)})
    return call("edit", {"path": os.path.join(ws.root, "app.py"),
                         "edits": [{"oldText": old, "newText": new}]})


def is_board(text):
    return text.startswith(BOARD)


def script(kind, turns):
    return Script(turns, lambda tool: wire_name(kind, tool), not_person=is_board)


def injected_boards(request):
    """The blackboard copies the extension put into a request (user text
    blocks; a tool's answer that is the board is not a copy)."""
    found = []
    for message in request["body"].get("messages") or []:
        content = message.get("content")
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        for block in blocks:
            if isinstance(block, dict) and block.get("type") == "text" and is_board(block.get("text", "")):
                found.append(block["text"])
    return found


def one_current_board_each(lab):
    """Every model request of a debug session carries exactly one copy."""
    for r in lab.requests:
        if r["turn"] is None:
            continue
        copies = injected_boards(r)
        check(len(copies) == 1, f"turn {r['turn']}: {len(copies)} blackboard copies in one request")


def every_tool_offered(kind, lab):
    for r in lab.requests:
        if r["turn"] is None:
            continue
        offered = [t.get("name") for t in r["body"].get("tools") or []]
        missing = [t for t in TOOLS if wire_name(kind, t) not in offered]
        check(not missing, f"turn {r['turn']}: tools not offered: {missing}")


def session(ws):
    sessions = ws.status()
    check(sessions, "no debug session in `debug-sidecar status --json`")
    return sessions[0]


def pi_stubborn(kind, binary, ws):
    """Started by `/debug`; a model that stops without handing off is sent
    back once (the nudge), then the round is closed for it."""
    lab_script = script(kind, [
        Turn(PROBLEM, [act(kind, "debug_status"), say("It is probably the slice in total().")],
             name="start"),
        Turn("still yours", [say("I am confident it is the slice.")], name="nudged"),
    ])
    with Lab(lab_script) as lab:
        pi = kind(binary, ws, lab.port)
        pi.install()
        shown = pi.prompt(f"/debug {PROBLEM}")
        one_current_board_each(lab)
        every_tool_offered(kind, lab)
        nudged = requests_of(lab, "nudged")
        check(nudged, "the nudge never reached the model")
        texts = [b.get("text", "") for m in nudged[0]["body"]["messages"] if m["role"] == "user"
                 for b in (m["content"] if isinstance(m["content"], list)
                           else [{"type": "text", "text": m["content"]}])
                 if isinstance(b, dict) and b.get("type") == "text"]
        check(sum("is still yours" in t for t in texts) == 1,
              "the model was not handed the nudge exactly once")
        check("closed round 1" in shown, f"the person was not told the round was closed: {shown[-600:]!r}")
        s = session(ws)
        check(s.get("stage") == "user_turn" and s.get("handoff") == "incomplete",
              f"the round was not closed as incomplete: {s}")


def pi_started_elsewhere(kind, binary, ws):
    """A session the person started from the terminal: pi's model gets its
    board with a plain prompt and hands the round over with the tool."""
    ws.sidecar("start", PROBLEM)
    lab_script = script(kind, [
        Turn("look at the bug", [act(kind, "record_hypotheses", {"hypotheses": HYPOTHESES}),
                                 act(kind, "hand_off_to_user", {"mode": "question",
                                                           "steps": ["Say which prices you used"],
                                                           "message": "Which prices did you enter?"}),
                                 say("Tell me which prices you entered.")], name="turn"),
    ])
    with Lab(lab_script) as lab:
        pi = kind(binary, ws, lab.port)
        pi.install()
        pi.prompt("look at the bug")
        one_current_board_each(lab)
        first = injected_boards(requests_of(lab, "turn")[0])[0]
        check(PROBLEM in first, "the board of the session started elsewhere did not reach the model")
        check("H1" in injected_boards(requests_of(lab, "turn")[1])[0],
              "the board was not current after record_hypotheses")
        s = session(ws)
        check(s.get("stage") == "user_turn" and s.get("handoff") == "question", f"not handed off: {s}")
        check([h["id"] for h in s.get("hypotheses", [])] == ["H1", "H2", "H3"], f"hypotheses: {s}")


def pi_whole_loop(kind, binary, ws):
    """/debug, probe, hand-off; the person runs the program; /debug-proceed
    reads the evidence and fixes; /debug-done removes the probe and the
    cleanup is verified."""
    def insert(body):
        block = probe_block(last_tool_result(body))
        indented = "\n".join("    " + line for line in block.splitlines())
        return edit_app(kind, ws, BUGGY_LINE, indented + "\n" + BUGGY_LINE)

    def remove(body):
        source = ws.read("app.py")
        match = re.search(r"(?ms)^    # #region debug-probe.*?# #endregion debug-probe \S+\n", source)
        check(match, "the probe block is not in app.py at cleanup")
        return edit_app(kind, ws, match.group(0), "")

    lab_script = script(kind, [
        Turn(PROBLEM, [
            act(kind, "record_hypotheses", {"hypotheses": HYPOTHESES}),
            act(kind, "probe_snippet", {"file": "app.py", "hypothesisId": "H1", "variables": ["prices"]}),
            insert,
            act(kind, "hand_off_to_user", HAND_OFF),
            say("Run `python3 app.py 3 4 5`, then /debug-proceed."),
        ], name="start"),
        Turn("pressed Proceed", [
            lambda body: act(kind, "read_logs", read_round_one_logs(body).args),
            lambda body: edit_app(kind, ws, BUGGY_LINE, "    return sum(prices)"),
            act(kind, "hand_off_to_user", {"mode": "reproduce", "steps": ["Run `python3 app.py 3 4 5` again"],
                                      "plan": [{"id": "E2", "method": "user_report",
                                                "instructions": ["the total printed"]}]}),
            say("Fixed: please run it again."),
        ], name="proceed"),
        Turn("marked the bug fixed", [remove, say("Probe removed.")], name="cleanup"),
    ])
    with Lab(lab_script) as lab:
        pi = kind(binary, ws, lab.port)
        pi.install()
        pi.prompt(f"/debug {PROBLEM}")
        s = session(ws)
        check(s.get("stage") == "user_turn" and s["probes"]["live"] == 1, f"after the hand-off: {s}")
        ran = ws.run_app("3", "4", "5")
        check("total: 9" in ran.stdout, f"the buggy program printed {ran.stdout!r}")
        # The person's words after the command reach the agent as their note.
        pi.prompt("/debug-proceed it printed total: 9", resume=True)
        read = [r for r in requests_of(lab, "proceed")]
        check(len(read) >= 2 and '"prices"' in last_tool_result(read[1]["body"]),
              "the model did not read the probe's line after Proceed")
        check("> it printed total: 9" in json.dumps(read[0]["body"]),
              "the person's words after /debug-proceed did not reach the kickoff")
        check("return sum(prices)\n" in ws.read("app.py"), "the fix was not made")
        pi.prompt("/debug-done", resume=True)
        one_current_board_each(lab)
        check(BOARD not in ws.read("app.py") and "debug-probe" not in ws.read("app.py"),
              "the probe is still in app.py")
        s = session(ws)
        check(not s.get("active"), f"the session did not end after a verified cleanup: {s}")
        check(ws.sidecar("check", check_rc=False).returncode == 0, "`debug-sidecar check` found probes")
        # The session's fix certificate holds against the tree it left.
        ws.sidecar("certificate", "--out", "fix.json")
        verified = ws.sidecar("check", "--certificate", "fix.json", "--json", check_rc=False)
        check(verified.returncode == 0, f"the certificate does not hold: {verified.stdout}")
        certificate = json.loads(ws.read("fix.json"))
        check([p["id"] for p in certificate["cleanup"]["probes"]] == ["p1"]
              and certificate["observations"][0]["text"] == "it printed total: 9",
              f"the certificate: {certificate}")


def pi_woken(kind, binary, ws):
    """An idle session (RPC mode, as an editor embeds pi): /debug, probe,
    hand-off; the person looks away from the choice, reproduces and runs
    `debug-sidecar proceed` in a terminal: the extension takes the wake and
    the agent's next turn starts by itself with round 1's kickoff. Round 2
    ends with Mark fixed pressed in an editor (serve, as VS Code), which
    wakes it again; the session ends after 2 rounds."""
    def insert(body):
        block = probe_block(last_tool_result(body))
        indented = "\n".join("    " + line for line in block.splitlines())
        return edit_app(kind, ws, BUGGY_LINE, indented + "\n" + BUGGY_LINE)

    def remove(body):
        source = ws.read("app.py")
        match = re.search(r"(?ms)^    # #region debug-probe.*?# #endregion debug-probe \S+\n", source)
        check(match, "the probe block is not in app.py at cleanup")
        return edit_app(kind, ws, match.group(0), "")

    lab_script = script(kind, [
        Turn(PROBLEM, [
            act(kind, "probe_snippet", {"file": "app.py", "hypothesisId": "H1", "variables": ["prices"]}),
            insert,
            act(kind, "hand_off_to_user", HAND_OFF),
            say("Run `python3 app.py 3 4 5`, then Proceed."),
        ], name="start"),
        Turn("pressed Proceed", [
            lambda body: act(kind, "read_logs", read_round_one_logs(body).args),
            lambda body: edit_app(kind, ws, BUGGY_LINE, "    return sum(prices)"),
            act(kind, "hand_off_to_user", {"mode": "reproduce", "steps": ["Run `python3 app.py 3 4 5` again"]}),
            say("Fixed: please run it again."),
        ], name="woken"),
        Turn("marked the bug fixed", [remove, say("Probe removed.")], name="fixed"),
    ])
    with Lab(lab_script) as lab:
        host = kind(binary, ws, lab.port)
        host.install()
        rpc = RpcSession(host)
        try:
            rpc.prompt(f"/debug {PROBLEM}")
            rpc.wait_for("agent_end", 1, 60, "the first turn")
            time.sleep(0.5)
            check(session(ws).get("stage") == "user_turn", f"after the hand-off: {session(ws)}")
            ws.run_app("3", "4", "5")
            pressed = time.monotonic()
            out = ws.sidecar("proceed", "it printed 9")
            woken = wait_requests(lab, "woken", 15)
            check(woken, f"Proceed in a terminal did not wake {kind.name}: {out.stdout!r}")
            record_wake_time(kind.name, woken[0]["at"] - pressed)
            name = "pi" if kind.name == "pi" else "oh-my-pi"
            check(f"(woken in {name})" in out.stdout,
                  f"the terminal does not say {name} was woken: {out.stdout!r}")
            check_kickoff_names_round(request_text(woken[0]["body"]), 1, "the woken turn")
            check("it printed 9" in request_text(woken[0]["body"]), "the note did not reach the model")
            rpc.wait_for("agent_end", 2, 60, "the woken turn")
            time.sleep(0.5)
            check(any("pressed Proceed outside the chat" in n for n in rpc.notices()),
                  f"the person was not told why the turn started: {rpc.notices()}")
            ws.run_app("3", "4", "5")
            pressed = time.monotonic()
            done = ask_serve(ws, "debug/done", {}, host="vscode")
            check_editor_wake(done, name)
            fixed = wait_requests(lab, "fixed", 15)
            check(fixed, f"Mark fixed in an editor did not wake {kind.name}")
            record_wake_time(kind.name, fixed[0]["at"] - pressed)
            rpc.wait_for("agent_end", 3, 60, "the cleanup turn")
            time.sleep(0.5)
            s = session(ws)
            check(not s.get("active"), f"the session did not end after a verified cleanup: {s}")
            check_rounds("\n".join(rpc.notices()), 2, "the woken session")
            check(not lab_script.unplayed(), f"unplayed turns: {lab_script.unplayed()}")
            one_current_board_each(lab)
        finally:
            rpc.close()


def serve_pid(ws):
    path = os.path.join(ws.root, ".debug-sidecar", "ingest.json")
    for _ in range(100):
        try:
            with open(path) as f:
                return json.load(f)["pid"]
        except (OSError, ValueError, KeyError):
            time.sleep(0.1)
    raise Failure("no ingest.json: the extension's sidecar never started serving")


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purpose.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def pi_killed_mid_turn(kind, binary, ws):
    """The host is killed while a tool runs: its sidecar exits by itself."""
    lab_script = script(kind, [Turn(PROBLEM, [act(kind, "bash", {"command": "sleep 60"}), say("done")],
                              name="start")])
    with Lab(lab_script) as lab:
        pi = kind(binary, ws, lab.port)
        pi.install()
        run = pi.start(f"/debug {PROBLEM}")
        try:
            pid = serve_pid(ws)
            deadline = time.monotonic() + 60
            while not requests_of(lab, "start") and time.monotonic() < deadline:
                time.sleep(0.1)
            check(requests_of(lab, "start"), "the model was never asked")
            time.sleep(1)
            check(alive(pid), "the sidecar ended before the host did")
            os.kill(run.pid, signal.SIGKILL)
            run.wait(timeout=10)
        finally:
            if run.poll() is None:
                run.kill()
        for _ in range(100):
            if not alive(pid):
                break
            time.sleep(0.1)
        check(not alive(pid), f"the sidecar (pid {pid}) outlived the killed host")
        check(session(ws).get("stage") == "investigating", "the session did not survive the host")


def omp_todos(kind, binary, ws):
    """oh-my-pi's todo tool: its list reaches the sidecar's progress."""
    lab_script = script(kind, [Turn(PROBLEM, [
        act(kind, "todo", {"op": "init", "list": [
            {"phase": "Debug", "items": ["Read total()", "Place a probe", "Hand off"]}]}),
        act(kind, "todo", {"op": "done", "task": "Read total()"}),
        act(kind, "todo", {"op": "start", "task": "Place a probe"}),
        act(kind, "hand_off_to_user", {"mode": "question", "steps": ["Say which prices you used"],
                                       "message": "Which prices?"}),
        say("Which prices did you use?"),
    ], name="start")])
    with Lab(lab_script) as lab:
        pi = kind(binary, ws, lab.port)
        pi.install()
        pi.prompt(f"/debug {PROBLEM}")
        one_current_board_each(lab)
        view = ask_serve(ws, "progress/view")
        got = [(t.get("content"), t.get("status")) for t in view.get("todos", [])]
        check(got == [("Read total()", "completed"), ("Place a probe", "in_progress"),
                      ("Hand off", "pending")], f"progress/view's todos: {view}")


ALL = [
    (name, host, play)
    for host in ("pi", "omp")
    for name, play in [
        ("stubborn model", pi_stubborn),
        ("session started elsewhere", pi_started_elsewhere),
        ("whole loop", pi_whole_loop),
        ("killed mid-turn", pi_killed_mid_turn),
        ("Proceed outside the chat wakes the idle session", pi_woken),
    ]
] + [("todos reach progress", "omp", omp_todos),
      ("whole loop", "pi-subagents", pi_whole_loop)]
