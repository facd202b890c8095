// The subagents a pi or oh-my-pi session runs, as the sidecar's subagent
// records (`agents/event`): oh-my-pi's own `task` tool and the
// `pi-subagents` extension's `subagent` tool, foreground and background.
// editors/pi/README.md says where each field comes from.

import type { ExtensionAPI } from "@mariozechner/pi-coding-agent";
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** oh-my-pi's subagents (its `task` tool), from the three channels of its
 * event bus, as `agents/event` records (see README.md for each field). */
export function watchSubagents(pi: ExtensionAPI, feed: SubagentFeed) {
  const bus = (pi as any).events;
  if (!bus?.on) return;
  bus.on("task:subagent:lifecycle", (frame: any) => feed.lifecycle(frame));
  bus.on("task:subagent:progress", (frame: any) => feed.progress(frame));
  bus.on("task:subagent:event", (frame: any) => feed.event(frame));
  // pi-subagents' background runs (see SubagentFeed.backgroundStarted).
  bus.on("subagent:async-started", (frame: any) => feed.backgroundStarted(frame));
  bus.on("subagent:async-complete", (frame: any) => feed.backgroundComplete(frame));
}

type AgentEvent = Record<string, unknown> & { id: string; kind: string };
/** What one child of a `subagent` call was asked: its agent and task. */
type Asked = { agent?: string; task?: string };
type BackgroundRun = {
  dir: string;
  children: number;
  workflow?: string;
  /** The registry of the subagents its children run in turn. */
  registry?: string;
  told: Map<number, string>;
};
type Usage = { input: number; output: number; cacheRead: number; cacheWrite: number };
type Seen = {
  finished: boolean;
  /** Whether its task came from pi-subagents' session name (a background run's). */
  titled?: boolean;
  /** Whether it was reported running. */
  running?: boolean;
  /** Whether its type and task were sent. */
  described?: boolean;
  usage: Usage;
  compactions: number;
  result?: string;
  failure?: string;
  cancelled: boolean;
  asking?: string;
};

const text = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value) ?? "");

/** A message's or tool result's text (its text blocks). */
export function resultText(result: any): string {
  const content = Array.isArray(result?.content) ? result.content : [];
  return content.filter((c: any) => c?.type === "text").map((c: any) => c.text).join("\n");
}

/** The task in pi-subagents' session name for a child (`<agent>: <task
 * excerpt>`, its own excerpt), or "". */
function sessionTask(name: unknown, agent: unknown): string {
  if (typeof name !== "string") return "";
  return name.startsWith(`${agent}: `) ? name.slice(`${agent}: `.length) : name;
}

export class SubagentFeed {
  send: (event: AgentEvent) => void = () => {};
  private seen = new Map<string, Seen>();
  private ending = false;

  private of(id: string): Seen {
    let seen = this.seen.get(id);
    if (!seen) {
      seen = { finished: false, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, compactions: 0, cancelled: false };
      this.seen.set(id, seen);
    }
    return seen;
  }

  /** The `task` call's own list: each subagent's type and task, once (a
   * `queued` never rewinds a record that runs already, and a pending one is
   * queued by it). */
  listed(progress: unknown) {
    if (!Array.isArray(progress)) return;
    for (const entry of progress) {
      if (typeof entry?.id !== "string") continue;
      const seen = this.of(entry.id);
      if (seen.described) continue;
      seen.described = true;
      const about = { type: entry.agent, description: entry.description ?? entry.assignment };
      // One that started already (its lifecycle frame came first) is told what it does.
      this.send({ id: entry.id, kind: seen.running ? "update" : "queued", ...about });
    }
  }

  cancelled(ids: unknown) {
    for (const id of Array.isArray(ids) ? ids : [ids]) if (typeof id === "string") this.of(id).cancelled = true;
  }

