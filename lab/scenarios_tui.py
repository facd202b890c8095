"""The person's side in the interactive terminal UIs of Claude Code and
Codex (lab/tui_hosts.py drives them), against the scripted model. The
workspace is set up as a person does it: `debug-sidecar install ...
--write`, then the program started in the folder, its dialogs answered
with the keyboard. What is asserted is what the person sees (every screen
is kept), then what the model received, then the session."""

import json
import os
import re
import time

from harness import (ENDED_AFTER, Failure, ask_serve, check, check_kickoff_names_round,
                     check_rounds, record_wake_time)
from model_server import Lab, Script, Turn, call, last_tool_result, request_text, say, search
from scenarios import (HAND_OFF, again, PROBLEM, claude_names, codex_insert_probe, codex_names,
                       codex_remove_probe, function_outputs, insert_probe, patch,
                       read_round_one_logs, remove_probe, requests_of, wait_requests)
from tui_hosts import (CODEX_FORM, FORM_TITLE, MCP_DIALOG, NOT_IN_THIS_HOST, READY, TRUST, accept,
                       check_forms_whole, codex_answer, form_of, pick, wait_form, write_note)



def receipt(t, mark, choice):
    """A one-line receipt of the person's answer on some screen since
    `mark`: "You chose Proceed (...)", "You chose Mark fixed", "You replied
    (...)" (or "You chose Reply")."""
    words = r"\s+".join(map(re.escape, choice.split()))
    pattern = re.compile(r"You\s+(chose\s+" + words + (r"|replied" if choice == "Reply" else "") + ")")
    return any(pattern.search(screen) for screen in t.since(mark))


def check_host_words(t):
    """No screen outside a form names what a Claude Code user cannot press
    or type."""
    for screen in t.screens_with(re.compile("|".join(p.pattern for p, _ in NOT_IN_THIS_HOST))):
        form = form_of(screen) or []
        # Not the form, not Claude Code's own slash menu ("/debug-sidecar:debug (MCP)  …").
        outside = "\n".join(line for line in screen.split("\n")
                            if line not in form and "(MCP)" not in line)
        for pattern, what in NOT_IN_THIS_HOST:
            found = pattern.search(outside)
            check(not found, f"the screen names {what}: {found.group(0) if found else ''!r}\n"
                  + "\n".join(f"|{line}" for line in screen.split("\n")))


def proceed_kickoffs(text):
    """(run, round, lines) of every Proceed kickoff in a text the model got."""
    return re.findall(r"pressed Proceed\. Run (\S+) of round (\d+) logged (\d+) line", text)


def check_kickoff(text, note, what):
    """Round 1's Proceed kickoff: its run, its one line, the person's note."""
    check_kickoff_names_round(text, 1, what)
    for run, closed, lines in proceed_kickoffs(text):
        check(lines == "1", f"{what}: the kickoff names run {run} of round {closed} ({lines} "
              "line(s)), not round 1's run and its line")
    check(note in text, f"{what}: the person's note {note!r} did not reach the model")


def check_no_slash_commands(t):
    """No screen tells a Codex TUI user to type a `/debug…` command: the
    TUI rejects every `/` it does not know."""
    for screen in t.screens_with(re.compile(r"type\s+/debug")):
        raise Failure("the screen tells a Codex TUI user to type a /debug command, which "
                      "the TUI rejects as \"Unrecognized command\":\n" + screen)


def ended(ws):
    sessions = ws.status()
    return all(not s.get("active") for s in sessions)


# Scenarios

def first_start(kind, binary, ws):
    """A new user: `install claude --write`, then `claude` in the folder.
    The trust dialog comes first and is accepted with the keyboard; no MCP
    dialog follows (install pre-approved the server it wrote)."""
    with Lab(Script([], claude_names)) as lab:
        claude = kind(binary, ws, lab.port)
        out = claude.install()
        check("trust" in out.stdout, f"install claude does not explain trust: {out.stdout}")
        try:
            claude.start()
            t = claude.tui
            shown = t.wait_for(TRUST, 40, "the trust dialog")
            check("mcp__debug-sidecar" in shown and "hooks" in shown,
                  f"the trust dialog does not say what the folder configures:\n{t.dump()}")
            claude.first_start(approve_mcp=False)
            check(not t.shown(MCP_DIALOG), "the MCP dialog was shown")
            with open(os.path.join(ws.root, ".claude", "settings.local.json")) as f:
                local = json.load(f)
            check("debug-sidecar" not in local.get("disabledMcpjsonServers", []),
                  f"the server was declined: {local}")
            checked = ws.sidecar("install", "claude", "--check", check_rc=False)
            check(checked.returncode == 0,
                  f"install claude --check after the first start: {checked.stdout}")
        finally:
            claude.kill()


