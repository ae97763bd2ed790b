// The scripted OpenAI Responses-API script that drives a real Codex (app-server or `codex exec`) with no model and
// no key, so the caller decides which command Codex runs. Codex streams `POST …/responses` with the whole history
// each time; the answer is Server-Sent Events:
// - the newest user message carries `codex-run: <command>` and nothing answered it yet → one shell tool call
//   (`exec_command {cmd}` or, if the request offers only `shell`, `shell {command:[bash,-lc,cmd]}`);
// - the newest user message carries `codex-stream: <command>` → the same call with a one-second yield, then,
//   while the output says the process still runs, `write_stdin` polls of its session (no input) until it exits,
//   so every chunk comes back as it is printed (at most MAX_POLLS polls a turn);
// - the history ends in that call's output → an assistant message `codex-reply:` + the output, ending the turn;
// - anything else → an assistant message saying there was nothing to run.
// The main job's scripted model serves it (model.ts); the Codex specs' recording server too.
import { randomUUID } from "node:crypto";
import type http from "node:http";

export const RUN_MARKER = "codex-run:";
export const STREAM_MARKER = "codex-stream:";
/** How many `write_stdin` polls one streamed command gets before the turn ends with what it has. */
export const MAX_POLLS = 90;
const STREAM_YIELD_MS = 1_000;
export const REPLY_MARKER = "codex-reply:";
const MAX_BODY_BYTES = 32 * 1024 * 1024;

export type Item = { type?: string; role?: string; content?: unknown; output?: unknown; call_id?: string };
export type Tool = { type?: string; name?: string };

function textOf(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((part) =>
      part && typeof (part as { text?: unknown }).text === "string" ? (part as { text: string }).text : "",
    )
    .join("\n");
}

function outputOf(item: Item): string {
  if (typeof item.output === "string") return item.output;
  return textOf(item.output);
}

/** A Responses request body's answer, and the function tool names it offered. */
export function decideRequest(body: { input?: unknown; tools?: unknown }): {
  tools: string[];
  decision: ReturnType<typeof decide>;
} {
  const tools = Array.isArray(body.tools) ? (body.tools as Tool[]).flatMap((t) => (t?.name ? [t.name] : [])) : [];
  return { tools, decision: decide(Array.isArray(body.input) ? (body.input as Item[]) : [], tools) };
}

/** What to answer: a tool call for the newest unanswered `codex-run:` / `codex-stream:`, else a closing message. */
export function decide(
  input: Item[],
  tools: string[],
): { call?: { name: string; args: Record<string, unknown> }; text?: string; toolOutput?: string } {
  const lastUser = input.findLastIndex((item) => item.type === "message" && item.role === "user");
  const since = input.slice(lastUser + 1);
  const prompt = lastUser >= 0 ? textOf(input[lastUser]?.content) : "";
  const streamed = new RegExp(`${STREAM_MARKER}\\s*(.+)$`, "m").exec(prompt)?.[1];
  const answered = since.findLast((item) => item.type === "function_call_output");
  if (answered) {
    const output = outputOf(answered);
    const running = /Process running with session ID (\d+)/.exec(output)?.[1];
    const polls = since.filter((item) => item.type === "function_call_output").length;
    if (streamed && running && polls <= MAX_POLLS) {
      return {
        call: { name: "write_stdin", args: { session_id: Number(running), chars: "", yield_time_ms: STREAM_YIELD_MS } },
        toolOutput: output,
      };
    }
    return { text: `${REPLY_MARKER}\n${output}`, toolOutput: output };
  }
  const command = streamed ?? new RegExp(`${RUN_MARKER}\\s*(.+)$`, "m").exec(prompt)?.[1];
  if (!command) return { text: `${REPLY_MARKER} nothing to run` };
  if (tools.includes("exec_command") || !tools.includes("shell")) {
    const yieldMs = streamed ? STREAM_YIELD_MS : 30_000;
    return { call: { name: "exec_command", args: { cmd: command.trim(), yield_time_ms: yieldMs } } };
  }
  return { call: { name: "shell", args: { command: ["bash", "-lc", command.trim()] } } };
}

function sse(res: http.ServerResponse, type: string, data: Record<string, unknown>): void {
  res.write(`event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`);
}

export function answerResponses(res: http.ServerResponse, decision: ReturnType<typeof decide>): void {
  const id = `resp_${randomUUID().replaceAll("-", "")}`;
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  sse(res, "response.created", { response: { id } });
  const item = decision.call
    ? {
        type: "function_call",
        id: `fc_${randomUUID().replaceAll("-", "")}`,
        call_id: `call_${randomUUID().replaceAll("-", "")}`,
        name: decision.call.name,
        arguments: JSON.stringify(decision.call.args),
      }
    : {
        type: "message",
        id: `msg_${randomUUID().replaceAll("-", "")}`,
        role: "assistant",
        content: [{ type: "output_text", text: decision.text ?? "", annotations: [] }],
      };
  sse(res, "response.output_item.added", { output_index: 0, item });
  if (item.type === "message") {
    sse(res, "response.output_text.delta", {
      item_id: item.id,
      output_index: 0,
      content_index: 0,
      delta: decision.text,
    });
  }
  sse(res, "response.output_item.done", { output_index: 0, item });
  sse(res, "response.completed", {
    response: { id, usage: { input_tokens: 1, output_tokens: 1, total_tokens: 2 } },
  });
  res.end();
}

export async function readJson(req: http.IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES) throw new Error(`request body over ${MAX_BODY_BYTES} bytes`);
    chunks.push(chunk as Buffer);
  }
  const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  if (!parsed || typeof parsed !== "object") throw new Error("request body is not a JSON object");
  return parsed as Record<string, unknown>;
}
