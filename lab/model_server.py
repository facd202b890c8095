"""A scripted model on 127.0.0.1 for the harness lab.

Speaks the wire formats the harnesses use: Anthropic Messages
(`POST /v1/messages`, Claude Code), OpenAI Responses (`POST /v1/responses`,
Codex), OpenAI chat completions (`POST /v1/chat/completions`, OpenCode and
Copilot CLI) and Gemini's `:streamGenerateContent` / `:generateContent`
(Gemini CLI), streamed as server-sent events where asked. Every request
is logged whole. What the model answers comes from a script: a list of
turns, each started by the first request whose newest person-side text
(a prompt, or what a hook fed back) contains the turn's key; within a turn
the n-th request since that text gets the turn's n-th step. A request no
turn claims (a title, a summary) gets a short text, and is logged as such.

Python's standard library only: the lab installs nothing for the model.
"""

import http.server
import itertools
import json
import threading
import time


class Step:
    """One model response: some text and at most one tool call."""

    def __init__(self, text=None, tool=None, args=None, search=None):
        self.text = text
        self.tool = tool
        self.args = args if args is not None else {}
        # Codex's client-side tool search: the query, in place of a call.
        self.search = search


def search(query, text=None):
    """Codex's `tool_search` (a Responses item of its own, not a function)."""
    return Step(text=text, search=query)


def say(text):
    return Step(text=text)


def call(tool, args=None, text=None):
    return Step(text=text, tool=tool, args=args)


class Turn:
    def __init__(self, key, steps, name=None, any_order=False):
        self.key = key
        self.steps = steps
        self.name = name or key
        # Claimed whenever its key comes, even before earlier turns (agents
        # that run side by side, such as subagents).
        self.any_order = any_order


class Script:
    """Turns matched in order: a turn is claimed once, by its key."""

    def __init__(self, turns, tool_names, not_person=None):
        self.turns = turns
        # A user-role text that is not the person's (a host that sends the
        # blackboard as a user message): skipped when finding the anchor.
        self.not_person = not_person
        # The harness's name for one of our tools, given its bare name.
        self.tool_names = tool_names
        self.claimed = {}  # turn index -> the person-side text that started it
        self.lock = threading.Lock()

    def step_for(self, anchor, since):
        """The step for a request whose newest person-side text is `anchor`
        and that has `since` model answers after it; None when no turn
        claims it."""
        with self.lock:
            for index, turn in enumerate(self.turns):
                started = self.claimed.get(index)
                if started is None:
                    if turn.key in anchor and since == 0 and self._first_free(index):
                        self.claimed[index] = anchor
                        return turn, turn.steps[0]
                    continue
                if started == anchor:
                    if since < len(turn.steps):
                        return turn, turn.steps[since]
                    return None
            return None

    def _first_free(self, index):
        # Turns are played in order: an earlier unclaimed turn blocks later
        # ones (except those that run side by side).
        return all(i in self.claimed or self.turns[i].any_order for i in range(index))

    def unplayed(self):
        return [t.name for i, t in enumerate(self.turns) if i not in self.claimed]


def _text_of(content):
    if isinstance(content, str):
        return content
    parts = []
    for block in content or []:
        if not isinstance(block, dict):
            continue
        kind = block.get("type")
        if kind in ("text", "input_text", "output_text"):
            parts.append(block.get("text", ""))
        elif kind == "tool_result":
            parts.append(_text_of(block.get("content")))
    return "\n".join(parts)


def anthropic_anchor(body, not_person=None):
    """(newest person-side text, model answers after it) for Messages."""
    messages = body.get("messages") or []
    since = 0
    for message in reversed(messages):
        content = message.get("content")
        if message.get("role") == "assistant":
            since += 1
            continue
        if message.get("role") != "user":
            continue  # Claude Code puts `system` messages between turns
        blocks = content if isinstance(content, list) else [{"type": "text", "text": content}]
        person = [b for b in blocks if isinstance(b, dict) and b.get("type") == "text"
                  and not (not_person and not_person(b.get("text", "")))]
        if person and not any(b.get("type") == "tool_result" for b in blocks if isinstance(b, dict)):
            return "\n".join(b.get("text", "") for b in person), since
    return "", since


def responses_anchor(body):
    """The same for Responses: person-side items are `message`s with role
    user (developer messages carry instructions, not the person). One answer
    can be two items, its text and its call: they count once."""
    items = body.get("input") or []
    if isinstance(items, str):
        return items, 0
    anchor_at, anchor = -1, ""
    for i, item in enumerate(items):
        if item.get("type", "message") == "message" and item.get("role") == "user":
            anchor_at, anchor = i, _text_of(item.get("content"))
    since, previous = 0, None
    for item in items[anchor_at + 1:]:
        kind = item.get("type", "message")
        if kind == "message" and item.get("role") == "assistant":
            since += 1
        elif (kind in ("function_call", "tool_search_call", "custom_tool_call")
              and previous != "assistant_message"):
            since += 1
        previous = (
            "assistant_message"
            if kind == "message" and item.get("role") == "assistant"
            else kind
        )
    return anchor, since


