"""Drive `debug-sidecar mcp` with the Python reference MCP SDK (`mcp` on PyPI):
list tools and prompts, run a debug session through prompts and tools, read
the blackboard resource. Prints one JSON object of what it saw; the Rust test
`tests/mcp_python.rs` checks it.

Usage: python mcp_client.py <debug-sidecar binary> <workspace>
"""

import asyncio
import json
import re
import subprocess
import sys

from mcp import ClientSession, StdioServerParameters, types
from mcp.client.stdio import stdio_client


def text_of(result):
    return "\n".join(c.text for c in result.content if getattr(c, "type", "") == "text")


async def main(binary, workspace):
    params = StdioServerParameters(
        command=binary, args=["mcp"], cwd=workspace, env={"DEBUG_SIDECAR_SESSION": "py-1"}
    )
    seen = {"updates": 0}

    async def on_message(message):
        root = getattr(message, "root", message)
        if isinstance(root, types.ResourceUpdatedNotification):
            seen["updates"] += 1

    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            init = await session.initialize()
            seen["server"] = init.server_info.name
            seen["protocol"] = init.protocol_version
            seen["tools"] = [t.name for t in (await session.list_tools()).tools]
            seen["prompts"] = [p.name for p in (await session.list_prompts()).prompts]
            await session.subscribe_resource("debug-sidecar://blackboard")
            kickoff = await session.get_prompt("debug", {"problem": "the total is wrong"})
            seen["kickoff"] = kickoff.messages[0].content.text
            placed = await session.call_tool(
                "probe_snippet", {"file": "cart.sh", "variables": ["n"], "message": "n before the check"}
            )
            # The text alone carries the answer: the block follows the first blank line.
            snippet = text_of(placed).split("\n\n", 1)[1].rstrip() + "\n"
            with open(f"{workspace}/cart.sh", "w") as f:
                f.write(f"n=3\n{snippet}echo $n\n")
            handed = await session.call_tool(
                "hand_off_to_user",
                {
                    "mode": "reproduce",
                    "steps": ["Run `sh cart.sh`."],
                    "plan": [{"id": "e1", "method": "runtime_probe", "instructions": ["p1 logs n"]}],
                },
            )
            seen["handOff"] = text_of(handed)
            seen["handOffError"] = handed.is_error
            subprocess.run(["sh", f"{workspace}/cart.sh"], check=True, capture_output=True)
            status = text_of(await session.call_tool("debug_status", {}))
            run = re.search(r"Current run: (\S+)", status).group(1)
            seen["proceed"] = (await session.get_prompt("debug-proceed", {})).messages[0].content.text
            logs = await session.call_tool("read_logs", {"run": run})
            seen["logs"] = text_of(logs)
            refused = await session.call_tool("hand_off_to_user", {"mode": "dance", "steps": []})
            seen["refused"] = {"isError": refused.is_error, "text": text_of(refused)}
            board = await session.read_resource("debug-sidecar://blackboard")
            seen["blackboard"] = board.contents[0].text
            seen["abort"] = (await session.get_prompt("debug-abort", {})).messages[0].content.text
            await asyncio.sleep(0.2)
    print(json.dumps(seen))


asyncio.run(main(sys.argv[1], sys.argv[2]))
