"""The in-chat hand-off and blackboard updates of `debug-sidecar mcp`, driven
by the Python reference MCP SDK (`mcp` on PyPI) at one protocol revision.

Starts a session with the start tool, listens for blackboard updates
(`subscriptions/listen` at 2026-07-28, `resources/subscribe` before), hands
the round off and answers the form the way `answer` says, then reads where
the session stands. Prints one JSON object of what it saw; the Rust test
`tests/mcp_python.rs` checks it.

Usage: python mcp_form.py <debug-sidecar binary> <workspace> <revision> <answer>
  revision: 2026-07-28, 2025-11-25 or 2025-06-18
  answer:   proceed, fixed, reply, decline, cancel, junk (an accepted form
            without a valid choice), elsewhere (Proceed given in a terminal
            while the form is open, the form then left) or none (the client
            declares no elicitation)
"""

import asyncio
import json
import os
import sys
import time

import anyio
import mcp.client.session as client_session
from mcp import Client, StdioServerParameters, types

BOARD = "debug-sidecar://blackboard"


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def main(binary, workspace, revision, answer):
    if revision == "2025-06-18":
        # The SDK offers its newest handshake revision; an older client offers this one.
        client_session.LATEST_HANDSHAKE_VERSION = revision
    # Updates by how they came: on the listen stream, or as plain notifications.
    seen = {"updates": 0, "listened": 0, "forms": []}

    async def on_form(context, params):
        seen["forms"].append({
            "message": params.message,
            "schema": params.requested_schema if isinstance(params.requested_schema, dict)
            else params.requested_schema.model_dump(by_alias=True, exclude_none=True),
        })
        if answer == "proceed":
            return types.ElicitResult(action="accept", content={"choice": "proceed", "note": "the total was 0"})
        if answer == "fixed":
            return types.ElicitResult(action="accept", content={"choice": "fixed"})
        if answer == "reply":
            return types.ElicitResult(action="accept", content={"choice": "reply", "note": "which total?"})
        if answer == "junk":
            return types.ElicitResult(action="accept", content={"choice": "dance"})
        if answer == "elsewhere":
            # The person presses Proceed in a terminal while the form is
            # open, then leaves it: a form the server withdraws ends here.
            out = await anyio.run_process(
                [binary, "proceed", "it printed 0"], cwd=workspace,
                env={**os.environ, "DEBUG_SIDECAR_SESSION": "py-form"})
            seen["terminal"] = out.stdout.decode()
            try:
                # A withdrawn form ends at once; one the server cannot
                # withdraw (2026-07-28's) is closed by the person a moment later.
                await anyio.sleep(1 if revision == "2026-07-28" else 20)
            except BaseException:
                seen["withdrawn"] = True
                raise
            return types.ElicitResult(action="cancel")
        return types.ElicitResult(action=answer)

    async def on_message(message):
        root = getattr(message, "root", message)
        if isinstance(root, types.ResourceUpdatedNotification) and root.params.uri == BOARD:
            seen["updates"] += 1

    params = StdioServerParameters(
        command=binary, args=["mcp"], cwd=workspace, env={"DEBUG_SIDECAR_SESSION": "py-form"}
    )
    client = Client(
        params,
        mode="auto" if revision == "2026-07-28" else "legacy",
        elicitation_callback=None if answer == "none" else on_form,
        message_handler=on_message,
    )
    async with client:
        seen["protocol"] = client.protocol_version
        tools = (await client.list_tools()).tools
        seen["tools"] = {
            t.name: {
                "title": t.title,
                "annotations": t.annotations.model_dump(by_alias=True, exclude_none=True) if t.annotations else None,
                "outputSchema": t.output_schema,
            }
            for t in tools
        }
        async with anyio.create_task_group() as group:
            if revision == "2026-07-28":
                listening = client.listen(resource_subscriptions=[BOARD])
                subscription = await listening.__aenter__()

                async def count():
                    async for event in subscription:
                        if getattr(event, "uri", None) == BOARD:
                            seen["listened"] += 1

                group.start_soon(count)
            else:
                await client.subscribe_resource(BOARD)
            started = await client.call_tool("start_debug_session", {"problem": "the total is wrong"})
            seen["start"] = text_of(started)
            asked = time.monotonic()
            handed = await client.call_tool(
                "hand_off_to_user",
                {
                    "mode": "reproduce",
                    "steps": ["Run `sh cart.sh`.", "Look at the total it prints."],
                    "plan": [{"id": "e1", "method": "user_report", "instructions": ["Say which total you see"]}],
                },
            )
            seen["handOff"] = text_of(handed)
            seen["handOffSeconds"] = time.monotonic() - asked
            seen["handOffError"] = handed.is_error
            status = text_of(await client.call_tool("debug_status", {}))
            seen["board"] = status.split("\n", 1)[0]
            await asyncio.sleep(0.3)
            if revision == "2026-07-28":
                await listening.__aexit__(None, None, None)
            group.cancel_scope.cancel()
    print(json.dumps(seen))


asyncio.run(main(*sys.argv[1:5]))