def chat_anchor(body):
    """The same for chat completions: tool results are messages of role
    `tool`, so every `user` message is the person's side."""
    messages = body.get("messages") or []
    since = 0
    for message in reversed(messages):
        role = message.get("role")
        if role == "assistant":
            since += 1
        elif role == "user":
            return _text_of(message.get("content")), since
    return "", since


def is_title_request(body):
    """OpenCode's request for a session title (its own system prompt, no
    tools), in chat completions or Anthropic Messages."""
    messages = body.get("messages") or []
    first = messages[0] if messages else {}
    system = body.get("system") or (first.get("content") if first.get("role") == "system" else "")
    return not body.get("tools") and _text_of(system).startswith("You are a title generator")


def gemini_anchor(body):
    """The same for Gemini: `contents` of role user carry either the
    person's text or function responses; `model` entries are answers."""
    since = 0
    for entry in reversed(body.get("contents") or []):
        parts = entry.get("parts") or []
        if entry.get("role") == "model":
            since += 1
            continue
        if any("functionResponse" in p for p in parts if isinstance(p, dict)):
            continue
        texts = [p.get("text", "") for p in parts if isinstance(p, dict) and "text" in p]
        if texts:
            return "\n".join(texts), since
    return "", since


def _gemini_response_text(part):
    response = part["functionResponse"].get("response")
    if isinstance(response, dict):
        for key in ("output", "content", "result", "error"):
            value = response.get(key)
            if isinstance(value, str):
                return value
            if isinstance(value, list):
                return _text_of(value)
    return json.dumps(response)


def last_tool_result(body):
    """The text of the newest tool result in a request, either wire format."""
    for message in reversed(body.get("messages") or []):
        for block in reversed(message.get("content") or []) if isinstance(message.get("content"), list) else []:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                return _text_of(block.get("content"))
    for item in reversed(body.get("input") or []) if isinstance(body.get("input"), list) else []:
        if item.get("type") in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            return output if isinstance(output, str) else _text_of(output)
    for message in reversed(body.get("messages") or []):
        if message.get("role") == "tool":
            return _text_of(message.get("content"))
    for entry in reversed(body.get("contents") or []):
        for part in reversed(entry.get("parts") or []):
            if isinstance(part, dict) and "functionResponse" in part:
                return _gemini_response_text(part)
    return ""


def request_text(body):
    """Everything a request shows the model, as one string (for assertions)."""
    parts = []
    system = body.get("system") or body.get("instructions")
    parts.append(system if isinstance(system, str) else _text_of(system))
    instruction = body.get("systemInstruction") or {}
    for part in instruction.get("parts") or [] if isinstance(instruction, dict) else []:
        parts.append(part.get("text", ""))
    # Gemini CLI 0.61.0's `--resume` repeats each earlier function response
    # (same id) once more per resume: read each response once.
    responses = set()
    for entry in body.get("contents") or []:
        for part in entry.get("parts") or []:
            if isinstance(part, dict) and "text" in part:
                parts.append(part["text"])
            elif isinstance(part, dict) and "functionResponse" in part:
                key = json.dumps(part["functionResponse"], sort_keys=True)
                if key not in responses:
                    responses.add(key)
                    parts.append(_gemini_response_text(part))
    for message in body.get("messages") or []:
        parts.append(_text_of(message.get("content")))
    for item in body.get("input") or [] if isinstance(body.get("input"), list) else []:
        if item.get("type", "message") == "message":
            parts.append(_text_of(item.get("content")))
        elif item.get("type") in ("function_call_output", "custom_tool_call_output"):
            output = item.get("output")
            parts.append(output if isinstance(output, str) else _text_of(output))
    return "\n".join(p for p in parts if p)