def form_script(ws, second_round):
    tools = ",".join(claude_names(x) for x in ("probe_snippet", "hand_off_to_user", "read_logs"))
    return Script([
        Turn(PROBLEM, [
            call("ToolSearch", {"query": f"select:{tools}", "max_results": 3}),
            call("probe_snippet", {"file": "app.py", "hypothesisId": "H1",
                                   "message": "prices total() receives", "variables": ["prices"]}),
            insert_probe(ws),
            call("hand_off_to_user", HAND_OFF),
        ] + second_round, name="start"),
    ], claude_names)


def form_keyboard(kind, binary, ws):
    """`/mcp__debug-sidecar__debug <problem>` typed; the model places a
    probe and hands off; the form is answered with the keyboard: Proceed
    with a note, then (round 2) Reply, then Mark fixed. Every line of each
    form is on the screen, a receipt follows each answer, and the session
    ends after 2 rounds."""
    fix = call("Edit", {"file_path": os.path.join(ws.root, "app.py"),
                        "old_string": "return sum(prices[1:])", "new_string": "return sum(prices)"})
    verifying = again(HAND_OFF, steps=["Run `python3 app.py 3 4 5` again"])
    script = form_script(ws, [
        read_round_one_logs,
        fix,
        call("hand_off_to_user", verifying),
        call("hand_off_to_user", verifying, text="argv is parsed as it should be: the slice was it."),
        remove_probe(ws),
        say("Fixed: total() skipped the first price. Every probe is removed."),
    ])
    with Lab(script) as lab:
        claude = kind(binary, ws, lab.port)
        claude.install()
        try:
            t = claude.start()
            claude.first_start()
            claude.submit(f"/mcp__debug-sidecar__debug {PROBLEM}")
            wait_form(t, 1)
            check_forms_whole(t)
            ws.run_app("3", "4", "5")
            mark = t.mark()
            pick(t, "Proceed")
            write_note(t, "it printed 9")
            accept(t)
            wait_form(t, 2)
            start = requests_of(lab, "start")
            check_kickoff(last_tool_result(start[4]["body"]), "it printed 9",
                          "Proceed in the form")
            check(receipt(t, mark, "Proceed"),
                  "no receipt on the screen after the person chose Proceed")
            ws.run_app("3", "4", "5")

            mark = t.mark()
            pick(t, "Reply")
            write_note(t, "did you check the argv parsing?")
            accept(t)
            t.wait_for("argv is parsed as it should be", 30, "the model's answer to the reply")
            wait_form(t, 2)
            reply = last_tool_result(requests_of(lab, "start")[7]["body"])
            check("did you check the argv parsing?" in reply,
                  f"the person's reply did not reach the model: {reply[:300]!r}")
            check(receipt(t, mark, "Reply"),
                  "no receipt on the screen after the person chose Reply")

            mark = t.mark()
            pick(t, "Mark fixed")
            accept(t)
            t.wait_for(ENDED_AFTER, 40, "the cleanup summary")
            check_rounds(t.settle(0.5), 2, "two hand-offs")
            check(receipt(t, mark, "Mark fixed"),
                  "no receipt on the screen after the person chose Mark fixed")
            check(not script.unplayed(), f"unplayed turns: {script.unplayed()}")
            check_forms_whole(t)
            check_host_words(t)
            check(ended(ws), f"the session did not end: {ws.status()}")
        finally:
            claude.kill()


def form_escape_then_proceed(kind, binary, ws):
    """The person closes the form with Esc, reproduces, then types
    `/mcp__debug-sidecar__debug-proceed it printed 9`: Proceed is applied
    once (the prompt hook and the MCP prompt are one command), its kickoff
    names round 1's run and the note, and two hand-offs end "after 2
    round(s)"."""
    fix = call("Edit", {"file_path": os.path.join(ws.root, "app.py"),
                        "old_string": "return sum(prices[1:])", "new_string": "return sum(prices)"})
    script = form_script(ws, [say("Run it when you can, then tell me with Proceed.")])
    script.turns.append(Turn("debug-proceed", [
        read_round_one_logs,
        fix,
        call("hand_off_to_user", again(HAND_OFF, steps=["Run `python3 app.py 3 4 5` again"])),
        remove_probe(ws),
        say("Fixed: total() skipped the first price. Every probe is removed."),
    ], name="proceed"))
    with Lab(script) as lab:
        claude = kind(binary, ws, lab.port)
        claude.install()
        try:
            t = claude.start()
            claude.first_start()
            claude.submit(f"/mcp__debug-sidecar__debug {PROBLEM}")
            wait_form(t, 1)
            t.keys("Escape")
            t.wait_for("Run it when you can", 30, "the model's line after Esc")
            t.wait_for(READY, 10, "the prompt box after Esc")
            dismissed = last_tool_result(requests_of(lab, "start")[4]["body"])
            found = re.search(r"(?<!mcp__debug-sidecar__)\bdebug-(proceed|done)\b", dismissed)
            check(not found, "after Esc the model is told of a prompt by a name Claude Code "
                  f"does not take: {dismissed[:400]!r}")
            sessions = ws.status()
            check(sessions and sessions[0].get("stage") == "user_turn",
                  f"Esc did not leave the round with the person: {sessions}")
            ws.run_app("3", "4", "5")

            claude.submit("/mcp__debug-sidecar__debug-proceed it printed 9")
            wait_form(t, 2)
            proceed = requests_of(lab, "proceed")
            check(proceed, "the proceed turn never reached the model")
            check_kickoff(request_text(proceed[0]["body"]), "it printed 9",
                          "/mcp__debug-sidecar__debug-proceed")
            ws.run_app("3", "4", "5")
            pick(t, "Mark fixed")
            accept(t)
            t.wait_for(ENDED_AFTER, 40, "the cleanup summary")
            check_rounds(t.settle(0.5), 2, "two hand-offs")
            check_forms_whole(t)
            check_host_words(t)
            check(ended(ws), f"the session did not end: {ws.status()}")
        finally:
            claude.kill()


