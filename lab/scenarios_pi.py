"""The lab's scenarios for pi with the extension in `editors/pi`: each plays
a person and a scripted model through real pi runs in print mode and
asserts on what the model received, what the person saw and
`debug-sidecar status --json`."""

import glob
import json
import os
import re
import signal
import time

from harness import (REPO, check_editor_wake, ask_serve, check, check_kickoff_names_round, check_rounds, Failure,
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




def agent_changes(path):
    """The `agents/changed` records the extension's sidecar announced, in order."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    return [n["params"]["record"] for n in lines if n.get("method") == "agents/changed"]


def agent_events(path):
    """The `agents/event` records the extension sent its sidecar, in order."""
    if not os.path.exists(path):
        return []
    with open(path) as f:
        lines = [json.loads(line) for line in f if line.strip()]
    return [n["params"] for n in lines if n.get("sent") == "agents/event"]


# The records a real pi-subagents session sent (the background scenario),
# which the VS Code browser test replays into the Subagents view.
SUBAGENTS_FIXTURE = os.path.join(REPO, "editors", "vscode", "browser", "fixtures", "pi-subagents.jsonl")


def fixture_shape(events):
    """What the browser test relies on in a stream of `agents/event`
    records, by task: each subagent's type, its kinds in order (the
    `update`s, whose count depends on timing, left out), its end and its
    questions."""
    by_id = {}
    for event in events:
        seen = by_id.setdefault(event["id"], {"kinds": [], "questions": []})
        for field in ("type", "description", "result", "error"):
            if event.get(field) is not None:
                seen[field] = event[field]
        if event["kind"] != "update":
            seen["kinds"].append(event["kind"])
        if event.get("question"):
            seen["questions"].append(event["question"])
    return sorted(by_id.values(), key=lambda s: s.get("description") or "")


def check_fixture(events):
    """The committed fixture is still what the host sends (by shape);
    UPDATE_FIXTURES=1 writes this run's records as the fixture."""
    if os.environ.get("UPDATE_FIXTURES") == "1":
        os.makedirs(os.path.dirname(SUBAGENTS_FIXTURE), exist_ok=True)
        with open(SUBAGENTS_FIXTURE, "w") as f:
            f.writelines(json.dumps(e, sort_keys=True) + "\n" for e in events)
    with open(SUBAGENTS_FIXTURE) as f:
        committed = [json.loads(line) for line in f if line.strip()]
    check(fixture_shape(committed) == fixture_shape(events),
          f"{os.path.relpath(SUBAGENTS_FIXTURE, REPO)} is not what pi-subagents sends now "
          f"(rerun this scenario with UPDATE_FIXTURES=1 and review the diff): "
          f"committed {fixture_shape(committed)}, now {fixture_shape(events)}")


def statuses(changes, agent_id):
    """The statuses one subagent went through, each once in a row."""
    seen = []
    for record in changes:
        if record["id"] == agent_id and (not seen or seen[-1] != record["status"]):
            seen.append(record["status"])
    return seen


def by_id(ws, agent_id):
    """The `agents/list` record named `agent_id`, or {}."""
    return {r["id"]: r for r in ask_serve(ws, "agents/list")["agents"]}.get(agent_id, {})


def by_task(ws, marker):
    """The `agents/list` record whose description (the task asked) holds
    `marker`: pi-subagents names a child by its run id."""
    for record in ask_serve(ws, "agents/list")["agents"]:
        if marker in (record.get("description") or ""):
            return record
    return {}


def stopped_with_host(run, record, how, what):
    """Sends `how` to the host `run` once `record()` (its `agents/list`
    record) is running, and waits for the host to end; then up to 10 s for
    the record to be stopped. Returns the record as it ended."""
    try:
        deadline = time.monotonic() + 60
        running = False
        while time.monotonic() < deadline and not running:
            time.sleep(0.2)
            running = record().get("status") == "running"
        check(running, f"{what} never ran")
        run.send_signal(how)
        run.wait(timeout=30)
    finally:
        if run.poll() is None:
            run.kill()
    deadline = time.monotonic() + 10
    found = record()
    while time.monotonic() < deadline and found.get("status") != "stopped":
        time.sleep(0.2)
        found = record()
    return found


