// A scripted OpenAI-compatible model server on loopback for real-gateway specs: each chat completion streams a
// first chunk at once and the rest only when the spec releases it, so a turn can be held in flight (or at once,
// while `holding` is false); `failNext` makes the next completion answer 500. A user message naming `echo:<token>`
// gets a reply naming it too, so a spec can tell which message a reply answers. It records requests (method and
// path only; no prompt is kept).

import http from "node:http";
import type { AddressInfo } from "node:net";
import { scriptedModelConfig as mainJobModelConfig } from "../../src/main-job/model.js";

export class ScriptedModel {
  readonly requests: string[] = [];
  #server = http.createServer((req, res) => void this.#handle(req, res));
  #release: Array<() => void> = [];
  #failNext = 0;
  held = 0;
  /** Whether completions wait for release (releaseAll) before they finish; false: they finish at once. */
  holding = true;

  async start(): Promise<string> {
    await new Promise<void>((resolve) => this.#server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}/v1`;
  }

  /** Lets every held completion finish. */
  releaseAll(): void {
    for (const release of this.#release.splice(0)) release();
  }

  failNext(times = 1): void {
    this.#failNext += times;
  }

  /** Forgets failures still queued (a failed turn may not have used them all). */
  clearFailures(): void {
    this.#failNext = 0;
  }

  async close(): Promise<void> {
    this.releaseAll();
    this.#server.closeAllConnections();
    await new Promise((resolve) => this.#server.close(resolve));
  }

  async #handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    this.requests.push(`${req.method} ${req.url}`);
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    if (!req.url?.endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":{"message":"not found"}}');
      return;
    }
    if (this.#failNext > 0) {
      this.#failNext--;
      res.writeHead(500, { "content-type": "application/json" }).end('{"error":{"message":"scripted failure"}}');
      return;
    }
    const body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as {
      model?: string;
      stream?: boolean;
      messages?: Array<{ role?: string; content?: unknown }>;
    };
    const echo = JSON.stringify(body.messages?.filter((m) => m.role === "user").at(-1)?.content ?? "").match(
      /echo:([A-Za-z0-9_-]{1,64})/,
    )?.[1];
    const id = `chatcmpl-${this.requests.length}`;
    const chunk = (delta: object, finish: string | null = null) =>
      `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 0, model: body.model, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
    res.write(chunk({ role: "assistant", content: "Hello" }));
    if (this.holding) {
      this.held++;
      await new Promise<void>((resolve) => this.#release.push(resolve));
      this.held--;
    }
    res.write(chunk({ content: echo ? ` there. echo:${echo}` : " there." }));
    res.write(chunk({}, "stop"));
    res.end("data: [DONE]\n\n");
  }
}

/** Gateway config that makes the scripted model at `baseUrl` every agent's model (the main job's, another model id). */
export function scriptedModelConfig(baseUrl: string): Record<string, unknown> {
  return mainJobModelConfig(baseUrl, { id: "slow", name: "Slow scripted model" });
}