def stubborn(kind, binary, ws):
    """A model that stops without handing off: the Stop hook sends it back
    once, then closes the round; the person is told, in words that fit
    Claude Code, and is shown no text meant for the model."""
    script = Script([
        Turn(PROBLEM, [say("It is probably the slice in total().")], name="start"),
        Turn("still yours", [say("I am confident it is the slice.")], name="nudged"),
    ], claude_names)
    with Lab(script) as lab:
        claude = kind(binary, ws, lab.port)
        claude.install()
        try:
            t = claude.start()
            claude.first_start()
            claude.submit(f"/mcp__debug-sidecar__debug {PROBLEM}")
            t.wait_for("I am confident it is the slice.", 40, "the model's second answer")
            t.wait_for(READY, 20, "the prompt box after the turn")
            t.settle(1.0)
            nudged = requests_of(lab, "nudged")
            check(nudged, "the Stop hook's nudge never reached the model")
            check(request_text(nudged[0]["body"]).count("is still yours") == 1,
                  "the model was handed the nudge more than once")
            sessions = ws.status()
            check(sessions and sessions[0].get("stage") == "user_turn",
                  f"the round was not closed: {sessions}")
            check(t.shown(re.compile(r"closed round 1|round 1 (is|was) closed")),
                  f"the person was not told the round was closed:\n{t.dump()}")
            check_host_words(t)
            # Claude Code shows the person the Stop hook's text for the model
            # ("Stop hook says: ..."): it must say whom it is for. Claude
            # Code's own label for a hook names the tool ("PostToolUse:
            # mcp__debug-sidecar__hand_off_to_user says: ..."); our words for
            # the person must not.
            # The last screen that shows the send-back, once it is drawn whole.
            said = t.screens_with("Stop hook says:")
            check(said, "the person never saw the send-back Claude Code shows")
            check("Stop hook says: To the agent, from Debug Mode:" in re.sub(r"\s+", " ", said[-1]),
                  "the send-back the person sees does not say it is for the agent:\n" + said[-1])
            ours = re.compile(r"(?<!ToolUse:mcp__debug-sidecar__)hand_off_to_user")
            for screen in t.screens_with(ours):
                # Leave out the send-back's own lines (from "Stop hook says: To
                # the agent" to the next blank line); nothing else may name it.
                kept, inside = [], False
                for line in screen.split("\n"):
                    if "Stop hook says: To the agent" in line:
                        inside = True
                    elif inside and not line.strip():
                        inside = False
                    if not inside:
                        kept.append(line)
                leak = next((line for line in kept if ours.search(line)), None)
                if leak is not None:
                    raise Failure(f"the person is shown text meant for the model: {leak.strip()!r}\n"
                                  + "\n".join(f"|{line}" for line in screen.split("\n")))
        finally:
            claude.kill()


def builtin_debug(kind, binary, ws):
    """`/debug <problem>` typed: in Claude Code that is its own built-in
    Debug skill (it turns on Claude Code's debug log). The person is told,
    on the screen, the command that starts Debug Mode here, and the model
    is not handed both Claude Code's Debug skill and Debug Mode."""
    script = Script([], claude_names)
    with Lab(script) as lab:
        claude = kind(binary, ws, lab.port)
        claude.install()
        try:
            t = claude.start()
            claude.first_start()
            mark = t.mark()
            claude.submit(f"/debug {PROBLEM}")
            t.wait_for(READY, 20, "the prompt box after /debug")
            time.sleep(3)  # what the hooks and the model answer
            t.settle(1.0)
            ours = re.compile(r"/mcp__debug-sidecar__debug\b(?!-)")
            check(any(ours.search(screen) for screen in t.since(mark)),
                  "after /debug the screen does not name /mcp__debug-sidecar__debug:\n" + t.dump())
            for r in lab.requests:
                text = request_text(r["body"] or {})
                check(not ("# Debug Skill" in text and "[DEBUG MODE" in text),
                      "the model got Claude Code's Debug skill and Debug Mode's board in one "
                      "request")
            check(all(not s.get("active") for s in ws.status()),
                  f"/debug started a Debug Mode session: {ws.status()}")
        finally:
            claude.kill()


