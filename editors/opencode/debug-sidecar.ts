// debug-sidecar's Debug Mode in OpenCode: a plugin that spawns
// `debug-sidecar serve` for the project and carries, between OpenCode and
// the sidecar (protocol v1), the one current blackboard in every request,
// the nudge when the model stops early, the turn state, the todo list and
// the rescans after edits. The tools and the `/debug` prompts come from the
// MCP server (`debug-sidecar mcp`) beside it in opencode.json; every text
// and decision is the sidecar's.
//
// `debug-sidecar install opencode --write` puts this file in
// `.opencode/plugin/` and the client it imports in `.opencode/shared/`.
// Only types come from `@opencode-ai/plugin`: nothing is imported at run time.

import type { Hooks, Plugin, PluginInput } from "@opencode-ai/plugin";
import { Sidecar } from "../shared/sidecar.ts";

/** OpenCode's tools that edit files (1.18.33): a probe rescan follows each call. */
const EDIT_TOOLS = ["edit", "write", "patch", "multiedit", "apply_patch"];
/** AI SDK providers whose stream ends a text part only at the end of the
 * step, after its tool calls (read in OpenCode 1.18.33's bundled
 * `@ai-sdk/openai-compatible`: `text-end` in `flush`). With these a text
 * that is complete and has no tool call beside it is the step's last word. */
const TEXT_ENDS_LAST = new Set(["@ai-sdk/openai-compatible"]);
/** How long `dispose` holds OpenCode open for a nudged turn still running. */
const HOLD_MS = 10 * 60 * 1000;
/** Our MCP server's name in opencode.json: its prompts are `<name>:<prompt>`. */
const MCP_SERVER = "debug-sidecar";

type Client = PluginInput["client"];
type Said = { agent?: string; model?: { providerID: string; modelID: string } };

