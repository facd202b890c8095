"""A scripted ACP agent (protocol version 1, newline-delimited JSON-RPC on
stdio) for tests/acp.rs: what `debug-sidecar acp` sits in front of.

Every message it receives is appended to $FAKE_ACP_LOG as one JSON line.
A prompt whose text holds `SCRIPT:<mode>` sets how it (and the follow-ups
after it) end:

    stubborn    says "it is fixed" and ends the turn (end_turn)
    handoff     calls hand_off_to_user through the MCP server the session
                was given (`mcpServers`), then ends the turn
    slow        the first prompt ends at once; the next waits for
                session/cancel and answers `cancelled`
    permission  asks the client for permission, then ends the turn
    extras      sends an unknown notification, an fs request, then ends
    exit        exits with status 3 at once
    grandchild  starts `sleep 300` (its pid in $FAKE_ACP_LOG.pid), ends
"""

import json
import os
import subprocess
import sys
import time

LOG = os.environ["FAKE_ACP_LOG"]
mode = "stubborn"
prompts_in_mode = 0
sessions = {}
waiting = {}  # our request id -> what it was for
next_id = 100


def log(message):
    with open(LOG, "a") as f:
        f.write(json.dumps(message) + "\n")


def send(message):
    message["jsonrpc"] = "2.0"
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def update(session, body):
    send({"method": "session/update", "params": {"sessionId": session, "update": body}})


def say(session, text):
    update(session, {"sessionUpdate": "agent_message_chunk",
                     "content": {"type": "text", "text": text}})


def read():
    while True:
        line = sys.stdin.readline()
        if not line:
            sys.exit(0)
        try:
            message = json.loads(line)
        except ValueError:
            log({"notJson": line.rstrip("\n")})
            continue
        log(message)
        return message


def mcp_call(server, tool, arguments):
    """One tools/call on the session's MCP server, as an agent would."""
    env = dict(os.environ)
    for pair in server.get("env", []):
        env[pair["name"]] = pair["value"]
    proc = subprocess.Popen([server["command"]] + server.get("args", []), stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env=env,
                            cwd=sessions.get("cwd"))

    def rpc(message):
        message["jsonrpc"] = "2.0"
        proc.stdin.write(json.dumps(message) + "\n")
        proc.stdin.flush()
        if "id" not in message:
            return None
        while True:
            answer = json.loads(proc.stdout.readline())
            if answer.get("id") == message["id"]:
                return answer

    rpc({"id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {},
        "clientInfo": {"name": "fake-acp-agent", "version": "1"}}})
    rpc({"method": "notifications/initialized"})
    answer = rpc({"id": 2, "method": "tools/call",
                  "params": {"name": tool, "arguments": arguments}})
    proc.stdin.close()
    proc.wait(timeout=10)
    return answer


def end(request, reason="end_turn"):
    send({"id": request["id"], "result": {"stopReason": reason}})


def prompt(request):
    global mode, prompts_in_mode, next_id
    session = request["params"]["sessionId"]
    text = "\n".join(b.get("text", "") for b in request["params"]["prompt"])
    if "SCRIPT:" in text:
        mode = text.split("SCRIPT:", 1)[1].split()[0]
        prompts_in_mode = 0
    prompts_in_mode += 1
    update(session, {"sessionUpdate": "agent_thought_chunk",
                     "content": {"type": "text", "text": "thinking"}})
    # A model thinks for a while: long enough that the thinking state is
    # seen before the next update replaces it, on a busy machine too.
    time.sleep(0.3)
    if mode == "exit":
        sys.exit(3)
    if mode == "handoff":
        update(session, {"sessionUpdate": "tool_call", "toolCallId": "t1",
                         "title": "hand_off_to_user", "kind": "other", "status": "pending"})
        server = next(s for s in sessions["mcpServers"] if s["name"] == "debug-sidecar")
        answer = mcp_call(server, "hand_off_to_user", {
            "mode": "reproduce", "steps": ["Run the checkout with 3 items"],
            "plan": [{"id": "E1", "method": "user_report",
                      "instructions": ["the total you see"]}]})
        log({"mcp_answer": answer})
        update(session, {"sessionUpdate": "tool_call_update", "toolCallId": "t1",
                         "status": "completed"})
        say(session, "Over to you.")
        return end(request)
    if mode == "slow" and prompts_in_mode > 1:
        while True:
            message = read()
            if message.get("method") == "session/cancel":
                return end(request, "cancelled")
    if mode == "permission":
        next_id += 1
        waiting[next_id] = request
        send({"id": next_id, "method": "session/request_permission", "params": {
            "sessionId": session,
            "toolCall": {"toolCallId": "t9", "title": "rm -rf build"},
            "options": [{"optionId": "allow", "name": "Allow", "kind": "allow_once"}]}})
        return None
    if mode == "extras":
        send({"method": "_fake/custom", "params": {"x": 1, "_meta": {"fake": True}}})
        next_id += 1
        send({"id": next_id, "method": "fs/read_text_file",
              "params": {"sessionId": session, "path": "/etc/hostname"}})
    if mode == "grandchild":
        child = subprocess.Popen(["sleep", "300"])
        with open(LOG + ".pid", "w") as f:
            f.write(str(child.pid))
    update(session, {"sessionUpdate": "tool_call", "toolCallId": "e1", "title": "Edit app.py",
                     "kind": "edit", "status": "in_progress",
                     "locations": [{"path": os.path.join(sessions.get("cwd", "."), "app.py")}]})
    update(session, {"sessionUpdate": "tool_call_update", "toolCallId": "e1",
                     "status": "completed"})
    update(session, {"sessionUpdate": "plan", "entries": [
        {"content": "read the code", "priority": "high", "status": "completed"},
        {"content": "hand off", "priority": "high", "status": "in_progress"}]})
    say(session, "I think it is fixed now.")
    end(request)


def main():
    while True:
        message = read()
        method = message.get("method")
        if method is None:
            request = waiting.pop(message.get("id"), None)
            if request is not None:
                end(request)
            continue
        if method == "initialize":
            send({"id": message["id"], "result": {
                "protocolVersion": 1, "agentInfo": {"name": "fake-agent", "version": "1"},
                "agentCapabilities": {"loadSession": True}, "authMethods": []}})
        elif method == "session/new":
            sessions["mcpServers"] = message["params"].get("mcpServers", [])
            sessions["cwd"] = message["params"].get("cwd")
            send({"id": message["id"], "result": {"sessionId": "s1"}})
            update("s1", {"sessionUpdate": "available_commands_update", "availableCommands": [
                {"name": "review", "description": "Review the diff"}]})
        elif method == "session/load":
            sessions["mcpServers"] = message["params"].get("mcpServers", [])
            sessions["cwd"] = message["params"].get("cwd")
            sid = message["params"]["sessionId"]
            update(sid, {"sessionUpdate": "user_message_chunk",
                         "content": {"type": "text", "text": "an old prompt"}})
            say(sid, "an old answer")
            send({"id": message["id"], "result": {}})
        elif method == "session/prompt":
            prompt(message)
        elif method == "session/cancel":
            pass
        elif "id" in message:
            send({"id": message["id"], "result": {"echo": method}})


main()