def long_form(kind, binary, ws):
    """A hand-off with more steps than 3 lines hold (the model was told to
    keep them short; this one did not): the form still draws whole, its
    second line points to the rest, and the help line under "What now?"
    shows the rest, or says how to get it, without being cut at the edge."""
    steps = ["Open a terminal in the project folder and activate the virtualenv you use",
             "Run `python3 app.py 3 4 5` and note the total it prints on the last line",
             "Run `python3 app.py 10 20` and note that total as well, with the argv you gave",
             "Compare both totals with what a calculator says the sums are",
             "Write down anything else the program printed before the total"]
    tools = ",".join(claude_names(x) for x in ("hand_off_to_user",))
    script = Script([
        Turn(PROBLEM, [
            call("ToolSearch", {"query": f"select:{tools}", "max_results": 1}),
            call("hand_off_to_user", {"mode": "reproduce", "steps": steps}),
            say("Over to you."),
        ], name="start"),
    ], claude_names)
    with Lab(script) as lab:
        claude = kind(binary, ws, lab.port)
        claude.install()
        try:
            t = claude.start()
            claude.first_start()
            claude.submit(f"/mcp__debug-sidecar__debug {PROBLEM}")
            form = wait_form(t, 1)
            check_forms_whole(t)
            shown = "\n".join(form)
            check("(more under What now?)" in shown,
                  f"the form does not point to the steps it could not show:\n{shown}")
            help_line = next((line for line in form if line.strip().startswith("… ")), None)
            check(help_line is not None, f"no help line with the rest under What now?:\n{shown}")
            check(help_line.rstrip().endswith(")") or "5." in help_line,
                  f"the help line is cut without saying so: {help_line!r}")
            t.keys("Escape")
            t.wait_gone("Accept    Decline", 10, "the form closing on Esc")
            check(ws.status()[0].get("stage") == "user_turn", f"Esc changed the round: {ws.status()}")
        finally:
            claude.kill()


def background_run(kind, binary, ws):
    """The agent's own reproduction runs longer than Claude Code waits for a
    tool call (`CLAUDE_CODE_MCP_AUTO_BACKGROUND_MS`, 2 minutes by default,
    3 s here): Claude Code moves the call to the background and the model
    stops. That stop closes nothing and sends nothing back; the person reads
    that the agent waits for its run. When the run ends, Claude Code starts
    the agent's next turn with the result by itself: the board there says
    the round is still the agent's, and it hands off with steps. That form
    stays open past the same limit, and its answer is applied."""
    tools = ",".join(claude_names(x) for x in ("run_reproduction", "hand_off_to_user"))
    script = Script([
        Turn(PROBLEM, [
            call("ToolSearch", {"query": f"select:{tools}", "max_results": 2}),
            call("run_reproduction", {"command": ["sleep", "6"], "timeoutSec": 60}),
            say("Waiting for the run."),
        ], name="start"),
        Turn("task-notification", [
            call("hand_off_to_user", {"mode": "reproduce",
                                      "steps": ["Run `python3 app.py 3 4 5`"]}),
            say("Over to you."),
        ], name="woken"),
    ], claude_names)
    with Lab(script) as lab:
        claude = kind(binary, ws, lab.port)
        claude.env["CLAUDE_CODE_MCP_AUTO_BACKGROUND_MS"] = "3000"
        claude.install()
        try:
            t = claude.start()
            claude.first_start()
            mark = t.mark()
            claude.submit(f"/mcp__debug-sidecar__debug {PROBLEM}")
            t.wait_for("Waiting for the run.", 30, "the model's stop while its run goes on")
            t.wait_for(re.compile(r"waiting\s+for\s+its\s+own\s+run"), 10,
                       "the person told the agent waits for its run")
            check(ws.status()[0].get("stage") == "investigating",
                  f"the round was closed while the agent's run went on: {ws.status()}")
            wait_form(t, 1, timeout=40)
            woken = requests_of(lab, "woken")
            check(woken, "the run's end started no turn")
            text = request_text(woken[0]["body"])
            check("stage investigating" in text and "handed off: incomplete" not in text,
                  f"the woken turn's board does not say the round is the agent's: {text[-800:]!r}")
            check(not any("is still yours" in request_text(r["body"]) for r in lab.requests),
                  "the model was sent back while its run went on")
            check(not any(re.search(r"closed\s+round\s+1", screen) for screen in t.since(mark)),
                  "the person was told the round was closed")
            # The form outlives the same background limit (a form is never
            # moved to the background: seen open for 10 minutes by hand).
            time.sleep(4.5)
            check(FORM_TITLE in t.text(), f"the form left the screen past the limit:\n{t.dump()}")
            check(ws.status()[0].get("stage") == "user_turn", f"the round moved: {ws.status()}")
            t.keys("Escape")
            t.wait_gone("Accept    Decline", 10, "the form closing on Esc")
            s = ws.status()[0]
            check(s.get("stage") == "user_turn" and s.get("handoff") == "reproduce",
                  f"the hand-off after the run did not give the person the round: {s}")
        finally:
            claude.kill()


