"""The harness lab: Claude Code, Codex, Gemini CLI, Copilot CLI, OpenCode, pi
and oh-my-pi, installed from npm, run the whole
debug loop headless against a scripted model on 127.0.0.1, with the hooks
and MCP configuration exactly as `debug-sidecar install ... --write` leaves
them. Assertions read what the model received (the requests the model
server logged) and what the person was shown (the harness's output), and
only then the sidecar's state.

    python3 lab/run.py [--only NAME] [--keep]

Needs DEBUG_SIDECAR_BIN and LAB_CLAUDE, LAB_CODEX, LAB_GEMINI, LAB_COPILOT, LAB_OPENCODE,
LAB_PI, LAB_OMP, LAB_CLAUDE_ACP, LAB_CODEX_ACP, and for pi 0.85 with pi-subagents
LAB_PI_NEXT, LAB_PI_SUBAGENTS and LAB_NODE24 (scripts/test sets them).
"""

import argparse
import json
import os
import statistics
import sys
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from harness import WAKE_TIMES, Claude, Codex, Failure, Workspace  # noqa: E402
from model_server import Lab  # noqa: E402
from reach import Copilot, Gemini  # noqa: E402
from opencode import OpenCode  # noqa: E402
import scenarios  # noqa: E402
import scenarios_reach  # noqa: E402
import scenarios_pi  # noqa: E402
import scenarios_subagents  # noqa: E402
import scenarios_acp  # noqa: E402
import scenarios_logpoints  # noqa: E402
import scenarios_tui  # noqa: E402
import scenarios_containers  # noqa: E402
import scenarios_rates  # noqa: E402
from acp import ClaudeAcp, CodexAcp  # noqa: E402
from pi_hosts import OhMyPi, Pi, PiSubagents  # noqa: E402
from tui_hosts import ClaudeTui, CodexTui  # noqa: E402


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--only", action="append", default=[])
    parser.add_argument("--keep", action="store_true", help="keep the scratch folders")
    args = parser.parse_args()
    sidecar = os.environ.get("DEBUG_SIDECAR_BIN") or os.path.join(
        os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "target/debug/debug-sidecar")
    programs = {"claude": (Claude, os.environ.get("LAB_CLAUDE")),
                "codex": (Codex, os.environ.get("LAB_CODEX")),
                "gemini": (Gemini, os.environ.get("LAB_GEMINI")),
                "copilot": (Copilot, os.environ.get("LAB_COPILOT")),
                "opencode": (OpenCode, os.environ.get("LAB_OPENCODE")),
                "pi": (Pi, os.environ.get("LAB_PI")),
                "omp": (OhMyPi, os.environ.get("LAB_OMP")),
                "pi-subagents": (PiSubagents, os.environ.get("LAB_PI_NEXT")),
                "claude-acp": (ClaudeAcp, os.environ.get("LAB_CLAUDE_ACP")),
                "codex-acp": (CodexAcp, os.environ.get("LAB_CODEX_ACP")),
                # The same Claude Code and Codex, their interactive UIs in tmux (lab/tui.py).
                "claude-tui": (ClaudeTui, os.environ.get("LAB_CLAUDE")),
                "codex-tui": (CodexTui, os.environ.get("LAB_CODEX"))}
    failed, timings = [], []
    for name, harness_name, play in (scenarios.ALL + scenarios_logpoints.ALL + scenarios_reach.ALL + scenarios_pi.ALL
                                    + scenarios_subagents.ALL + scenarios_acp.ALL + scenarios_tui.ALL
                                    + scenarios_containers.ALL + scenarios_rates.ALL):
        label = f"{harness_name}: {name}"
        if args.only and not any(o in label for o in args.only):
            continue
        kind, binary = programs[harness_name]
        if not binary:
            # The TUI harnesses run the same programs as the headless ones.
            program = harness_name.removesuffix("-tui")
            print(f"SKIP {label}: LAB_{program.upper().replace('-', '_')} is not set", file=sys.stderr)
            failed.append(label)
            continue
        ws = Workspace(name.replace(" ", "-"), sidecar)
        started = time.monotonic()
        try:
            play(kind, binary, ws)
            outcome = "ok"
        except Failure as failure:
            outcome = f"FAILED: {failure}"
            failed.append(label)
        except Exception:  # a broken scenario is a failure too, with its trace
            outcome = "ERROR:\n" + traceback.format_exc()
            failed.append(label)
        elapsed = time.monotonic() - started
        if outcome != "ok" and Lab.last is not None:
            with open(os.path.join(ws.base, "requests.json"), "w") as f:
                json.dump(Lab.last.requests, f, indent=1)
        Lab.last = None
        timings.append((label, elapsed))
        print(f"{'ok ' if outcome == 'ok' else '!! '} {label} ({elapsed:.1f} s)"
              + ("" if outcome == "ok" else f"\n    {outcome}\n    kept: {ws.base}"),
              file=sys.stderr)
        if outcome == "ok" and not args.keep:
            ws.cleanup()
    if WAKE_TIMES:
        # From a person's Proceed outside the chat to the agent's next model request.
        print("wake: Proceed outside the chat -> the agent's next model request", file=sys.stderr)
        for host, times in sorted(WAKE_TIMES.items()):
            median = statistics.median(times)
            print(f"wake: {host}: median {median:.2f} s over {len(times)} "
                  f"({', '.join(f'{t:.2f}' for t in times)})", file=sys.stderr)
    total = sum(t for _, t in timings)
    played = len(timings) + sum(1 for label in failed if label not in dict(timings))
    print(f"lab: {played - len(failed)} of {played} scenarios passed "
          f"in {total:.1f} s", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