const server: Plugin = async ({ client, directory }) => {
  const binary = process.env.DEBUG_SIDECAR_BIN || "debug-sidecar";
  const sidecar = new Sidecar(binary, directory);
  // A Proceed given away from this chat (a terminal, an editor) prompts the
  // session here, unless DEBUG_SIDECAR_WAKE=off.
  const wakes = !/^(off|0|false|no)$/i.test((process.env.DEBUG_SIDECAR_WAKE ?? "").trim());
  try {
    // As OpenCode: the texts name the tools as it calls the MCP server's.
    await sidecar.initialize(directory, { editTools: EDIT_TOOLS, wake: wakes }, "opencode");
  } catch (error) {
    console.error(`debug-sidecar: not available (${(error as Error).message}); Debug Mode is off.`);
    return {};
  }
  const headless = process.argv.slice(1).includes("run");
  const tell = (text: string) => {
    if (headless) process.stderr.write(`debug-sidecar: ${text}\n`);
    else void client.tui.showToast({ body: { message: text, variant: "info" } }).catch(() => {});
  };
  const ask = async (method: string, params: unknown): Promise<any> => {
    try {
      return await sidecar.request(method, params);
    } catch (error) {
      tell((error as Error).message);
      return undefined;
    }
  };
  const turnEvent = (params: Record<string, unknown>) => sidecar.notify("turn/event", params);
  const sessions = new Sessions(client);
  // The texts of nudges on their way in: their user message is no turn of the person's.
  const nudges = new Set<string>();
  // Assistant messages whose stop was decided while the loop still ran.
  const decided = new Set<string>();
  const said = new Map<string, Said>();
  const lastKind = new Map<string, string>();
  // Each model's AI SDK package (`providerID/modelID` -> npm), as requests show it.
  const packages = new Map<string, string>();
  // Sessions with a nudge sent after the loop ended, not yet answered.
  const owed = new Set<string>();
  // Sessions whose loop runs, and the conversation the person last spoke in.
  const busy = new Set<string>();
  let conversation: string | undefined;

  // A Proceed or Mark fixed given away from the chat: the conversation is
  // prompted with the kickoff, once, while its loop is idle (the sidecar
  // asks again when a running turn ends).
  sidecar.onNotification((method, params) => {
    if (method !== "debug/wakeRequested") return;
    const id = conversation;
    if (!id || busy.has(id) || owed.has(id)) return;
    void (async () => {
      const claim = await ask("debug/claimWake", { sessionId: params.sessionId, revision: params.revision });
      if (!claim?.granted || !claim.kickoff) return;
      busy.add(id);
      if (claim.said) tell(claim.said);
      const body = { ...said.get(id), parts: [{ type: "text" as const, text: claim.kickoff }] };
      await client.session.promptAsync({ path: { id }, body }).catch((error: unknown) => {
        busy.delete(id);
        tell(`could not wake the agent: ${(error as Error).message}`);
      });
    })();
  });

  /** The sidecar's stop decision; a block is sent as the next user message.
   * Whether a new turn was started for it (after the loop). */
  const stop = async (sessionID: string, text: string | undefined, queue: boolean): Promise<boolean> => {
    const answer = await ask("debug/stop", { lastAssistantMessage: text || undefined });
    if (answer?.decision === "block" && answer.reason) {
      nudges.add(answer.reason);
      const body = { ...said.get(sessionID), parts: [{ type: "text" as const, text: answer.reason }] };
      // Inside the loop a message alone is enough: OpenCode's loop goes on
      // while the newest user message has no answer. After the loop, a new
      // one is started.
      if (queue) {
        await client.session.prompt({ path: { id: sessionID }, body: { ...body, noReply: true } });
        return false;
      }
      await client.session.promptAsync({ path: { id: sessionID }, body });
      return true;
    }
    turnEvent({ kind: "turnEnd" });
    if (answer?.notice) tell(answer.notice);
    return false;
  };

  const hooks: Hooks = {
    // One current board per request: OpenCode builds the system prompt anew
    // for every request, so no copy is ever held.
    "experimental.chat.system.transform": async (input, output) => {
      const npm = (input.model as any)?.api?.npm;
      if (typeof npm === "string") packages.set(`${input.model.providerID}/${input.model.id}`, npm);
      if (!input.sessionID || (await sessions.isChild(input.sessionID))) return;
      const answer = await ask("debug/context", { held: [] });
      if (answer?.plan?.append && answer.content) output.system.push(answer.content);
    },
    // `/debug-sidecar:debug <problem>`: OpenCode asks our MCP prompt with
    // `$1` in place of the words (nothing is started from that) and fills
    // them in afterwards; the session starts here, with the words, and the
    // model gets its kickoff.
    "command.execute.before": async (input, output) => {
      const problem = argumentWords(input.arguments);
      if (input.command !== `${MCP_SERVER}:debug` || !problem) return;
      const started = await ask("debug/start", { problem });
      const text = output.parts.find((p: any) => p.type === "text") as any;
      if (started?.kickoff && text) text.text = started.kickoff;
    },
    "chat.message": async (input, output) => {
      said.set(input.sessionID, { agent: input.agent, model: input.model });
      if (await sessions.isChild(input.sessionID)) return;
      conversation = input.sessionID;
      busy.add(input.sessionID);
      const text = output.parts.map((p: any) => (p.type === "text" ? p.text : "")).join("");
      const nudged = nudges.delete(text);
      turnEvent({ kind: "turnStart", source: nudged ? "continuation" : "user" });
    },
    // The last awaited moment of a step: a step that ends with text and no
    // tool call is the model stopping. Deciding here keeps `opencode run`
    // going: it ends when the loop does, right after the session is idle.
    "experimental.text.complete": async (input, output) => {
      if (await sessions.isChild(input.sessionID)) return;
      const message = await client.session
        .message({ path: { id: input.sessionID, messageID: input.messageID } })
        .catch(() => undefined);
      const info = (message?.data as any)?.info ?? {};
      const parts = (message?.data as any)?.parts ?? [];
      if (parts.some((p: any) => p.type === "tool")) return;
      // Other providers end a text before the step's tool calls: decided at idle.
      if (!TEXT_ENDS_LAST.has(packages.get(`${info.providerID}/${info.modelID}`) ?? "")) return;
      decided.add(input.messageID);
      await stop(input.sessionID, output.text, true);
    },
    "tool.execute.after": async (input) => {
      // After the call, so the rescan sees what an edit tool wrote.
      turnEvent({ kind: "toolCall", tool: input.tool });
    },
    event: async ({ event }) => {
      const e = event as any;
      const props = e.properties ?? {};
      if (e.type === "message.part.updated") {
        const part = props.part ?? {};
        const kind =
          part.type === "reasoning" ? "reasoning"
          : part.type === "text" ? "content"
          : part.type === "tool" && part.state?.status === "running" ? "toolCall"
          : part.type === "step-finish" ? "message"
          : undefined;
        if (!kind || lastKind.get(part.sessionID) === `${kind}:${part.id}`) return;
        lastKind.set(part.sessionID, `${kind}:${part.id}`);
        if (await sessions.isChild(part.sessionID)) return;
        turnEvent(kind === "toolCall" ? { kind, tool: part.tool, edits: false } : { kind });
      } else if (e.type === "todo.updated") {
        if (Array.isArray(props.todos)) sidecar.notify("progress/todos", { todos: props.todos });
      } else if (e.type === "session.idle") {
        // A stop the loop did not decide (a step without text, a provider
        // whose text ends before its tool calls): asked now.
        const id = props.sessionID as string;
        if (!id) return;
        busy.delete(id);
        // At once, before anything is awaited: `dispose` waits for this decision.
        owed.add(id);
        let nudged = false;
        try {
          if (await sessions.isChild(id)) return;
          const last = await sessions.lastAssistant(id);
          if (!last || decided.has(last.id)) return;
          decided.add(last.id);
          nudged = await stop(id, last.text, false);
        } finally {
          if (!nudged) owed.delete(id);
        }
      } else if (e.type === "session.error") {
        turnEvent({ kind: "error" });
      }
    },
    // `opencode run` disposes right after the session is idle: a nudge sent
    // then is held for until its turn ends (the sidecar's budgets bound them).
    dispose: async () => {
      const deadline = Date.now() + HOLD_MS;
      while (owed.size > 0 && Date.now() < deadline && !sidecar.exited) {
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      await sidecar.stop();
    },
  };
  return hooks;
};

/** A command's arguments as OpenCode (1.18.33) puts them in place of the
 * last `$n` of a prompt: split as a shell would, quotes dropped, joined. */
function argumentWords(text: string): string {
  const words = text.match(/(?:\[Image\s+\d+\]|"[^"]*"|'[^']*'|[^\s"']+)/gi) ?? [];
  return words.map((w) => w.replace(/^["']|["']$/g, "")).join(" ").trim();
}

/** Which sessions are subagents' (their turns are not the conversation's). */
class Sessions {
  private parents = new Map<string, boolean>();
  constructor(private client: Client) {}

  async isChild(id: string): Promise<boolean> {
    const known = this.parents.get(id);
    if (known !== undefined) return known;
    const info = await this.client.session.get({ path: { id } }).catch(() => undefined);
    const child = Boolean((info?.data as any)?.parentID);
    this.parents.set(id, child);
    return child;
  }

  /** The newest assistant message and its text. */
  async lastAssistant(id: string): Promise<{ id: string; text: string } | undefined> {
    const list = await this.client.session.messages({ path: { id } }).catch(() => undefined);
    const messages = ((list?.data as any[]) ?? []).filter((m) => m?.info?.role === "assistant");
    const last = messages[messages.length - 1];
    if (!last) return undefined;
    const text = (last.parts ?? []).filter((p: any) => p.type === "text").map((p: any) => p.text).join("\n");
    return { id: last.info.id, text };
  }
}

export default { id: "debug-sidecar", server };
