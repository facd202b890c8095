"""The lab's scenarios for subagents in pi's hosts: oh-my-pi's own `task`
tool and the `pi-subagents` extension (foreground, background, workflows,
nested), through the extension in `editors/pi`. Each asserts the sidecar's
`agents/list` records and the order of its `agents/changed` notifications
against what the host itself reported to the parent's model."""

import glob
import json
import os
import signal
import time

from harness import REPO, ask_serve, check
from model_server import Lab, Turn, last_tool_result, request_text, say
from pi_hosts import RpcSession
from scenarios import requests_of
from scenarios_pi import act, script


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


def check_host_stops(kind, binary, ws, turns, record):
    """The host stopped (SIGTERM), then killed outright (SIGKILL, which says
    nothing: its sidecar, whose input ends with it, stops what its client
    reported), each while its subagent runs: the lab plays `turns(marker)`,
    the host is asked `PARENT long <marker> task`, and `record(marker)` must
    be stopped once the host is gone."""
    for how, marker in ((signal.SIGTERM, "CHILDG"), (signal.SIGKILL, "CHILDE")):
        with Lab(script(kind, turns(marker))) as lab:
            pi = kind(binary, ws, lab.port)
            pi.install()
            run = pi.start(f"PARENT long {marker} task")
            child = stopped_with_host(run, lambda: record(marker), how, marker)
            check(child.get("status") == "stopped", f"{marker} after the host got {how.name}: {child}")


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
    names = {"CHILDG": "Gamma", "CHILDE": "Epsilon"}
    check_host_stops(kind, binary, ws, lambda marker: [
        Turn(f"PARENT long {marker}", [
            act(kind, "task", {"context": "c", "tasks": [
                {"name": names[marker], "agent": "task", "task": f"{marker} wait for the build"}]}),
            act(kind, "hub", {"op": "wait"}),
            say("done"),
        ], name="parent-long"),
        Turn(marker, [act(kind, "bash", {"command": "sleep 60"}),
                      act(kind, "yield", {"data": "built"}), say("done")], name="child"),
    ], lambda marker: by_id(ws, names[marker]))


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


def asked_and_answered(kind, binary, ws, marker, background, trace):
    """In a session that stays open (RPC mode), a pi-subagents child
    (foreground or background) asks its parent `Which file holds the
    discount?` (`contact_supervisor`), the parent replies (its
    `subagent_supervisor` reply) and the child ends with its answer. Checks
    the question reached the record and the reply cleared it while the child
    still ran; returns the record as it ended and all the parent's model was
    told."""
    lab_script = script(kind, [
        Turn("PARENT ask", [act(kind, "subagent", {"agent": "delegate", "task": f"{marker} check the discount",
                                                    "async": background}), say("It asks first.")], name="parent-q"),
        Turn(marker, [act(kind, "contact_supervisor", {"reason": "need_decision",
                                                       "message": "Which file holds the discount?"}),
                      say("the discount is in cart.py")], name="child"),
        Turn("Which file holds the discount?", [
            act(kind, "subagent_supervisor", {"action": "reply", "message": "Use cart.py"}),
            say("Answered.")], name="answer"),
    ])
    with Lab(lab_script) as lab:
        pi = kind(binary, ws, lab.port)
        pi.install()
        pi.env["DEBUG_SIDECAR_TRACE_NOTIFICATIONS"] = trace
        session = RpcSession(pi)
        try:
            session.prompt("PARENT ask the subagent")
            child = wait_ended(ws, [marker], 90)[marker]
        finally:
            session.close()
            end_runners(ws)
        check(not lab_script.unplayed(), f"unplayed turns: {lab_script.unplayed()}")
        told = "\n".join(request_text(r["body"]) for r in lab.requests if r.get("body"))
    went = [(r["status"], r.get("pendingQuestion")) for r in agent_changes(trace) if r["id"] == child.get("id")]
    asked = [i for i, (_, q) in enumerate(went) if q == "Which file holds the discount?"]
    check(asked, f"the question never reached the record: {went}")
    # The reply clears it while the child still runs, not only its end.
    check(("running", None) in went[asked[-1]:], f"the question outlived its answer: {went}")
    return child, told


def check_foreground_question(kind, binary, ws):
    """A foreground pi-subagents child asks its parent (`contact_supervisor`):
    pi-subagents detaches it so the parent can answer; the answer clears
    the question, and the child's end arrives as pi-subagents' message
    (`paused`: it may be resumed), its answer kept as its result."""
    trace = os.path.join(ws.base, "notifications-fq.jsonl")
    child, told = asked_and_answered(kind, binary, ws, "CHILDF", background=False, trace=trace)
    check("Detached foreground task paused" in told and "the discount is in cart.py" in told,
          f"the host did not tell the parent's model the child's end: {told[-600:]!r}")
    check(child.get("status") == "aborted" and child.get("result") == "the discount is in cart.py"
          and not child.get("pendingQuestion"), f"the detached child at its end: {child}")
    went = statuses(agent_changes(trace), child["id"])
    check(went in (["running", "aborted"], ["queued", "running", "aborted"]), f"the detached child's statuses: {went}")


def pi_subagents(kind, binary, ws):
    """pi-subagents' subagents (its `subagent` tool in the foreground, pi
    0.85 on Node 24) reach the sidecar's records: one completing with its
    output, one failing with the host's error; one that delegates in turn;
    one that asks its parent a question; one still running when the host is
    stopped, and one when it is killed."""
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
    check_foreground_question(kind, binary, ws)
    # Still running when the host is stopped: nothing stays running.
    check_host_stops(kind, binary, ws, lambda marker: [
        Turn(f"PARENT long {marker}", [
            act(kind, "subagent", {"agent": "delegate", "task": f"{marker} wait for the build",
                                   "async": False}),
            say("done"),
        ], name="parent-long"),
        Turn(marker, [act(kind, "bash", {"command": "sleep 60"}), say("built")], name="child"),
    ], lambda marker: by_task(ws, marker))


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
    delta, _ = asked_and_answered(kind, binary, ws, "CHILDQ", background=True, trace=trace_q)
    check(delta.get("status") == "completed" and not delta.get("pendingQuestion")
          and delta.get("result") == "the discount is in cart.py", f"the child after its answer: {delta}")
    check_fixture(agent_events(trace) + agent_events(trace_q))

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


ALL = [("subagents reach the records", "omp", omp_subagents),
       ("subagents reach the records", "pi-subagents", pi_subagents),
       ("background subagents reach the records", "pi-subagents", pi_subagents_background)]