def woken_by_terminal(kind, binary, ws):
    """The person closes the form with Esc; Claude Code goes idle. They
    reproduce and run `debug-sidecar proceed it printed 9` in another
    terminal: the waker Claude Code runs after the turn (a Stop hook with
    `asyncRewake`) takes it, and the agent's next turn starts by itself
    with round 1's kickoff. The terminal says the agent is reading round
    1's run; the screen shows the turn. Round 2 ends the same way with Mark
    fixed pressed in an editor (`serve`), and the session after 2 rounds."""
    fix = call("Edit", {"file_path": os.path.join(ws.root, "app.py"),
                        "old_string": "return sum(prices[1:])", "new_string": "return sum(prices)"})
    script = form_script(ws, [say("Run it when you can, then tell me with Proceed.")])
    script.turns.append(Turn("pressed Proceed", [
        read_round_one_logs,
        fix,
        call("hand_off_to_user", again(HAND_OFF, steps=["Run `python3 app.py 3 4 5` again"])),
        say("Run it again; Mark fixed if it prints 12."),
    ], name="woken"))
    script.turns.append(Turn("marked the bug fixed", [
        remove_probe(ws),
        say("Fixed: total() skipped the first price. Every probe is removed."),
    ], name="fixed"))
    with Lab(script) as lab:
        claude = kind(binary, ws, lab.port)
        claude.install()
        try:
            t = claude.start()
            claude.first_start()
            claude.submit(f"/mcp__debug-sidecar__debug {PROBLEM}")
            wait_form(t, 1)
            t.keys("Escape")
            t.wait_for("Run it when you can", 30, "the model's line after Esc")
            t.wait_for(READY, 10, "the prompt box after Esc")
            time.sleep(1.0)  # the turn is over: Claude Code is idle
            ws.run_app("3", "4", "5")
            before = len(lab.requests)
            mark = t.mark()
            pressed = time.monotonic()
            out = ws.sidecar("proceed", "it printed 9")
            woken = wait_requests(lab, "woken", 15)
            check(woken, f"Proceed in a terminal did not wake Claude Code: {out.stdout!r}\n"
                  + t.dump())
            first = next(r for r in lab.requests[before:] if r["turn"] == "woken")
            record_wake_time("claude-code", first["at"] - pressed)
            check(re.search(r"reading run r1-\S+ \(woken in Claude Code\)", out.stdout),
                  f"the terminal does not say the agent is reading round 1's run: {out.stdout!r}")
            check_kickoff(request_text(woken[0]["body"]), "it printed 9",
                          "the kickoff a terminal's Proceed woke Claude Code with")
            wait_form(t, 2)
            # The woken turn as Claude Code shows it: our hook's feedback (its
            # text folded under the hook's name), then the turn itself.
            check(any(re.search(r"Stop hook feedback\s+Called debug-sidecar", screen)
                      for screen in t.since(mark)),
                  "the person's screen does not show the turn debug-sidecar woke:\n" + t.dump())
            # Round 2: Esc again, then Mark fixed pressed in an editor.
            t.keys("Escape")
            t.wait_for("Mark fixed if it prints 12", 30, "the model's line after Esc")
            t.wait_for(READY, 10, "the prompt box after Esc")
            time.sleep(1.0)
            ws.run_app("3", "4", "5")
            before = len(lab.requests)
            pressed = time.monotonic()
            done = ask_serve(ws, "debug/done", {}, host="vscode")
            wake = done.get("wake") or {}
            check(wake.get("state") == "waiting" and wake.get("wakers") == ["claude-code"],
                  f"Mark fixed in an editor does not say Claude Code wakes: {done.get('wake')}")
            fixed = wait_requests(lab, "fixed", 15)
            check(fixed, "Mark fixed in an editor did not wake Claude Code:\n" + t.dump())
            first = next(r for r in lab.requests[before:] if r["turn"] == "fixed")
            record_wake_time("claude-code", first["at"] - pressed)
            t.wait_for(ENDED_AFTER, 40, "the cleanup summary")
            check_rounds(t.settle(0.5), 2, "two hand-offs")
            check(ended(ws), f"the session did not end: {ws.status()}")
            check(not script.unplayed(), f"unplayed turns: {script.unplayed()}")
        finally:
            claude.kill()