  lifecycle(frame: any) {
    const id = frame?.id;
    if (typeof id !== "string") return;
    const seen = this.of(id);
    const about = { type: frame.agent, description: frame.description };
    switch (frame.status) {
      case "started":
        seen.finished = false;
        seen.running = true;
        this.send({ id, kind: "running", ...about });
        return;
      case "completed":
        seen.finished = true;
        this.send({ id, kind: "completed", ...about, result: seen.result ?? "" });
        return;
      case "failed":
        seen.finished = true;
        this.send({ id, kind: "error", ...about, error: seen.failure ?? "the subagent failed" });
        return;
      case "aborted":
        seen.finished = true;
        // oh-my-pi says `aborted` for a yielded error, a cancel and the host's end alike.
        if (seen.failure !== undefined) this.send({ id, kind: "error", ...about, error: seen.failure });
        else if (seen.cancelled || this.ending) this.send({ id, kind: "stopped", ...about });
        else this.send({ id, kind: "aborted", ...about });
        return;
    }
  }

  /** Work figures: tool uses and turns (its model requests). */
  progress(frame: any) {
    const p = frame?.progress;
    if (typeof p?.id !== "string" || this.seen.get(p.id)?.finished) return;
    const work: AgentEvent = { id: p.id, kind: "update", toolUses: p.toolCount, turns: p.requests };
    // A nested subagent's task: its parent's `task` call, whose partial
    // results list it, runs in a session this feed does not hear.
    const seen = this.of(p.id);
    const task = p.description ?? p.assignment;
    if (!seen.described && typeof task === "string") {
      seen.described = true;
      Object.assign(work, { type: p.agent, description: task });
    }
    this.send(work);
  }

  /** The subagent's own session events: usage per reply, compactions, its
   * result or error (`yield`) and a question to its parent (`hub send`). */
  event(frame: any) {
    const id = frame?.id;
    const event = frame?.event;
    if (typeof id !== "string" || !event) return;
    const seen = this.of(id);
    if (event.type === "message_end" && event.message?.role === "assistant" && event.message.usage) {
      const u = event.message.usage;
      seen.usage.input += u.input ?? 0;
      seen.usage.output += u.output ?? 0;
      seen.usage.cacheRead += u.cacheRead ?? 0;
      seen.usage.cacheWrite += u.cacheWrite ?? 0;
      this.send({ id, kind: "update", usage: { ...seen.usage } });
    } else if (event.type === "auto_compaction_end") {
      this.send({ id, kind: "update", compactions: ++seen.compactions });
    } else if (event.type === "tool_execution_start" && event.toolName === "yield") {
      if (event.args?.error !== undefined) seen.failure = text(event.args.error);
      else seen.result = text(event.args?.data);
    } else if (event.type === "tool_execution_start" && event.toolName === "hub" && event.args?.op === "send" && event.args?.await) {
      seen.asking = event.toolCallId;
      this.send({ id, kind: "update", question: text(event.args.message) });
    } else if (event.type === "tool_execution_end" && seen.asking !== undefined && event.toolCallId === seen.asking) {
      seen.asking = undefined;
      this.send({ id, kind: "update", question: "" });
    }
  }

  /** pi-subagents' children of one `subagent` call, by its run id and each
   * child's index: `progress` entries as they run (status, tool uses, turns,
   * tokens), `results` as they end (output, error, stop, usage). A child
   * ends only with the call (`final`): a partial result that looks ended
   * may be one attempt of several (a fallback model, a recovery). */
  private ofCall = new Map<string, string[]>();
  /** What each call in flight asked, child by child (its details say
   * `[prompt redacted]`): `task`, or each of `tasks` or `chain`. */
  private asked = new Map<string, Asked[]>();
  /** The calls in flight that started a background run already. */
  private launched = new Set<string>();

  subagentCallStarted(callId: string, args: any) {
    const children: any[] = Array.isArray(args?.tasks) ? args.tasks : Array.isArray(args?.chain) ? args.chain : [args];
    const asked = children.map((c) => ({
      agent: typeof c?.agent === "string" ? c.agent : undefined,
      task: typeof c?.task === "string" ? c.task : undefined,
    }));
    if (asked.some((a) => a.task !== undefined)) this.asked.set(callId, asked);
  }