def omp_subagents(kind, binary, ws):
    """oh-my-pi's own subagents (its `task` tool) reach the sidecar's records:
    two at once, one completing with its result and one failing with its
    error; one that asks its parent a question and gets the answer; one
    that delegates in turn; one still running when the host is stopped."""
    trace = os.path.join(ws.base, "notifications.jsonl")
    lab_script = script(kind, [
        Turn("PARENT delegate", [
            act(kind, "task", {"context": "the cart", "tasks": [
                {"name": "Alpha", "agent": "task", "task": "CHILDA count the items"},
                {"name": "Beta", "agent": "task", "task": "CHILDB read the config"}]}),
            # Subagents in the foreground (async off below): the call
            # returns with both ends, as a `hub wait` may not.
            say("Alpha counted 3; Beta failed."),
        ], name="parent"),
        Turn("CHILDA", [act(kind, "bash", {"command": "echo 3"}),
                        act(kind, "yield", {"data": "Alpha counted 3 items"}), say("done")], name="alpha",
             any_order=True),
        Turn("CHILDB", [act(kind, "yield", {"error": "Beta could not read config.toml"}), say("done")],
             name="beta", any_order=True),
    ])
    with Lab(lab_script) as lab:
        pi = kind(binary, ws, lab.port)
        pi.install()
        pi.env["DEBUG_SIDECAR_TRACE_NOTIFICATIONS"] = trace
        foreground = os.path.join(pi.agent_dir, "config.yml")
        with open(foreground, "w") as f:
            f.write("async:\n  enabled: false\n")
        pi.prompt("PARENT delegate the checks")
        os.remove(foreground)
        check(not lab_script.unplayed(), f"unplayed turns: {lab_script.unplayed()}")
        # What the host itself reported to the parent's model.
        waited = "\n".join(last_tool_result(r["body"]) for r in requests_of(lab, "parent"))
        check("Alpha counted 3 items" in waited and "Beta could not read config.toml" in waited,
              f"the host did not report both subagents' ends: {waited[-800:]!r}")
        records = {r["id"]: r for r in ask_serve(ws, "agents/list")["agents"]}
        check(set(records) == {"Alpha", "Beta"},
              f"agents/list holds {sorted(records)}, not the two subagents (a copy of the "
              "extension inside a subagent must not report itself)")
        alpha, beta = records["Alpha"], records["Beta"]
        check(alpha["status"] == "completed" and alpha["result"] == "Alpha counted 3 items",
              f"Alpha: {alpha}")
        check((alpha.get("toolUses") or 0) >= 2 and (alpha.get("turns") or 0) >= 1,
              f"Alpha's work figures: {alpha}")
        check((alpha.get("usage") or {}).get("output", 0) > 0, f"Alpha's usage: {alpha}")
        check(alpha["type"] == "task" and "CHILDA" in (alpha.get("description") or ""),
              f"Alpha's type and description: {alpha}")
        check(beta["status"] == "error" and beta["error"] == "Beta could not read config.toml",
              f"Beta: {beta}")
        changes = agent_changes(trace)
        for agent_id, final in (("Alpha", "completed"), ("Beta", "error")):
            # Queued first when the host listed it before it started (a
            # foreground subagent may start first), then running, then its end.
            went = statuses(changes, agent_id)
            check(went in (["queued", "running", final], ["running", final]),
                  f"{agent_id}'s agents/changed statuses: {went}")

    # A question to the parent, answered.
    trace_q = os.path.join(ws.base, "notifications-q.jsonl")
    lab_script = script(kind, [
        Turn("PARENT ask", [
            act(kind, "task", {"context": "the cart", "tasks": [
                {"name": "Delta", "agent": "task", "task": "CHILDD check the discount"}]}),
            act(kind, "hub", {"op": "wait"}),
            act(kind, "hub", {"op": "send", "to": "Delta", "message": "Use cart.py"}),
            act(kind, "hub", {"op": "wait"}),
            say("Delta is done."),
        ], name="parent-q"),
        Turn("CHILDD", [act(kind, "hub", {"op": "send", "to": "Main", "message": "Which file holds the discount?",
                                          "await": True}),
                        act(kind, "yield", {"data": "the discount is in cart.py"}), say("done")],
             name="delta"),
    ])
    with Lab(lab_script) as lab:
        pi = kind(binary, ws, lab.port)
        pi.install()
        pi.env["DEBUG_SIDECAR_TRACE_NOTIFICATIONS"] = trace_q
        pi.prompt("PARENT ask the subagent")
        check(not lab_script.unplayed(), f"unplayed turns: {lab_script.unplayed()}")
        changes = agent_changes(trace_q)
        asked = [r.get("pendingQuestion") for r in changes if r["id"] == "Delta"]
        check("Which file holds the discount?" in asked,
              f"Delta's question never reached its record: {asked}")
        delta = {r["id"]: r for r in ask_serve(ws, "agents/list")["agents"]}["Delta"]
        check(delta["status"] == "completed" and not delta.get("pendingQuestion"),
              f"Delta after its answer: {delta}")

    # A subagent that delegates in turn (oh-my-pi allows one level by default).
    trace_n = os.path.join(ws.base, "notifications-n.jsonl")
    lab_script = script(kind, [
        Turn("PARENT nest", [
            act(kind, "task", {"context": "c", "tasks": [
                {"name": "Outer", "agent": "task", "task": "CHILDO delegate the count"}]}),
            say("Outer is done."),
        ], name="parent-n"),
        Turn("CHILDO", [act(kind, "task", {"context": "c2", "tasks": [
                            {"name": "Inner", "agent": "task", "task": "CHILDI count the items"}]}),
                        act(kind, "yield", {"data": "outer done"}), say("done")], name="outer"),
        Turn("CHILDI", [act(kind, "yield", {"data": "inner counted 3"}), say("done")], name="inner"),
    ])
    with Lab(lab_script) as lab:
        pi = kind(binary, ws, lab.port)
        pi.install()
        pi.env["DEBUG_SIDECAR_TRACE_NOTIFICATIONS"] = trace_n
        with open(foreground, "w") as f:
            f.write("async:\n  enabled: false\n")
        pi.prompt("PARENT nest the task")
        os.remove(foreground)
        check(not lab_script.unplayed(), f"unplayed turns: {lab_script.unplayed()}")
        records = {r["id"]: r for r in ask_serve(ws, "agents/list")["agents"]}
        outer, inner = records.get("Outer", {}), records.get("Outer.Inner", {})
        check(outer.get("status") == "completed" and outer.get("result") == "outer done"
              and outer.get("description") == "CHILDO delegate the count", f"Outer: {outer}")
        check(inner.get("status") == "completed" and inner.get("result") == "inner counted 3"
              and inner.get("description") == "CHILDI count the items" and inner.get("type") == "task",
              f"Outer's own subagent: {inner}")
        changes = agent_changes(trace_n)
        for agent_id in ("Outer", "Outer.Inner"):
            went = statuses(changes, agent_id)
            check(went in (["queued", "running", "completed"], ["running", "completed"]),
                  f"{agent_id}'s agents/changed statuses: {went}")
        # The inner one ended before the outer one did.
        ends = [r["id"] for r in changes if r["status"] == "completed"]
        check(ends.index("Outer.Inner") < ends.index("Outer"), f"the order of the ends: {ends}")

    # The host stopped while a subagent runs: nothing stays running.
    lab_script = script(kind, [
        Turn("PARENT long", [
            act(kind, "task", {"context": "c", "tasks": [
                {"name": "Gamma", "agent": "task", "task": "CHILDG wait for the build"}]}),
            act(kind, "hub", {"op": "wait"}),
            say("done"),
        ], name="parent-long"),
        Turn("CHILDG", [act(kind, "bash", {"command": "sleep 60"}),
                        act(kind, "yield", {"data": "built"}), say("done")], name="gamma"),
    ])
    with Lab(lab_script) as lab:
        pi = kind(binary, ws, lab.port)
        pi.install()
        run = pi.start("PARENT long task")
        gamma = stopped_with_host(run, lambda: by_id(ws, "Gamma"), signal.SIGTERM, "Gamma")
        check(gamma.get("status") == "stopped", f"Gamma after the host stopped: {gamma}")

    # The host killed outright (SIGKILL) says nothing: its sidecar, whose
    # input ends with it, stops what its client reported.
    lab_script = script(kind, [
        Turn("PARENT killed", [
            act(kind, "task", {"context": "c", "tasks": [
                {"name": "Epsilon", "agent": "task", "task": "CHILDE wait for the tests"}]}),
            act(kind, "hub", {"op": "wait"}),
            say("done"),
        ], name="parent-killed"),
        Turn("CHILDE", [act(kind, "bash", {"command": "sleep 60"}),
                        act(kind, "yield", {"data": "tested"}), say("done")], name="epsilon"),
    ])
    with Lab(lab_script) as lab:
        pi = kind(binary, ws, lab.port)
        pi.install()
        run = pi.start("PARENT killed task")
        epsilon = stopped_with_host(run, lambda: by_id(ws, "Epsilon"), signal.SIGKILL, "Epsilon")
        check(epsilon.get("status") == "stopped", f"Epsilon after the host was killed: {epsilon}")

