// debug-sidecar's Debug Mode in pi and oh-my-pi: one extension that spawns
// `debug-sidecar serve` for the host's working directory and gives the
// person the commands and the model the tools, the one current blackboard
// in every request and the stop nudge. Every text and every decision is the
// sidecar's (protocol v1); this file only carries them between the host
// and the sidecar.

import type { ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import { appendFileSync } from "node:fs";
import { Sidecar } from "../shared/sidecar.ts";
import { resultText, SubagentFeed, watchSubagents } from "./subagents.ts";

const CONTEXT_TYPE = "debug-mode-context";
const NUDGE_TYPE = "debug-mode-nudge";
/** The host's tools that edit files, so a probe rescan follows their calls. */
const EDIT_TOOLS = ["edit", "write", "ast_edit", "multiedit", "patch"];
/** Todo tools whose `todos` argument is the agent's progress. */
const TODO_TOOLS = new Set(["todo_write", "todowrite", "TodoWrite", "todo"]);
/** How long a headless run is held open for the turns it still owes. */
const HOLD_MS = 10 * 60 * 1000;

type Tool = {
  name: string;
  title: string;
  description: string;
  inputSchema: Record<string, unknown>;
  annotations: { readOnlyHint: boolean; destructiveHint: boolean };
};

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The main session's subagent feed. oh-my-pi runs every extension again
 * inside each subagent's session, in the same process: such a copy starts
 * no sidecar and offers no Debug Mode, and only hands what its own event bus
 * says about its subagents (the main session's grandchildren) to this feed. */
let mainFeed: SubagentFeed | undefined;

export default async function debugSidecar(pi: ExtensionAPI) {
  // pi-subagents' background runner loads ambient extensions into each
  // child session it hosts: such a copy reports nothing of its own.
  if (process.env.PI_SUBAGENT_CHILD === "1") return;
  if (mainFeed) {
    watchSubagents(pi, mainFeed);
    return;
  }
  const feed = new SubagentFeed();
  mainFeed = feed;
  const binary = process.env.DEBUG_SIDECAR_BIN || "debug-sidecar";
  const root = process.cwd();
  const sidecar = new Sidecar(binary, root);
  let info: { sessionId?: string } = {};
  let tools: Tool[] = [];
  const wakes = !/^(off|0|false|no)$/i.test((process.env.DEBUG_SIDECAR_WAKE ?? "").trim());
  try {
    // oh-my-pi runs on Bun, pi on Node: texts name this host's commands.
    const host = typeof (globalThis as { Bun?: unknown }).Bun !== "undefined" ? "oh-my-pi" : "pi";
    // `wake`: a Proceed given away from this chat (a terminal, an editor)
    // starts the agent's next turn here, unless DEBUG_SIDECAR_WAKE=off.
    info = await sidecar.initialize(root, { editTools: EDIT_TOOLS, host, wake: wakes });
    tools = (await sidecar.request("tools/list", {})).tools;
  } catch (error) {
    console.error(`debug-sidecar: not available (${(error as Error).message}); Debug Mode is off.`);
    mainFeed = undefined;
    return;
  }
  // Every notification in and every record out, one JSON line each, for a
  // test that reads their order (DEBUG_SIDECAR_TRACE_NOTIFICATIONS).
  const trace = process.env.DEBUG_SIDECAR_TRACE_NOTIFICATIONS;
  const traced = (line: Record<string, unknown>) => {
    if (!trace) return;
    try {
      appendFileSync(trace, JSON.stringify(line) + "\n");
    } catch (_) {}
  };
  feed.send = (event) => {
    traced({ sent: "agents/event", params: event });
    sidecar.notify("agents/event", event);
  };
  watchSubagents(pi, feed);

  // The context the latest event ran in: notices and the hand-off choice go there.
  let current: ExtensionContext | undefined;
  // Work the host still owes the session: handlers in flight, a nudged turn.
  let inFlight = 0;
  let owed = false;
  // Whether the run in progress is one this extension started (a kickoff, a nudge).
  let ours = false;
  let firstTurn = true;
  let askedRound = 0;

  const tell = (text: string, level: "info" | "warning" | "error" = "info") => {
    if (current?.hasUI) current.ui.notify(text, level);
    else console.error(`debug-sidecar: ${text}`);
  };
  const guarded = async <T>(work: () => Promise<T>): Promise<T | undefined> => {
    inFlight++;
    try {
      return await work();
    } catch (error) {
      tell((error as Error).message, "error");
      return undefined;
    } finally {
      inFlight--;
    }
  };
  const startTurn = (text: string | null | undefined) => {
    if (!text) return;
    owed = true;
    pi.sendUserMessage(text);
  };
  /** Until the host is idle and owes the session no turn (headless runs end
   * otherwise). As the host shuts down, only for the turns this extension
   * started: a run of the person's own still going then (the host was
   * signalled, say) is not held open. */
  const settle = async (ctx: ExtensionContext, shutdown = false) => {
    const deadline = Date.now() + HOLD_MS;
    let quiet = 0;
    while (Date.now() < deadline && !sidecar.exited) {
      await sleep(100);
      const idle = shutdown
        ? inFlight === 0 && !owed && !(ours && !ctx.isIdle())
        : ctx.isIdle() && !ctx.hasPendingMessages() && inFlight === 0 && !owed;
      quiet = idle ? quiet + 1 : 0;
      if (quiet >= 3) return;
    }
  };

  // Every tool of the catalogue, as the host registers tools. oh-my-pi sends
  // only `essential` tools to the model and asks before tools without an
  // approval; it adds its own required `i` field and strips it before execute.
  for (const tool of tools) {
    pi.registerTool({
      name: tool.name,
      label: tool.title,
      description: tool.description,
      parameters: tool.inputSchema as any,
      loadMode: "essential",
      approval: tool.annotations.readOnlyHint ? "read" : tool.annotations.destructiveHint ? "exec" : "write",
      async execute(_id: string, params: Record<string, unknown>) {
        const { i: _intent, ...args } = params ?? {};
        const answer = await sidecar.request("tools/call", { name: tool.name, arguments: args });
        const text = answer.content.map((block: { text: string }) => block.text).join("\n");
        if (answer.isError) throw new Error(text);
        return { content: [{ type: "text", text }], details: {} };
      },
    } as any);
  }

  // The person's commands.
  pi.registerCommand("debug", {
    description: "Debug Mode: start on a problem (/debug <what is wrong>)",
    handler: async (args, ctx) => {
      current = ctx;
      const problem = args.trim();
      if (!problem) return tell("Say what is wrong: /debug <the problem>", "warning");
      const started = await guarded(() => sidecar.request("debug/start", { problem }));
      startTurn(started?.kickoff);
      await settle(ctx);
    },
  });
  const person = (name: string, method: string, description: string) =>
    pi.registerCommand(name, {
      description,
      handler: async (args, ctx) => {
        current = ctx;
        // Words after the command are the person's note (`/debug-proceed it
        // printed 9`, `/debug-done fixed anyway`), as the texts tell them.
        const note = typeof args === "string" ? args.trim() : "";
        const answer = await guarded(() => sidecar.request(method, note ? { note } : {}));
        startTurn(answer?.kickoff);
        await settle(ctx);
      },
    });
  person("debug-proceed", "debug/proceed", "Debug Mode: I reproduced it, read the evidence and go on");
  person("debug-done", "debug/done", "Debug Mode: it is fixed, remove every probe");
  pi.registerCommand("debug-abort", {
    description: "Debug Mode: stop now",
    handler: async (_args, ctx) => {
      current = ctx;
      const answer = await guarded(() => sidecar.request("debug/abort", {}));
      const left = answer?.leftoverProbes?.length ?? 0;
      if (answer) tell(left ? `Debug Mode stopped; ${left} probe(s) are still on disk.` : "Debug Mode stopped.");
    },
  });
  pi.registerCommand("debug-status", {
    description: "Debug Mode: the session's stage, round and probes",
    handler: async (_args, ctx) => {
      current = ctx;
      const s = await guarded(() => sidecar.request("debug/status", {}));
      if (!s) return;
      tell(
        s.active
          ? `Debug session ${s.sessionId}: round ${s.round}, ${s.stage}, ${s.probes.live} probe(s) on disk; you may: ${s.userCommands.join(", ") || "nothing"}`
          : `No debug session is active in ${root}.`,
      );
    },
  });

  // Exactly one current blackboard in every model request: the sidecar plans
  // from the copies the list holds, so the transcript never crosses the pipe.
  pi.on("context", async (event) => {
    const messages = event.messages as any[];
    const copies = messages.filter((m) => m.role === "custom" && m.customType === CONTEXT_TYPE);
    const held = copies.map((m) => (typeof m.content === "string" ? m.content : ""));
    const answer = await guarded(() => sidecar.request("debug/context", { held }));
    const plan = answer?.plan;
    if (!plan) return;
    let index = 0;
    const next: any[] = [];
    for (const message of messages) {
      if (!(message.role === "custom" && message.customType === CONTEXT_TYPE)) {
        next.push(message);
        continue;
      }
      const mine = index++;
      if (plan.drop.includes(mine)) continue;
      next.push(plan.rewrite === mine ? { ...message, content: answer.content } : message);
    }
    if (plan.append && answer.content) {
      next.push({ role: "custom", customType: CONTEXT_TYPE, content: answer.content, display: false, timestamp: Date.now() });
    }
    return { messages: next };
  });

  // The turn as the sidecar's turn state sees it.
  const turnEvent = (params: Record<string, unknown>) => sidecar.notify("turn/event", params);
  pi.on("agent_start", async (_event, ctx) => {
    current = ctx;
    ours = owed;
    owed = false;
    firstTurn = true;
  });
  pi.on("turn_start", async () => {
    turnEvent({ kind: "turnStart", source: firstTurn ? "user" : "continuation" });
    firstTurn = false;
  });
  pi.on("message_update", async (event) => {
    const kind = (event as any).assistantMessageEvent?.type as string | undefined;
    if (kind === "thinking_delta") turnEvent({ kind: "reasoning" });
    else if (kind === "text_delta") turnEvent({ kind: "content" });
    else if (kind === "toolcall_delta" || kind === "toolcall_start") turnEvent({ kind: "toolCall" });
  });
  pi.on("message_end", async (event) => {
    const message = event.message as any;
    if (message.role === "assistant") turnEvent({ kind: "message" });
    // pi-subagents hands a child's `contact_supervisor` to the parent as a message.
    if (message.role === "custom" && message.customType === "subagent_supervisor_request") feed.supervisorAsked(message.details);
    if (message.role === "custom" && message.customType === "subagent-notify") feed.detachedEnded(message.content);
  });
  const todoList = new TodoList();
  // oh-my-pi's `task` call lists its subagents (pending ones first) in its
  // partial results; its `hub` call may cancel some.
  // pi-subagents' `subagent` call in the foreground reports its children in
  // its partial and final results; a child that failed makes the call throw.
  pi.on("tool_execution_update", async (event) => {
    if (event.toolName === "task") feed.listed((event as any).partialResult?.details?.progress);
    if (event.toolName === "subagent") feed.subagentCall(event.toolCallId, (event as any).partialResult?.details, false);
  });
  pi.on("tool_execution_end", async (event) => {
    if (event.toolName === "subagent_supervisor" && !event.isError) feed.supervisorReplied((event as any).result?.details);
    if (event.toolName !== "subagent") return;
    const result = (event as any).result;
    feed.subagentCall(event.toolCallId, result?.details, true);
    if (event.isError) feed.subagentCallFailed(event.toolCallId, resultText(result));
    feed.subagentCallEnded(event.toolCallId);
  });
  pi.on("tool_execution_start", async (event) => {
    turnEvent({ kind: "toolCall", tool: event.toolName });
    const args = event.args as any;
    if (event.toolName === "hub" && args?.op === "cancel") feed.cancelled(args.ids);
    if (event.toolName === "subagent") feed.subagentCallStarted(event.toolCallId, args);
    if (TODO_TOOLS.has(event.toolName) && Array.isArray(args?.todos)) {
      sidecar.notify("progress/todos", { todos: args.todos });
    } else if (event.toolName === "todo" && typeof args?.op === "string" && todoList.apply(args)) {
      sidecar.notify("progress/todos", { todos: todoList.entries });
    }
  });

  // The stop: the sidecar decides, within its budgets, whether the model is
  // sent back. pi has no stop hook: after the run ends, a nudge starts the next.
  const stopped = async (ctx: ExtensionContext, last: string | undefined) => {
    current = ctx;
    const answer = await guarded(() => sidecar.request("debug/stop", { lastAssistantMessage: last }));
    if (answer?.decision === "block" && answer.reason) return answer.reason as string;
    turnEvent({ kind: "turnEnd" });
    if (answer?.notice) tell(answer.notice);
    return undefined;
  };
  pi.on("agent_end", async (event, ctx) => {
    ours = false;
    if (isOhMyPi) return; // oh-my-pi asks at session_stop instead
    inFlight++;
    try {
      const reason = await stopped(ctx, lastAssistantText(event.messages as any[]));
      if (reason) {
        owed = true;
        // Not awaited: the nudged run starts once this handler has returned.
        void pi.sendMessage({ customType: NUDGE_TYPE, content: reason, display: true }, { triggerTurn: true });
      }
    } finally {
      inFlight--;
    }
  });
  // oh-my-pi's own stop hook: a block sends the model back at once.
  (pi.on as any)("session_stop", async (event: any, ctx: ExtensionContext) => {
    const reason = await stopped(ctx, lastAssistantText(event?.messages ?? []));
    return reason ? { decision: "block", reason } : undefined;
  });

  // What the sidecar announces: the hand-off choice, wakes, turn state and progress.
  sidecar.onNotification((method, params) => {
    traced({ method, params });
    const ctx = current;
    if (method === "debug/stateChanged" && params?.stage !== "user_turn") {
      // The round moved on elsewhere (a terminal, an editor): the open choice is stale.
      choice?.abort();
      choice = undefined;
    }
    if (method === "debug/stateChanged" && params?.stage === "user_turn" && params.round !== askedRound) {
      askedRound = params.round;
      if (ctx?.hasUI) void offerChoice(ctx, params.round);
      else tell(`Round ${params.round} is yours: reproduce, then /debug-proceed (or /debug-done when it is fixed).`);
    } else if (method === "debug/wakeRequested") {
      void wake(params);
    } else if (method === "turn/stateChanged" && ctx?.hasUI) {
      ctx.ui.setStatus("debug-sidecar", params.detail ? `${params.label} ${params.detail}` : params.label);
    } else if (method === "progress/changed" && ctx?.hasUI) {
      const b = params?.bubble;
      ctx.ui.setStatus("debug-sidecar-progress", b ? `${b.title}${b.percent != null ? ` ${b.percent}%` : ""}` : undefined);
    }
  });
  let choice: AbortController | undefined;
  const offerChoice = async (ctx: ExtensionContext, round: number) => {
    choice?.abort();
    const open = new AbortController();
    choice = open;
    const picked = await ctx.ui.select(`Debug Mode: round ${round} is yours`, ["Proceed", "Mark fixed", "Reply"], {
      signal: open.signal,
    });
    if (open.signal.aborted) return;
    choice = undefined;
    if (picked === "Proceed") startTurn((await guarded(() => sidecar.request("debug/proceed", {})))?.kickoff);
    else if (picked === "Mark fixed") startTurn((await guarded(() => sidecar.request("debug/done", {})))?.kickoff);
  };
  // A Proceed or Mark fixed given away from this chat: the agent's next turn
  // starts here, once, when no turn runs (the sidecar asks again when one ends).
  const wake = async (params: { sessionId: string; revision: number }) => {
    const ctx = current;
    const idle = !ctx || (ctx.isIdle() && !ctx.hasPendingMessages());
    if (!idle || inFlight > 0 || owed) return;
    const claim = await guarded(() =>
      sidecar.request("debug/claimWake", { sessionId: params.sessionId, revision: params.revision }),
    );
    if (!claim?.granted || !claim.kickoff) return;
    if (claim.said) tell(claim.said);
    startTurn(claim.kickoff);
  };

  // A headless run holds on until the session owes nothing; the sidecar ends with the host.
  pi.on("session_shutdown", async (_event, ctx) => {
    // The host ends its subagents with it: none stays running.
    feed.shutdown();
    await settle(ctx, true);
    await sidecar.stop();
    mainFeed = undefined;
  });
  process.once("exit", () => {
    if (!sidecar.exited) void sidecar.stop();
  });
}

/** oh-my-pi runs on Bun and names itself in its package path. */
const isOhMyPi = typeof (globalThis as any).Bun !== "undefined" || /oh-my-pi/.test(process.argv[1] ?? "");


function lastAssistantText(messages: any[]): string | undefined {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m?.role !== "assistant") continue;
    const text = (m.content ?? []).filter((c: any) => c.type === "text").map((c: any) => c.text).join("\n");
    return text || undefined;
  }
  return undefined;
}

/** oh-my-pi's `todo` tool speaks in operations on a phased list; the
 * sidecar takes the whole list (`progress/todos`), so it is kept here. */
class TodoList {
  entries: { content: string; status: string }[] = [];

  /** Applies one call's operation; whether the list changed. */
  apply(args: { op: string; list?: { phase?: string; items?: string[] }[]; task?: string }): boolean {
    const items = (args.list ?? []).flatMap((phase) => phase.items ?? []).filter((i) => typeof i === "string");
    const named = (status: string) => {
      const entry = this.entries.find((e) => e.content === args.task);
      if (entry) entry.status = status;
      return entry !== undefined;
    };
    switch (args.op) {
      case "init":
        this.entries = items.map((content) => ({ content, status: "pending" }));
        return true;
      case "append":
        this.entries.push(...items.map((content) => ({ content, status: "pending" })));
        return items.length > 0;
      case "start":
        return named("in_progress");
      case "done":
        return named("completed");
      case "rm":
      case "drop": {
        const before = this.entries.length;
        this.entries = this.entries.filter((e) => e.content !== args.task);
        return this.entries.length !== before;
      }
      default:
        return false;
    }
  }
}