  subagentCallEnded(callId: string) {
    this.asked.delete(callId);
    this.launched.delete(callId);
  }

  subagentCall(callId: string, details: any, final: boolean) {
    if (!details || typeof details !== "object") return;
    const runId = typeof details.runId === "string" ? details.runId : callId;
    const progress: any[] = Array.isArray(details.progress) ? details.progress : [];
    const results: any[] = Array.isArray(details.results) ? details.results : [];
    const indexes = new Set<number>();
    for (const entry of [...progress, ...results]) if (typeof entry?.index === "number") indexes.add(entry.index);
    for (const index of indexes) {
      const p = progress.find((e) => e?.index === index);
      const r = results.find((e) => e?.index === index);
      const id = `${runId}:${index}`;
      const ids = this.ofCall.get(callId) ?? [];
      if (!ids.includes(id)) this.ofCall.set(callId, [...ids, id]);
      // What it ran in turn ended before it did.
      if (final && Array.isArray(r?.children)) this.nested(r.children);
      this.subagentChild(id, p, r, final, this.asked.get(callId)?.[index]);
    }
  }

  /** The usage last sent for each nested subagent. */
  private nestedTold = new Map<string, string>();

  /** Subagents a child ran in turn (an agent whose tools include
   * `subagent`): pi-subagents lists them in the child's result
   * (`results[].children[]`, each a run with its steps), only once the
   * child's call ends and without their output; a background run's nested
   * registry lists them as they run. Each step becomes a record named
   * `<runId>:<index>`, running and then its end. */
  private nested(children: any[]) {
    for (const child of children) {
      if (typeof child?.id !== "string") continue;
      const steps: any[] = Array.isArray(child.steps) && child.steps.length > 0 ? child.steps : [child];
      steps.forEach((step, index) => {
        const id = `${child.id}:${index}`;
        const seen = this.of(id);
        if (seen.finished) return;
        const agent = step.agent ?? child.agent;
        const about = { type: agent, description: sessionTask(step.sessionName ?? child.sessionName, agent) || undefined };
        if (!seen.running) {
          seen.running = true;
          seen.described = about.description !== undefined;
          this.send({ id, kind: "running", ...about });
        } else if (!seen.described && about.description !== undefined) {
          seen.described = true;
          this.send({ id, kind: "update", description: about.description });
        }
        const cost = child.totalCost;
        if (steps.length === 1 && (typeof cost?.inputTokens === "number" || typeof cost?.outputTokens === "number")) {
          const work = { id, kind: "update", usage: { input: cost.inputTokens ?? 0, output: cost.outputTokens ?? 0, cacheRead: 0, cacheWrite: 0 } };
          const said = JSON.stringify(work);
          if (this.nestedTold.get(id) !== said) {
            this.nestedTold.set(id, said);
            this.send(work);
          }
        }
        const status = step.status ?? child.state;
        if (status === "complete" || status === "completed") this.end(id, { kind: "completed" });
        else if (status === "failed" || status === "rejected")
          this.end(id, { kind: "error", error: text(step.error ?? child.error ?? "the subagent failed") });
        else if (status === "stopped") this.end(id, { kind: "stopped" });
      });
      if (Array.isArray(child.children)) this.nested(child.children);
    }
  }