def check_nested(kind, binary, ws, background):
    """A pi-subagents child whose agent may delegate (`tools: subagent`, a
    user agent of the lab's) runs a subagent of its own, in the foreground
    or the background: both reach the records, the inner one ended first."""
    trace = os.path.join(ws.base, f"notifications-nested-{background}.jsonl")
    agents = os.path.join(ws.home, ".pi", "agent", "agents")
    os.makedirs(agents, exist_ok=True)
    with open(os.path.join(agents, "planner.md"), "w") as f:
        f.write("---\nname: planner\ndescription: Delegates the work\ntools: subagent, bash\n---\n\nYou delegate.\n")
    outer_task, inner_task = f"CHILDO{int(background)} delegate the count", f"CHILDI{int(background)} count the items"
    lab_script = script(kind, [
        Turn("PARENT nest", [act(kind, "subagent", {"agent": "planner", "task": outer_task, "async": background}),
                             say("Outer is on it.")], name="parent-n"),
        Turn(outer_task.split()[0], [act(kind, "subagent", {"agent": "delegate", "task": inner_task, "async": False}),
                                     say("outer done")], name="outer"),
        Turn(inner_task.split()[0], [act(kind, "bash", {"command": "echo 3"}), say("inner counted 3")], name="inner"),
    ])
    with Lab(lab_script) as lab:
        pi = kind(binary, ws, lab.port)
        pi.install()
        pi.env["DEBUG_SIDECAR_TRACE_NOTIFICATIONS"] = trace
        session = RpcSession(pi)
        try:
            session.prompt("PARENT nest the task")
            found = wait_ended(ws, [outer_task, inner_task], 90)
        finally:
            session.close()
            end_runners(ws)
        check(not lab_script.unplayed(), f"unplayed turns: {lab_script.unplayed()}")
        outer, inner = found[outer_task], found[inner_task]
        check(outer.get("status") == "completed" and outer.get("result") == "outer done"
              and outer.get("type") == "planner", f"the outer subagent: {outer}")
        check(inner.get("status") == "completed" and inner.get("type") == "delegate"
              and inner.get("description") == inner_task, f"the outer one's own subagent: {inner}")
        changes = agent_changes(trace)
        check(statuses(changes, inner["id"]) == ["running", "completed"],
              f"the inner one's agents/changed statuses: {statuses(changes, inner['id'])}")
        ends = [r["id"] for r in changes if r["status"] == "completed"]
        check(ends.index(inner["id"]) < ends.index(outer["id"]), f"the order of the ends: {ends}")