def form_overtaken(kind, binary, ws):
    """The hand-off form is open and the person, who reproduced in another
    window, runs `debug-sidecar proceed it printed 9` there. Claude Code
    2.1.332 asks with MCP 2026-07-28's `input_required` form, which a server
    cannot withdraw: the terminal says to close the form in the chat. Esc
    there, and the hand-off call returns round 1's kickoff: the same turn
    goes on reading the evidence (no new turn, nothing applied twice);
    round 2's form is answered Mark fixed; the session ends after 2
    rounds."""
    fix = call("Edit", {"file_path": os.path.join(ws.root, "app.py"),
                        "old_string": "return sum(prices[1:])", "new_string": "return sum(prices)"})
    script = form_script(ws, [
        read_round_one_logs,
        fix,
        call("hand_off_to_user", again(HAND_OFF, steps=["Run `python3 app.py 3 4 5` again"])),
        remove_probe(ws),
        say("Fixed: total() skipped the first price. Every probe is removed."),
    ])
    with Lab(script) as lab:
        claude = kind(binary, ws, lab.port)
        claude.install()
        try:
            t = claude.start()
            claude.first_start()
            claude.submit(f"/mcp__debug-sidecar__debug {PROBLEM}")
            wait_form(t, 1)
            ws.run_app("3", "4", "5")
            before = len(lab.requests)
            out = ws.sidecar("proceed", "it printed 9")
            check("if its hand-off form is open in the chat, close it there" in out.stdout,
                  f"the terminal does not say to close the open form: {out.stdout!r}")
            t.keys("Escape")
            t.wait_gone("Accept    Decline", 10, "the form closing on Esc")
            deadline = time.monotonic() + 15
            while len(lab.requests) == before and time.monotonic() < deadline:
                time.sleep(0.05)
            check(len(lab.requests) > before, "the turn did not go on after the form was withdrawn")
            went_on = last_tool_result(lab.requests[before]["body"])
            check_kickoff(went_on, "it printed 9", "the hand-off call's result once overtaken")
            wait_form(t, 2)
            check(len(ws.status()) == 1 and ws.status()[0].get("round") == 2,
                  f"a second Proceed was applied: {ws.status()}")
            ws.run_app("3", "4", "5")
            pick(t, "Mark fixed")
            accept(t)
            t.wait_for(ENDED_AFTER, 40, "the cleanup summary")
            check_rounds(t.settle(0.5), 2, "two hand-offs")
            check(not script.unplayed(), f"unplayed turns: {script.unplayed()}")
            check(ended(ws), f"the session did not end: {ws.status()}")
        finally:
            claude.kill()


# Codex

def codex_round_one():
    """The model's round 1 in Codex: started in words, a probe, the hand-off."""
    return [
        search("debug sidecar start hypotheses probe hand off"),
        call("start_debug_session", {"problem": PROBLEM}),
        call("probe_snippet", {"file": "app.py", "hypothesisId": "H1",
                               "message": "prices total() receives", "variables": ["prices"]}),
        codex_insert_probe,
        call("hand_off_to_user", HAND_OFF),
    ]


def codex_fix_and_clean(ws):
    """After Proceed: round 1's logs, the fix, the verifying hand-off, then
    (after Mark fixed) the probe removed."""
    return [
        read_round_one_logs,
        call("apply_patch", patch("app.py", "    return sum(prices[1:])", "    return sum(prices)")),
        call("hand_off_to_user", again(HAND_OFF, steps=["Run `python3 app.py 3 4 5` again"])),
        codex_remove_probe(ws),
        say("Fixed: total() skipped the first price. Every probe is removed."),
    ]


