// A client of `debug-sidecar serve` (protocol v1: JSON-RPC 2.0 with LSP
// framing over the child's stdio). The sidecar's stdin is this process's
// pipe, so it ends when the host does, however the host ends.

import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { pathToFileURL } from "node:url";

type Pending = { resolve: (value: any) => void; reject: (error: Error) => void };
export type NotificationHandler = (method: string, params: any) => void;

export class Sidecar {
  private child: ChildProcessWithoutNullStreams;
  private buffer = Buffer.alloc(0);
  private nextId = 1;
  private pending = new Map<number, Pending>();
  private handlers: NotificationHandler[] = [];
  exited = false;

  constructor(binary: string, cwd: string) {
    this.child = spawn(binary, ["serve"], { cwd, stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdout.on("data", (chunk: Buffer) => this.receive(chunk));
    // The sidecar logs to stderr; the host's terminal is not the place for it.
    this.child.stderr.on("data", () => {});
    this.child.on("exit", () => {
      this.exited = true;
      for (const { reject } of this.pending.values()) reject(new Error("debug-sidecar exited"));
      this.pending.clear();
    });
    this.child.on("error", (error) => {
      this.exited = true;
      for (const { reject } of this.pending.values()) reject(error);
      this.pending.clear();
    });
  }

  onNotification(handler: NotificationHandler): void {
    this.handlers.push(handler);
  }

  /** `initialize` + `initialized`; the result's `debugSidecar` capability.
   * `clientName` is the host whose model reads the texts (`opencode`: they
   * name the tools as it calls the MCP server's). */
  async initialize(root: string, options: Record<string, unknown>, clientName?: string): Promise<any> {
    const result = await this.request("initialize", {
      processId: process.pid,
      ...(clientName ? { clientInfo: { name: clientName } } : {}),
      capabilities: {},
      workspaceFolders: [{ uri: pathToFileURL(root).href, name: "workspace" }],
      initializationOptions: options,
    });
    this.notify("initialized", {});
    return result?.capabilities?.experimental?.debugSidecar ?? {};
  }

  request(method: string, params: unknown): Promise<any> {
    if (this.exited) return Promise.reject(new Error("debug-sidecar is not running"));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.send({ jsonrpc: "2.0", id, method, params });
    });
  }

  notify(method: string, params: unknown): void {
    if (!this.exited) this.send({ jsonrpc: "2.0", method, params });
  }

  /** `shutdown` then `exit`, so the sidecar exits 0. */
  async stop(): Promise<void> {
    if (this.exited) return;
    try {
      await this.request("shutdown", null);
      this.notify("exit", null);
    } catch {
      this.child.kill();
    }
  }

  private send(message: unknown): void {
    const body = Buffer.from(JSON.stringify(message), "utf8");
    this.child.stdin.write(`Content-Length: ${body.length}\r\n\r\n`);
    this.child.stdin.write(body);
  }

  private receive(chunk: Buffer): void {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    for (;;) {
      const end = this.buffer.indexOf("\r\n\r\n");
      if (end < 0) return;
      const header = this.buffer.subarray(0, end).toString("ascii");
      const length = Number(/content-length:\s*(\d+)/i.exec(header)?.[1] ?? NaN);
      if (!Number.isFinite(length)) {
        this.buffer = this.buffer.subarray(end + 4);
        continue;
      }
      if (this.buffer.length < end + 4 + length) return;
      const body = this.buffer.subarray(end + 4, end + 4 + length).toString("utf8");
      this.buffer = this.buffer.subarray(end + 4 + length);
      let message: any;
      try {
        message = JSON.parse(body);
      } catch {
        continue;
      }
      this.dispatch(message);
    }
  }

  private dispatch(message: any): void {
    if (message.id !== undefined && message.method === undefined) {
      const waiting = this.pending.get(message.id);
      if (!waiting) return;
      this.pending.delete(message.id);
      if (message.error) waiting.reject(new Error(message.error.message ?? "request failed"));
      else waiting.resolve(message.result);
      return;
    }
    if (typeof message.method === "string") {
      for (const handler of this.handlers) handler(message.method, message.params);
    }
  }
}