def pi_subagents(kind, binary, ws):
    """pi-subagents' subagents (its `subagent` tool in the foreground, pi
    0.85 on Node 24) reach the sidecar's records: one completing with its
    output, one failing with the host's error; one still running when the
    host is stopped, and one when it is killed."""
    trace = os.path.join(ws.base, "notifications.jsonl")
    lab_script = script(kind, [
        Turn("PARENT delegate", [
            act(kind, "subagent", {"agent": "delegate", "task": "CHILDA count the items", "async": False}),
            act(kind, "subagent", {"agent": "delegate", "task": "CHILDB read the config", "async": False}),
            say("Alpha counted 3; Beta failed."),
        ], name="parent"),
        Turn("CHILDA", [act(kind, "bash", {"command": "echo 3"}), say("Alpha counted 3 items")], name="alpha"),
        # An empty last reply: pi-subagents fails the child ("no output").
        Turn("CHILDB", [say("")], name="beta"),
    ])
    with Lab(lab_script) as lab:
        pi = kind(binary, ws, lab.port)
        pi.install()
        pi.env["DEBUG_SIDECAR_TRACE_NOTIFICATIONS"] = trace
        pi.prompt("PARENT delegate the checks")
        check(not lab_script.unplayed(), f"unplayed turns: {lab_script.unplayed()}")
        # What the host itself reported to the parent's model.
        told = "\n".join(last_tool_result(r["body"]) for r in requests_of(lab, "parent"))
        check("Alpha counted 3 items" in told and "no output" in told,
              f"the host did not report both subagents' ends: {told[-800:]!r}")
        records = ask_serve(ws, "agents/list")["agents"]
        check(len(records) == 2, f"agents/list holds {len(records)} records, not the two subagents: {records}")
        alpha, beta = by_task(ws, "CHILDA"), by_task(ws, "CHILDB")
        check(alpha.get("status") == "completed" and alpha.get("result") == "Alpha counted 3 items",
              f"Alpha: {alpha}")
        check(alpha.get("type") == "delegate" and alpha.get("description") == "CHILDA count the items",
              f"Alpha's type and description: {alpha}")
        check((alpha.get("toolUses") or 0) >= 1 and (alpha.get("turns") or 0) >= 2,
              f"Alpha's work figures: {alpha}")
        check((alpha.get("usage") or {}).get("output", 0) > 0, f"Alpha's usage: {alpha}")
        check(beta.get("status") == "error" and "no output" in (beta.get("error") or ""), f"Beta: {beta}")
        changes = agent_changes(trace)
        for record, final in ((alpha, "completed"), (beta, "error")):
            went = statuses(changes, record["id"])
            check(went in (["queued", "running", final], ["running", final]),
                  f"{record.get('description')}'s agents/changed statuses: {went}")

    # pi-subagents keeps a model whose child said nothing out of later runs
    # (a cold-start guess): Beta's model is the lab's, so that is forgotten.
    os.remove(os.path.join(ws.base, "subagents", "model-exclusions.json"))
    check_nested(kind, binary, ws, background=False)
    # Still running when the host is stopped (SIGTERM), then killed (SIGKILL).
    for how, marker in ((signal.SIGTERM, "CHILDG"), (signal.SIGKILL, "CHILDE")):
        lab_script = script(kind, [
            Turn(f"PARENT long {marker}", [
                act(kind, "subagent", {"agent": "delegate", "task": f"{marker} wait for the build",
                                       "async": False}),
                say("done"),
            ], name="parent-long"),
            Turn(marker, [act(kind, "bash", {"command": "sleep 60"}), say("built")], name="child"),
        ])
        with Lab(lab_script) as lab:
            pi = kind(binary, ws, lab.port)
            pi.install()
            run = pi.start(f"PARENT long {marker} task")
            child = stopped_with_host(run, lambda: by_task(ws, marker), how, marker)
            check(child.get("status") == "stopped", f"{marker} after the host got {how.name}: {child}")


