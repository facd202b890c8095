// `debug-sidecar acp` driven by the ACP TypeScript SDK from npm (the one
// claude-agent-acp is built on), a client no one here wrote: it validates
// every session/update it is sent against the protocol's schema, so the
// updates the proxy makes itself (commands, message chunks) must pass.
//
//   node acp_typescript.mjs <node_modules> <debug-sidecar> <workspace> <fake agent>
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import path from "node:path";

const [modules, binary, root, fake] = process.argv.slice(2);
const acp = await import(path.join(modules, "@agentclientprotocol/sdk/dist/acp.js"));

const child = spawn(binary, ["acp", "--", "python3", fake], {
  cwd: root,
  env: { ...process.env, FAKE_ACP_LOG: path.join(root, ".git", "fake-acp.jsonl") },
  stdio: ["pipe", "pipe", "inherit"],
});
const updates = [];
const stream = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const connection = new acp.ClientSideConnection(
  () => ({
    async sessionUpdate(params) {
      updates.push(params.update);
    },
    async requestPermission() {
      return { outcome: { outcome: "cancelled" } };
    },
  }),
  stream,
);

const init = await connection.initialize({ protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: {} });
const { sessionId } = await connection.newSession({ cwd: root, mcpServers: [] });
// Our command list comes after the answer, the agent's merged one after it.
await new Promise((resolve) => setTimeout(resolve, 300));
const started = await connection.prompt({
  sessionId,
  prompt: [{ type: "text", text: "/debug SCRIPT:stubborn the total ignores the discount" }],
});
const lists = updates.filter((u) => u.sessionUpdate === "available_commands_update");
const chunks = updates
  .filter((u) => u.sessionUpdate === "agent_message_chunk")
  .map((u) => u.content.text);
console.log(
  JSON.stringify({
    agent: init.agentInfo?.name,
    commands: lists.map((l) => l.availableCommands.map((c) => c.name)),
    stopReason: started.stopReason,
    chunks,
  }),
);
child.stdin.end();
child.kill("SIGTERM");
process.exit(0);