def codex_form(kind, binary, ws):
    """Codex 0.171.0's TUI: the hooks review dialog trusted with the
    keyboard, Debug Mode asked for in words (the TUI answers a typed
    `/debug` with "Unrecognized command" before any hook sees it), the
    hand-off form answered with the keyboard (Proceed with a note, then
    Mark fixed), a receipt after each answer, no command the TUI rejects
    named, and the session ended after 2 rounds."""
    script = Script([
        Turn(PROBLEM, codex_round_one() + codex_fix_and_clean(ws), name="start"),
    ], codex_names)
    with Lab(script) as lab:
        codex = kind(binary, ws, lab.port)
        codex.install()
        try:
            t = codex.start()
            codex.trust_hooks()
            codex.submit(f"Use debug mode on this: {PROBLEM}")
            t.wait_for(CODEX_FORM, 40, "the round 1 form")
            form = t.settle(0.3)
            check("1. Run `python3 app.py 3 4 5`" in form,
                  f"the form does not show the steps:\n{t.dump()}")
            ws.run_app("3", "4", "5")
            mark = t.mark()
            codex_answer(t, "Proceed", "it printed 9")
            t.wait_for(CODEX_FORM, 40, "the round 2 form")
            check(receipt(t, mark, "Proceed"),
                  "no receipt on the screen after the person chose Proceed")
            outputs = function_outputs(lab, "start")
            kickoff = next((o for o in outputs if "pressed Proceed" in o), "")
            check_kickoff(kickoff, "it printed 9", "Proceed in Codex's form")
            ws.run_app("3", "4", "5")
            mark = t.mark()
            codex_answer(t, "Mark fixed", "it printed 12")
            t.wait_for(ENDED_AFTER, 40, "the cleanup summary")
            summary = t.settle(0.5)
            check(receipt(t, mark, "Mark fixed"),
                  "no receipt on the screen after the person chose Mark fixed")
            check_rounds(summary, 2, "two hand-offs")
            check(not script.unplayed(), f"unplayed turns: {script.unplayed()}")
            check_no_slash_commands(t)
            check(ended(ws), f"the session did not end: {ws.status()}")
        finally:
            codex.kill()


def codex_form_overtaken(kind, binary, ws):
    """Codex's form is open and the person runs `debug-sidecar proceed it
    printed 9` in another terminal. Codex 0.171.0 asks with the blocking
    `elicitation/create` but keeps a withdrawn form queued (it came back
    after round 2's, so a Mark fixed meant for round 2 answered round 1's):
    the form stays, and the terminal says to close it in the chat. Esc
    there, and the hand-off call returns round 1's kickoff: the same turn
    goes on; the session ends after 2 rounds, Mark fixed answered in round
    2's form."""
    script = Script([
        Turn(PROBLEM, codex_round_one() + codex_fix_and_clean(ws), name="start"),
    ], codex_names)
    with Lab(script) as lab:
        codex = kind(binary, ws, lab.port)
        codex.install()
        try:
            t = codex.start()
            codex.trust_hooks()
            codex.submit(f"Use debug mode on this: {PROBLEM}")
            t.wait_for(CODEX_FORM, 40, "the round 1 form")
            t.settle(0.3)
            ws.run_app("3", "4", "5")
            before = len(lab.requests)
            out = ws.sidecar("proceed", "it printed 9")
            check("if its hand-off form is open in the chat, close it there" in out.stdout,
                  f"the terminal does not say to close the open form: {out.stdout!r}")
            t.keys("Escape")
            t.wait_gone("Field 1/2", 10, "the form closing on Esc")
            deadline = time.monotonic() + 15
            while len(lab.requests) == before and time.monotonic() < deadline:
                time.sleep(0.05)
            check(len(lab.requests) > before,
                  f"the turn did not go on after the form was closed: {out.stdout!r}\n{t.dump()}")
            kickoff = next((o for o in function_outputs(lab, "start") if "pressed Proceed" in o), "")
            check_kickoff(kickoff, "it printed 9", "the hand-off call's result once overtaken")
            t.wait_for(CODEX_FORM, 40, "the round 2 form")
            check(ws.status()[0].get("round") == 2, f"a second Proceed was applied: {ws.status()}")
            ws.run_app("3", "4", "5")
            codex_answer(t, "Mark fixed", "it printed 12")
            t.wait_for(ENDED_AFTER, 40, "the cleanup summary")
            check_rounds(t.settle(0.5), 2, "two hand-offs")
            check(not script.unplayed(), f"unplayed turns: {script.unplayed()}")
            check(ended(ws), f"the session did not end: {ws.status()}")
        finally:
            codex.kill()