def runner_pids(ws):
    """The background runners pi-subagents started that its status files
    say still run, and that are still such runners (a pid can be reused)."""
    pids = []
    for status in glob.glob(os.path.join(ws.base, "subagents", "async-subagent-runs", "*", "status.json")):
        try:
            with open(status) as f:
                run = json.load(f)
            with open(f"/proc/{run.get('pid')}/cmdline", "rb") as f:
                cmdline = f.read()
        except (OSError, ValueError):
            continue
        if run.get("state") in ("queued", "running") and b"subagent-runner" in cmdline:
            pids.append(run["pid"])
    return pids


def end_runners(ws):
    """Background runners outlive their host by design: the lab ends them
    (and the children in their process group), so none reaches a later
    scenario's model."""
    for pid in runner_pids(ws):
        try:
            if os.getpgid(pid) == pid:
                os.killpg(pid, signal.SIGKILL)
            else:
                os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def wait_ended(ws, markers, timeout):
    """The `agents/list` records whose task holds each marker, once every
    one has ended (or as they are at `timeout`)."""
    deadline = time.monotonic() + timeout
    while True:
        found = {m: by_task(ws, m) for m in markers}
        ended = all(r.get("status") in ("completed", "error", "stopped", "aborted") for r in found.values())
        if ended or time.monotonic() > deadline:
            return found
        time.sleep(0.2)