  private subagentChild(id: string, p: any, r: any, final: boolean, asked?: Asked) {
    const seen = this.of(id);
    if (seen.finished) return;
    const told = [p?.task, r?.task].find((t) => typeof t === "string" && t !== "[prompt redacted]");
    const about = { type: p?.agent ?? r?.agent ?? asked?.agent, description: told ?? asked?.task };
    const status = p?.status;
    if (!seen.described) {
      seen.described = true;
      if (status === "pending") this.send({ id, kind: "queued", ...about });
    }
    if (!seen.running && status !== "pending") {
      seen.running = true;
      this.send({ id, kind: "running", ...about });
    }
    const work: AgentEvent = { id, kind: "update" };
    if (typeof p?.toolCount === "number") work.toolUses = p.toolCount;
    const turns = r?.usage?.turns ?? p?.turnCount;
    if (typeof turns === "number") work.turns = turns;
    const u = r?.usage;
    if (u) work.usage = { input: u.input ?? 0, output: u.output ?? 0, cacheRead: u.cacheRead ?? 0, cacheWrite: u.cacheWrite ?? 0 };
    else if (typeof p?.inputTokens === "number" || typeof p?.outputTokens === "number")
      work.usage = { input: p.inputTokens ?? 0, output: p.outputTokens ?? 0, cacheRead: 0, cacheWrite: 0 };
    if (Object.keys(work).length > 2) this.send(work);
    if (typeof (r?.error ?? p?.error) === "string") seen.failure = r?.error ?? p?.error;
    // Moved to the background (`detached`; a question to its parent detaches
    // it too): it runs on, and its end comes as a message (`detachedEnded`).
    if (final && (status === "detached" || r?.detached === true)) this.detached.add(id);
    if (!final || status === "detached" || r?.detached === true) return;
    seen.finished = true;
    if (r?.stopped || r?.interrupted) this.send({ id, kind: "stopped", ...about });
    else if (status === "failed" || (r && (r.exitCode ?? 0) !== 0) || r?.error)
      this.send({ id, kind: "error", ...about, error: text(r?.error ?? p?.error ?? "the subagent failed") });
    else this.send({ id, kind: "completed", ...about, result: text(r?.finalOutput ?? "") });
  }

  /** Foreground children the call left running in the background. */
  private detached = new Set<string>();

  /** pi-subagents' `subagent-notify` message: a detached foreground child
   * ended. Its first line says how (`Detached foreground task <status>:
   * **<agent>**`), its body is the output, and its session file's path
   * names its run. `paused` (it may be resumed; pi-subagents says so also of
   * one that gave its answer after it was detached) is `aborted`, with that
   * answer as its result. */
  detachedEnded(content: unknown) {
    const said = typeof content === "string" ? content : resultText({ content });
    const head = /^Detached foreground task (completed|failed|paused|stopped): \*\*/.exec(said);
    if (!head) return;
    const ids = [...this.detached].filter((id) => said.includes(id.slice(0, id.lastIndexOf(":"))));
    if (ids.length !== 1) return;
    const id = ids[0]!;
    this.detached.delete(id);
    const body = said.slice(said.indexOf("\n\n") + 2);
    const meta = body.search(/\n\n(Session|Session file|Session share error|Parallel handoff|Workflow run|Child runs|Reconciled detached child): /);
    const output = (meta >= 0 ? body.slice(0, meta) : body).trim();
    switch (head[1]) {
      case "completed":
        return this.end(id, { kind: "completed", result: output });
      case "failed":
        return this.end(id, { kind: "error", error: output || "the subagent failed" });
      case "stopped":
        return this.end(id, { kind: "stopped" });
      default:
        return this.end(id, { kind: "aborted", result: output });
    }
  }

  /** The call threw (pi-subagents throws when a child failed): its children
   * not ended yet end with the call's error. */
  subagentCallFailed(callId: string, error: string) {
    for (const id of this.ofCall.get(callId) ?? []) {
      const seen = this.of(id);
      if (seen.finished) continue;
      seen.finished = true;
      // Its own last error where a partial result said it; else the call's.
      this.send({ id, kind: "error", error: seen.failure ?? (error || "the subagent failed") });
    }
  }

  /** pi-subagents' background runs (its default: the call returns at once
   * and the run goes on in a runner process of its own), by run id: where
   * its status file is, how many children it has, the workflow it belongs
   * to, and the figures last sent for each child. */
  private background = new Map<string, BackgroundRun>();
  private polling: ReturnType<typeof setInterval> | undefined;