def codex_escape_then_proceed(kind, binary, ws):
    """Codex's TUI: the round 1 form closed with Esc, the person told what
    to type there (our commands without the slash its TUI rejects), then
    `debug-proceed it printed 9` typed: the prompt hook applies it once,
    the model's next turn starts from round 1's evidence and the note, and
    the session ends after 2 rounds."""
    script = Script([
        Turn(PROBLEM, codex_round_one() + [
            say("Run it, then type debug-proceed with what you saw."),
        ], name="start"),
        Turn("debug-proceed", codex_fix_and_clean(ws), name="proceed"),
    ], codex_names)
    with Lab(script) as lab:
        codex = kind(binary, ws, lab.port)
        codex.install()
        try:
            t = codex.start()
            codex.trust_hooks()
            codex.submit(f"Use debug mode on this: {PROBLEM}")
            t.wait_for(CODEX_FORM, 40, "the round 1 form")
            t.settle(0.3)
            mark = t.mark()
            t.keys("Escape")
            t.wait_gone("Field 1/2", 10, "the form closing on Esc")
            t.wait_for("type debug-proceed with what you saw", 30, "the model's line after Esc")
            check(any(re.search(r"You\s+closed\s+the\s+form", screen) for screen in t.since(mark)),
                  f"no receipt after the form was closed:\n{t.dump()}")
            check(any(re.search(r"type\s+debug-proceed", screen) for screen in t.since(mark)),
                  f"the person is not told what to type in Codex:\n{t.dump()}")
            ws.run_app("3", "4", "5")
            codex.submit("debug-proceed it printed 9")
            t.wait_for(CODEX_FORM, 40, "the round 2 form")
            proceed = requests_of(lab, "proceed")
            check(proceed, "the typed Proceed never reached the model")
            check_kickoff(request_text(proceed[0]["body"]), "it printed 9", "Proceed typed in Codex")
            ws.run_app("3", "4", "5")
            codex_answer(t, "Mark fixed", "it printed 12")
            t.wait_for(ENDED_AFTER, 40, "the cleanup summary")
            check_rounds(t.settle(0.5), 2, "two hand-offs")
            check(not script.unplayed(), f"unplayed turns: {script.unplayed()}")
            check_no_slash_commands(t)
            check(ended(ws), f"the session did not end: {ws.status()}")
        finally:
            codex.kill()


def codex_proceed_elsewhere(kind, binary, ws):
    """Codex has nothing that starts a turn from outside: after the form is
    closed, `debug-sidecar proceed it printed 9` in a terminal says so and
    tells the person to say "go on" in the chat; the turn that line starts
    begins from round 1's kickoff (the prompt hook takes the waiting
    request), and the session ends after 2 rounds."""
    script = Script([
        Turn(PROBLEM, codex_round_one() + [
            say("Run it, then type debug-proceed with what you saw."),
        ], name="start"),
        Turn("go on", codex_fix_and_clean(ws), name="proceed"),
    ], codex_names)
    with Lab(script) as lab:
        codex = kind(binary, ws, lab.port)
        codex.install()
        try:
            t = codex.start()
            codex.trust_hooks()
            codex.submit(f"Use debug mode on this: {PROBLEM}")
            t.wait_for(CODEX_FORM, 40, "the round 1 form")
            t.settle(0.3)
            t.keys("Escape")
            t.wait_gone("Field 1/2", 10, "the form closing on Esc")
            t.wait_for("type debug-proceed with what you saw", 30, "the model's line after Esc")
            ws.run_app("3", "4", "5")
            before = len(lab.requests)
            out = ws.sidecar("proceed", "it printed 9")
            check('or say "go on"' in out.stdout,
                  f"the terminal does not say how to go on in Codex: {out.stdout!r}")
            time.sleep(1.0)
            check(len(lab.requests) == before, "a model request came without the person")
            codex.submit("go on")
            t.wait_for(CODEX_FORM, 40, "the round 2 form")
            proceed = requests_of(lab, "proceed")
            check(proceed, "the turn \"go on\" started never reached the model")
            check_kickoff(request_text(proceed[0]["body"]), "it printed 9",
                          "the turn after a terminal's Proceed in Codex")
            ws.run_app("3", "4", "5")
            codex_answer(t, "Mark fixed", "it printed 12")
            t.wait_for(ENDED_AFTER, 40, "the cleanup summary")
            check_rounds(t.settle(0.5), 2, "two hand-offs")
            check(not script.unplayed(), f"unplayed turns: {script.unplayed()}")
            check(ended(ws), f"the session did not end: {ws.status()}")
        finally:
            codex.kill()


ALL = [
    ("first start, trust dialog, no MCP dialog", "claude-tui", first_start),
    ("form answered with the keyboard", "claude-tui", form_keyboard),
    ("form closed with Esc, then Proceed typed", "claude-tui", form_escape_then_proceed),
    ("stubborn model", "claude-tui", stubborn),
    ("slash debug typed, the built-in one", "claude-tui", builtin_debug),
    ("a long hand-off in a form of 3 lines", "claude-tui", long_form),
    ("a reproduction longer than the background limit", "claude-tui", background_run),
    ("Proceed in a terminal wakes the idle session", "claude-tui", woken_by_terminal),
    ("Proceed in a terminal while the form is open", "claude-tui", form_overtaken),
    ("form answered with the keyboard", "codex-tui", codex_form),
    ("form closed with Esc, then Proceed typed", "codex-tui", codex_escape_then_proceed),
    ("Proceed in a terminal, then go on typed", "codex-tui", codex_proceed_elsewhere),
    ("Proceed in a terminal while the form is open", "codex-tui", codex_form_overtaken),
]