def pi_subagents_background(kind, binary, ws):
    """pi-subagents' background runs (its default) in a session that stays
    open, as an interactive one does: a single run and a workflow of two
    children at once, followed from start to end (one completing with its
    output, one failing with its error), as the host reports them to the
    parent's model; one that asks its parent a question and gets the answer;
    then one still running when the host is stopped."""
    trace = os.path.join(ws.base, "notifications.jsonl")
    workflow = ('const r = await runs.all(['
                '{ key: "a", agent: "delegate", task: "CHILDA count the items" }, '
                '{ key: "b", agent: "delegate", task: "CHILDB read the config" }]); '
                'return r.map(x => x.output);')
    lab_script = script(kind, [
        Turn("PARENT delegate", [
            act(kind, "subagent", {"agent": "delegate", "task": "CHILDS sum the prices"}),
            act(kind, "subagent", {"workflowScript": workflow}),
            say("Three subagents run in the background."),
        ], name="parent"),
        Turn("CHILDS", [act(kind, "bash", {"command": "sleep 1; echo 12"}), say("Solo summed 12")], name="solo",
             any_order=True),
        Turn("CHILDA", [act(kind, "bash", {"command": "echo 3"}), say("Alpha counted 3 items")], name="alpha",
             any_order=True),
        # An empty last reply: pi-subagents fails the child ("no output").
        Turn("CHILDB", [say("")], name="beta", any_order=True),
    ])
    markers = ("CHILDS", "CHILDA", "CHILDB")
    with Lab(lab_script) as lab:
        pi = kind(binary, ws, lab.port)
        pi.install()
        pi.env["DEBUG_SIDECAR_TRACE_NOTIFICATIONS"] = trace
        session = RpcSession(pi)
        try:
            session.prompt("PARENT delegate the checks")
            found = wait_ended(ws, markers, 90)
            # The host's own word to the parent's model: each run's completion.
            deadline = time.monotonic() + 30
            told = ""
            while time.monotonic() < deadline and not ("Solo summed 12" in told and "no output" in told):
                time.sleep(0.2)
                told = "\n".join(request_text(r["body"]) for r in lab.requests if r.get("body"))
        finally:
            session.close()
            end_runners(ws)
        check(not lab_script.unplayed(), f"unplayed turns: {lab_script.unplayed()}")
        check("Solo summed 12" in told and "Alpha counted 3 items" in told and "no output" in told,
              f"the host did not tell the parent's model every run's end: {told[-800:]!r}")
        solo, alpha, beta = (found[m] for m in markers)
        check(len(ask_serve(ws, "agents/list")["agents"]) == 3,
              f"agents/list does not hold exactly the three subagents: {ask_serve(ws, 'agents/list')}")
        check(solo.get("status") == "completed" and solo.get("result") == "Solo summed 12", f"Solo: {solo}")
        check(solo.get("type") == "delegate" and solo.get("description") == "CHILDS sum the prices",
              f"Solo's type and description (the call's own task): {solo}")
        check((solo.get("toolUses") or 0) >= 1 and (solo.get("turns") or 0) >= 2
              and (solo.get("usage") or {}).get("output", 0) > 0, f"Solo's work figures: {solo}")
        check(alpha.get("status") == "completed" and alpha.get("result") == "Alpha counted 3 items",
              f"Alpha: {alpha}")
        check(alpha.get("type") == "delegate" and alpha.get("description") == "CHILDA count the items",
              f"Alpha's type and description (its session name, inside the workflow): {alpha}")
        check(beta.get("status") == "error" and "no output" in (beta.get("error") or ""), f"Beta: {beta}")
        changes = agent_changes(trace)
        for record, final in ((solo, "completed"), (alpha, "completed"), (beta, "error")):
            went = statuses(changes, record["id"])
            check(went == ["queued", "running", final],
                  f"{record.get('description')}'s agents/changed statuses: {went}")

    # A question to the parent (`contact_supervisor`), answered (`subagent_supervisor` reply).
    os.remove(os.path.join(ws.base, "subagents", "model-exclusions.json"))
    trace_q = os.path.join(ws.base, "notifications-q.jsonl")
    lab_script = script(kind, [
        Turn("PARENT ask", [act(kind, "subagent", {"agent": "delegate", "task": "CHILDQ check the discount"}),
                            say("It runs in the background.")], name="parent-q"),
        Turn("CHILDQ", [act(kind, "contact_supervisor", {"reason": "need_decision",
                                                         "message": "Which file holds the discount?"}),
                        say("the discount is in cart.py")], name="delta"),
        Turn("Which file holds the discount?", [
            act(kind, "subagent_supervisor", {"action": "reply", "message": "Use cart.py"}),
            say("Answered.")], name="answer"),
    ])
    with Lab(lab_script) as lab:
        pi = kind(binary, ws, lab.port)
        pi.install()
        pi.env["DEBUG_SIDECAR_TRACE_NOTIFICATIONS"] = trace_q
        session = RpcSession(pi)
        try:
            session.prompt("PARENT ask the subagent")
            delta = wait_ended(ws, ["CHILDQ"], 90)["CHILDQ"]
        finally:
            session.close()
            end_runners(ws)
        check(not lab_script.unplayed(), f"unplayed turns: {lab_script.unplayed()}")
        went = [(r["status"], r.get("pendingQuestion")) for r in agent_changes(trace_q) if r["id"] == delta.get("id")]
        asked = [i for i, (_, q) in enumerate(went) if q == "Which file holds the discount?"]
        check(asked, f"the question never reached the record: {went}")
        # The reply clears it while the child still runs, not only its end.
        check(("running", None) in went[asked[-1]:], f"the question outlived its answer: {went}")
        check_fixture(agent_events(trace) + agent_events(trace_q))
        check(delta.get("status") == "completed" and not delta.get("pendingQuestion")
              and delta.get("result") == "the discount is in cart.py", f"the child after its answer: {delta}")

    check_nested(kind, binary, ws, background=True)

    # Still running when the host is stopped: the host follows it no more.
    lab_script = script(kind, [
        Turn("PARENT long", [act(kind, "subagent", {"agent": "delegate", "task": "CHILDG wait for the build"}),
                             say("It runs in the background.")], name="parent-long"),
        Turn("CHILDG", [act(kind, "bash", {"command": "sleep 60"}), say("built")], name="child"),
    ])
    with Lab(lab_script) as lab:
        pi = kind(binary, ws, lab.port)
        pi.install()
        session = RpcSession(pi)
        try:
            session.prompt("PARENT long task")
            child = stopped_with_host(session.proc, lambda: by_task(ws, "CHILDG"), signal.SIGTERM, "CHILDG")
        finally:
            session.close()
            end_runners(ws)
        check(child.get("status") == "stopped", f"CHILDG after the host got SIGTERM: {child}")



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
      ("subagents reach the records", "omp", omp_subagents),
      ("subagents reach the records", "pi-subagents", pi_subagents),
      ("background subagents reach the records", "pi-subagents", pi_subagents_background),
      ("whole loop", "pi-subagents", pi_whole_loop)]