class Lab:
    """The server and what it saw."""

    def __init__(self, script):
        self.script = script
        self.requests = []  # every request: {"path", "body", "turn", "step"}
        self.ids = itertools.count(1)
        self.lock = threading.Lock()
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    # The newest lab, so a failed scenario's requests can be written out.
    last = None

    def __enter__(self):
        Lab.last = self
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.server.shutdown()
        self.server.server_close()

    def next_id(self):
        with self.lock:
            return next(self.ids)

    def _handler(self):
        lab = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                # Model lists and health checks: nothing to offer.
                lab._record(self.path, None, None, None)
                self._json(404, {"error": {"type": "not_found", "message": "scripted model"}})

            def do_HEAD(self):
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def do_POST(self):
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    body = {"unparsed": raw.decode("utf-8", "replace")}
                path = self.path.split("?")[0]
                if path.endswith("/messages/count_tokens"):
                    lab._record(self.path, body, None, None)
                    return self._json(200, {"input_tokens": 100})
                if path.endswith("/messages"):
                    if is_title_request(body):
                        return self._answer(body, "", 0, lab._anthropic, claim=False)
                    anchor, since = anthropic_anchor(body, lab.script.not_person)
                    return self._answer(body, anchor, since, lab._anthropic)
                if path.endswith("/responses"):
                    anchor, since = responses_anchor(body)
                    return self._answer(body, anchor, since, lab._responses)
                if path.endswith("/chat/completions"):
                    if is_title_request(body):
                        # OpenCode names the session in a request of its own.
                        return self._answer(body, "", 0, lab._chat, claim=False)
                    anchor, since = chat_anchor(body)
                    return self._answer(body, anchor, since, lab._chat)
                if path.endswith(":countTokens"):
                    lab._record(self.path, body, None, None)
                    return self._json(200, {"totalTokens": 100})
                if path.endswith(":generateContent") or path.endswith(":streamGenerateContent"):
                    anchor, since = gemini_anchor(body)
                    return self._answer(body, anchor, since, lab._gemini)
                lab._record(self.path, body, None, None)
                self._json(404, {"error": {"type": "not_found", "message": self.path}})

            def _answer(self, body, anchor, since, render, claim=True):
                found = lab.script.step_for(anchor, since) if claim else None
                turn, step = found if found else (None, say("ok"))
                if callable(step):
                    # A step that reads what the harness sent (a tool's result).
                    step = step(body)
                lab._record(self.path, body, turn, step if found else None)
                events = render(body, step)
                path = self.path.split("?")[0]
                if body.get("stream") is False or path.endswith(":generateContent") or (
                    "stream" not in body
                    and (path.endswith("/messages") or path.endswith("/chat/completions"))
                ):
                    return self._json(200, events[-1][1]["__final__"])
                # Events without a name (chat completions, Gemini) are bare `data:` lines.
                payload = b"".join(
                    (f"event: {name}\n" if name else "").encode()
                    + f"data: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode()
                    for name, data in events
                    if name != "__final__"
                )
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Cache-Control", "no-cache")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def _json(self, status, value):
                data = json.dumps(value).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        return Handler

    def _record(self, path, body, turn, step):
        with self.lock:
            self.requests.append(
                {
                    "path": path,
                    "body": body,
                    "at": time.monotonic(),
                    "turn": turn.name if turn else None,
                    "step": (step.tool or ("search" if step.search else "text")) if step else None,
                }
            )

    # Anthropic Messages

    def _anthropic(self, body, step):
        n = self.next_id()
        model = body.get("model", "scripted")
        content, events = [], []
        index = 0
        if step.text:
            content.append({"type": "text", "text": step.text})
            events += [
                ("content_block_start", {"type": "content_block_start", "index": index,
                                         "content_block": {"type": "text", "text": ""}}),
                ("content_block_delta", {"type": "content_block_delta", "index": index,
                                         "delta": {"type": "text_delta", "text": step.text}}),
                ("content_block_stop", {"type": "content_block_stop", "index": index}),
            ]
            index += 1
        if step.tool:
            name = self.script.tool_names(step.tool)
            use = {"type": "tool_use", "id": f"toolu_lab{n:04d}", "name": name, "input": step.args}
            content.append(use)
            events += [
                ("content_block_start", {"type": "content_block_start", "index": index,
                                         "content_block": dict(use, input={})}),
                ("content_block_delta", {"type": "content_block_delta", "index": index,
                                         "delta": {"type": "input_json_delta",
                                                   "partial_json": json.dumps(step.args)}}),
                ("content_block_stop", {"type": "content_block_stop", "index": index}),
            ]
        stop = "tool_use" if step.tool else "end_turn"
        usage = {"input_tokens": 10, "output_tokens": 10}
        message = {"id": f"msg_lab{n:04d}", "type": "message", "role": "assistant",
                   "model": model, "content": [], "stop_reason": None,
                   "stop_sequence": None, "usage": usage}
        final = dict(message, content=content, stop_reason=stop)
        return (
            [("message_start", {"type": "message_start", "message": message})]
            + events
            + [
                ("message_delta", {"type": "message_delta",
                                   "delta": {"stop_reason": stop, "stop_sequence": None},
                                   "usage": {"output_tokens": 10}}),
                ("message_stop", {"type": "message_stop"}),
                ("__final__", {"__final__": final}),
            ]
        )

    # OpenAI Responses

    def _responses(self, body, step):
        n = self.next_id()
        rid = f"resp_lab{n:04d}"
        output, events = [], []
        if step.text:
            item = {"type": "message", "id": f"msg_lab{n:04d}", "role": "assistant",
                    "status": "completed",
                    "content": [{"type": "output_text", "text": step.text, "annotations": []}]}
            events += [
                ("response.output_item.added", {"type": "response.output_item.added",
                                                "output_index": len(output),
                                                "item": dict(item, content=[], status="in_progress")}),
                ("response.output_text.delta", {"type": "response.output_text.delta",
                                                "item_id": item["id"], "output_index": len(output),
                                                "content_index": 0, "delta": step.text}),
                ("response.output_item.done", {"type": "response.output_item.done",
                                               "output_index": len(output), "item": item}),
            ]
            output.append(item)
        if step.search:
            item = {"type": "tool_search_call", "id": f"ts_lab{n:04d}",
                    "call_id": f"call_lab{n:04d}", "execution": "client",
                    "status": "completed",
                    "arguments": {"query": step.search, "limit": 8}}
            events.append(("response.output_item.done", {"type": "response.output_item.done",
                                                         "output_index": len(output), "item": item}))
            output.append(item)
        if step.tool and isinstance(step.args, str):
            # A freeform tool (Codex's apply_patch): its input is the text.
            item = {"type": "custom_tool_call", "id": f"ctc_lab{n:04d}",
                    "call_id": f"call_lab{n:04d}", "name": step.tool, "input": step.args,
                    "status": "completed"}
            events.append(("response.output_item.done", {"type": "response.output_item.done",
                                                         "output_index": len(output), "item": item}))
            output.append(item)
        elif step.tool:
            name = self.script.tool_names(step.tool)
            item = {"type": "function_call", "id": f"fc_lab{n:04d}", "call_id": f"call_lab{n:04d}",
                    "arguments": json.dumps(step.args), "status": "completed"}
            if isinstance(name, tuple):  # (namespace, name)
                item["namespace"], item["name"] = name
            else:
                item["name"] = name
            events += [
                ("response.output_item.added", {"type": "response.output_item.added",
                                                "output_index": len(output),
                                                "item": dict(item, arguments="", status="in_progress")}),
                ("response.output_item.done", {"type": "response.output_item.done",
                                               "output_index": len(output), "item": item}),
            ]
            output.append(item)
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 0},
                 "output_tokens": 10, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": 20}
        response = {"id": rid, "object": "response", "status": "in_progress",
                    "model": body.get("model", "scripted"), "output": []}
        done = dict(response, status="completed", output=output, usage=usage)
        return (
            [("response.created", {"type": "response.created", "response": response})]
            + events
            + [
                ("response.completed", {"type": "response.completed", "response": done}),
                ("__final__", {"__final__": done}),
            ]
        )

    # OpenAI chat completions

    def _chat(self, body, step):
        n = self.next_id()
        cid = f"chatcmpl-lab{n:04d}"
        model = body.get("model", "scripted")
        message = {"role": "assistant", "content": step.text or None}
        chunks = []

        def chunk(delta, finish=None):
            return (None, {"id": cid, "object": "chat.completion.chunk", "created": 0,
                           "model": model,
                           "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

        chunks.append(chunk({"role": "assistant", "content": ""}))
        if step.text:
            chunks.append(chunk({"content": step.text}))
        if step.tool:
            call = {"id": f"call_lab{n:04d}", "type": "function",
                    "function": {"name": self.script.tool_names(step.tool),
                                 "arguments": json.dumps(step.args)}}
            message["tool_calls"] = [call]
            chunks.append(chunk({"tool_calls": [dict(call, index=0)]}))
        finish = "tool_calls" if step.tool else "stop"
        usage = {"prompt_tokens": 10, "completion_tokens": 10, "total_tokens": 20}
        last = chunk({}, finish)
        last[1]["usage"] = usage
        chunks.append(last)
        final = {"id": cid, "object": "chat.completion", "created": 0, "model": model,
                 "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                 "usage": usage}
        return chunks + [(None, "[DONE]"), ("__final__", {"__final__": final})]

    # Gemini generateContent

    def _gemini(self, body, step):
        parts = []
        if step.text:
            parts.append({"text": step.text})
        if step.tool:
            parts.append({"functionCall": {"name": self.script.tool_names(step.tool),
                                           "args": step.args}})
        response = {
            "candidates": [{"content": {"role": "model", "parts": parts},
                            "finishReason": "STOP", "index": 0}],
            "usageMetadata": {"promptTokenCount": 10, "candidatesTokenCount": 10,
                              "totalTokenCount": 20},
            "modelVersion": "scripted",
        }
        return [(None, response), ("__final__", {"__final__": response})]