  /** `subagent:async-started`: the run's children are queued, each named
   * `<runId>:<index>`, with what the call in flight asked. A workflow's
   * children start one run each, named by the workflow. */
  backgroundStarted(frame: any) {
    const runId = frame?.id;
    if (typeof runId !== "string" || typeof frame.asyncDir !== "string" || this.background.has(runId)) return;
    const workflow = typeof frame.parentWorkflowRunId === "string" ? frame.parentWorkflowRunId : undefined;
    // The call that started it: the oldest one in flight that has not yet.
    const callId = workflow ? undefined : [...this.asked.keys()].find((c) => !this.launched.has(c));
    if (callId !== undefined) this.launched.add(callId);
    const asked = callId !== undefined ? this.asked.get(callId) ?? [] : [];
    const agents: unknown[] = Array.isArray(frame.agents) ? frame.agents : [frame.agent];
    const children = Math.max(agents.length, asked.length, 1);
    const sink = frame.nestedRoute?.eventSink;
    const registry = typeof sink === "string" ? join(dirname(sink), "registry.json") : undefined;
    this.background.set(runId, { dir: frame.asyncDir, children, workflow, registry, told: new Map() });
    for (let index = 0; index < children; index++) {
      const id = `${runId}:${index}`;
      const type = typeof agents[index] === "string" ? agents[index] : asked[index]?.agent;
      if (asked[index]?.task !== undefined) this.of(id).described = true;
      this.send({ id, kind: "queued", type, description: asked[index]?.task });
    }
    this.polling ??= setInterval(() => this.pollBackground(), 500);
    (this.polling as any).unref?.();
  }

  /** Between start and end, each child's step in its run's `status.json`:
   * running, its task (pi-subagents' session name) where the call did not
   * say it, tool uses, turns and tokens, sent when they change; an error or
   * a stop at once. A success waits for the completion, which alone
   * carries the whole output. */
  private pollBackground() {
    // The subagents its children run in turn, as the run's nested registry lists them.
    for (const registry of new Set([...this.background.values()].map((run) => run.registry))) {
      if (registry === undefined) continue;
      try {
        const listed = JSON.parse(readFileSync(registry, "utf8"));
        if (Array.isArray(listed?.children)) this.nested(listed.children);
      } catch (_) {
        // not written yet, or caught mid-write: the next poll reads it
      }
    }
    for (const [runId, run] of this.background) {
      let status: any;
      try {
        status = JSON.parse(readFileSync(join(run.dir, "status.json"), "utf8"));
      } catch (_) {
        continue; // not written yet, or caught mid-write: the next poll reads it
      }
      const steps: any[] = Array.isArray(status?.steps) ? status.steps : [];
      steps.forEach((step, index) => {
        const id = `${runId}:${index}`;
        const seen = this.of(id);
        if (seen.finished || typeof step?.status !== "string" || step.status === "pending") return;
        if (!seen.running) {
          seen.running = true;
          this.send({ id, kind: "running", type: step.agent });
        }
        const work: AgentEvent = { id, kind: "update" };
        const task = sessionTask(step.sessionName, step.agent);
        if (task && !seen.titled) {
          seen.titled = true;
          if (!seen.described) work.description = task;
        }
        if (typeof step.toolCount === "number") work.toolUses = step.toolCount;
        if (typeof step.turnCount === "number") work.turns = step.turnCount;
        const t = step.tokens;
        if (typeof t?.input === "number" || typeof t?.output === "number")
          work.usage = { input: t.input ?? 0, output: t.output ?? 0, cacheRead: 0, cacheWrite: 0 };
        const said = JSON.stringify(work);
        if (Object.keys(work).length > 2 && run.told.get(index) !== said) {
          run.told.set(index, said);
          this.send(work);
        }
        if (typeof step.endedAt !== "number") return;
        if (step.status === "stopped") this.end(id, { kind: "stopped" });
        else if (step.status === "failed" || step.status === "rejected")
          this.end(id, { kind: "error", error: text(step.error ?? status.error ?? "the subagent failed") });
      });
    }
  }

