// The main job's model: a scripted OpenAI-compatible chat-completions server (no real model, no key); in Codex
// mode the same server answers Codex's Responses API with responses.ts's script. The chat script: when a user
// message says `run: <command>` and the request offers the `exec` tool, it calls `exec` with that command; when
// the last message is the tool's result, it replies with that output. Anything else gets a short text answer. It
// keeps counts only (no prompt is stored), and binds to the address it is given. Given an `apiKey`, it answers 401
// to any request without `Authorization: Bearer <apiKey>` (VM1 never holds the key: the host has the firewall add
// it on the way out, see wakeVm's `networkPolicy`).
import { createHash, timingSafeEqual } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { answerResponses, decideRequest } from "./responses.js";

type Message = { role?: string; content?: unknown };
interface CompletionRequest {
  model?: string;
  stream?: boolean;
  messages?: Message[];
  tools?: Array<{ function?: { name?: string } }>;
}

export type ScriptedAnswer = { text: string } | { toolCall: { name: string; arguments: Record<string, unknown> } };

export const RUN_PREFIX = "run: ";
export const REPLY_PREFIX = "The worker ran it and printed:";

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((part) => (typeof part?.text === "string" ? part.text : "")).join("");
  return "";
}

/** What the script answers to a request (pure). */
export function scriptedAnswer(request: CompletionRequest): ScriptedAnswer {
  const messages = request.messages ?? [];
  const last = messages.at(-1);
  if (last?.role === "tool") return { text: `${REPLY_PREFIX}\n${textOf(last.content).trim().slice(0, 4000)}` };
  const offersExec = (request.tools ?? []).some((tool) => tool.function?.name === "exec");
  const lastUser = [...messages].reverse().find((m) => m.role === "user");
  const command = new RegExp(`${RUN_PREFIX}(.+)$`, "m").exec(textOf(lastUser?.content))?.[1]?.trim();
  if (command && offersExec) return { toolCall: { name: "exec", arguments: { command } } };
  if (command) return { text: "No exec tool was offered to the model, so the command did not run." };
  return { text: "Hello from the scripted model." };
}

export interface ScriptedModel {
  /** The base URL to configure (…/v1). */
  baseUrl: string;
  completions(): number;
  toolCalls(): number;
  /** Requests refused for a missing or wrong API key. */
  refused(): number;
  close(): Promise<void>;
}

const sha256 = (text: string) => createHash("sha256").update(text).digest();

function chunk(id: string, model: string | undefined, delta: object, finish: string | null = null): string {
  const body = {
    id,
    object: "chat.completion.chunk",
    created: 0,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  };
  return `data: ${JSON.stringify(body)}\n\n`;
}

function respond(res: http.ServerResponse, request: CompletionRequest, id: string, answer: ScriptedAnswer): void {
  const call = "toolCall" in answer ? answer.toolCall : undefined;
  const toolCalls = call
    ? [
        {
          index: 0,
          id: `call_${id}`,
          type: "function",
          function: { name: call.name, arguments: JSON.stringify(call.arguments) },
        },
      ]
    : undefined;
  const finish = call ? "tool_calls" : "stop";
  const usage = { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 };
  if (!request.stream) {
    const message = call
      ? { role: "assistant", content: null, tool_calls: toolCalls }
      : { role: "assistant", content: (answer as { text: string }).text };
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({
        id,
        object: "chat.completion",
        created: 0,
        model: request.model,
        choices: [{ index: 0, message, finish_reason: finish }],
        usage,
      }),
    );
    return;
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.write(
    chunk(
      id,
      request.model,
      call
        ? { role: "assistant", tool_calls: toolCalls }
        : { role: "assistant", content: (answer as { text: string }).text },
    ),
  );
  res.write(chunk(id, request.model, {}, finish));
  res.write(
    `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created: 0, model: request.model, choices: [], usage })}\n\n`,
  );
  res.end("data: [DONE]\n\n");
}

export async function startScriptedModel(host: string, options: { apiKey?: string } = {}): Promise<ScriptedModel> {
  let completions = 0;
  let toolCalls = 0;
  let refused = 0;
  const expected = options.apiKey === undefined ? undefined : sha256(`Bearer ${options.apiKey}`);
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const part of req) chunks.push(part as Buffer);
    if (expected && !timingSafeEqual(sha256(req.headers.authorization ?? ""), expected)) {
      refused++;
      res.writeHead(401, { "content-type": "application/json" });
      res.end('{"error":{"message":"missing or wrong API key","type":"invalid_request_error"}}');
      return;
    }
    if (req.method === "POST" && req.url?.endsWith("/responses")) {
      // Codex mode: Codex's app-server on VM1 speaks the Responses API (responses.ts holds its script).
      let body: { input?: unknown; tools?: unknown };
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8")) as typeof body;
      } catch {
        res.writeHead(400, { "content-type": "application/json" }).end('{"error":{"message":"invalid JSON"}}');
        return;
      }
      completions++;
      const { decision } = decideRequest(body);
      if (decision.call) toolCalls++;
      answerResponses(res, decision);
      return;
    }
    if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
      res.writeHead(404, { "content-type": "application/json" }).end('{"error":{"message":"not found"}}');
      return;
    }
    let request: CompletionRequest;
    try {
      request = JSON.parse(Buffer.concat(chunks).toString("utf8")) as CompletionRequest;
    } catch {
      res.writeHead(400, { "content-type": "application/json" }).end('{"error":{"message":"invalid JSON"}}');
      return;
    }
    completions++;
    const answer = scriptedAnswer(request);
    if ("toolCall" in answer) toolCalls++;
    respond(res, request, `chatcmpl-${completions}`, answer);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://${host}:${port}/v1`,
    completions: () => completions,
    toolCalls: () => toolCalls,
    refused: () => refused,
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * Gateway config that makes the scripted model every agent's model (a custom OpenAI-compatible provider). With
 * `key: "firewall"` the config holds no API key at all, not even a placeholder: OpenClaw 2026.9.2 then uses its
 * synthetic local marker (`custom-local`) for a base URL on a loopback or RFC 1918 address, and the sandbox's
 * firewall replaces the Authorization header with the real key on the way out (see modelKeyPolicy).
 */
export function scriptedModelConfig(
  baseUrl: string,
  model: { id: string; name: string } = { id: "script", name: "Scripted model" },
  { key = "placeholder" }: { key?: "placeholder" | "firewall" } = {},
): Record<string, unknown> {
  return {
    models: {
      mode: "merge",
      providers: {
        scripted: {
          baseUrl,
          ...(key === "placeholder" ? { apiKey: "scripted-model-key" } : {}),
          api: "openai-completions",
          models: [
            {
              ...model,
              reasoning: false,
              input: ["text"],
              cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
              contextWindow: 32768,
              maxTokens: 1024,
            },
          ],
        },
      },
    },
    agents: { defaults: { model: { primary: `scripted/${model.id}` } } },
  };
}