  /** `subagent:async-complete`: each child's end from the run's results
   * (output, error, stop, usage), a workflow's by each child's own run id;
   * a child without a result ends as the run did. */
  backgroundComplete(frame: any) {
    const runId = typeof frame?.runId === "string" ? frame.runId : frame?.id;
    if (typeof runId !== "string") return;
    // A run whose start this feed did not see still gets its ends.
    if (this.background.size > 0) this.pollBackground(); // the last figures before the end
    const results: any[] = Array.isArray(frame.results) ? frame.results : [];
    const ends = new Map<string, any>();
    results.forEach((r, at) => {
      const own = typeof r?.runId === "string" && r.runId !== runId;
      ends.set(own ? `${r.runId}:0` : `${runId}:${typeof r?.index === "number" ? r.index : at}`, r);
    });
    const runs = [...this.background].filter(([id, run]) => id === runId || run.workflow === runId);
    for (const [id, run] of runs) {
      this.background.delete(id);
      for (let index = 0; index < run.children; index++) if (!ends.has(`${id}:${index}`)) ends.set(`${id}:${index}`, undefined);
    }
    if (this.background.size === 0) this.stopPolling();
    for (const [id, r] of ends) {
      if (this.of(id).finished) continue;
      const u = r?.usage;
      if (u) {
        const usage = { input: u.input ?? 0, output: u.output ?? 0, cacheRead: u.cacheRead ?? 0, cacheWrite: u.cacheWrite ?? 0 };
        this.send({ id, kind: "update", usage, ...(typeof u.turns === "number" ? { turns: u.turns } : {}) });
      }
      if (Array.isArray(r?.children)) this.nested(r.children);
      const stopped = r ? r.stopped || r.interrupted || r.status === "stopped" : frame.state === "stopped";
      const succeeded = r ? r.success === true : frame.success === true;
      if (stopped) this.end(id, { kind: "stopped" });
      else if (succeeded) this.end(id, { kind: "completed", result: text(r?.output ?? r?.summary ?? frame.summary ?? "") });
      else this.end(id, { kind: "error", error: text(r?.error ?? frame.error ?? r?.summary ?? "the subagent failed") });
    }
  }

  /** Ends `id` once. */
  private end(id: string, event: Omit<AgentEvent, "id">) {
    const seen = this.of(id);
    if (seen.finished) return;
    seen.finished = true;
    this.send({ id, ...event } as AgentEvent);
  }

  private stopPolling() {
    if (this.polling !== undefined) clearInterval(this.polling);
    this.polling = undefined;
  }

  /** pi-subagents' questions from children to their parent, by request id:
   * the child's record. */
  private questions = new Map<string, string>();

  /** A child's `contact_supervisor` that waits for a reply (its request, as
   * the parent receives it): the child's pending question. */
  supervisorAsked(details: any) {
    const { requestId, runId, childIndex, requestBody } = details ?? {};
    if (details?.expectsReply !== true || typeof runId !== "string" || typeof childIndex !== "number") return;
    const id = `${runId}:${childIndex}`;
    const seen = this.of(id);
    if (seen.finished) return;
    // A child that asks runs, whether or not its status file said so yet.
    if (!seen.running) {
      seen.running = true;
      this.send({ id, kind: "running" });
    }
    if (typeof requestId === "string") this.questions.set(requestId, id);
    this.send({ id, kind: "update", question: text(requestBody ?? "") || "(a question)" });
  }

  /** The parent's `subagent_supervisor` reply: the question is answered. */
  supervisorReplied(details: any) {
    const id = typeof details?.replyTo === "string" ? this.questions.get(details.replyTo) : undefined;
    if (id === undefined) return;
    this.questions.delete(details.replyTo);
    if (!this.seen.get(id)?.finished) this.send({ id, kind: "update", question: "" });
  }

  /** The host ends: every subagent still queued or running is stopped. A
   * background run's runner outlives pi, but this host follows it no more
   * (its end, if the session is resumed, still records its result). */
  shutdown() {
    this.stopPolling();
    this.background.clear();
    this.ending = true;
    for (const [id, seen] of this.seen) {
      if (seen.finished) continue;
      seen.finished = true;
      this.send({ id, kind: "stopped" });
    }
  }
}
