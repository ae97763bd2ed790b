// The main job's scripted model: its script (pure) and its wire format (a real server on loopback).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { REPLY_PREFIX, type ScriptedModel, scriptedAnswer, startScriptedModel } from "../../src/main-job/model.js";
import { RUN_MARKER } from "../../src/main-job/responses.js";

const exec = [{ type: "function", function: { name: "exec" } }];

describe("the script", () => {
  it("calls exec with the command a user message names after `run: `", () => {
    const answer = scriptedAnswer({
      tools: exec,
      messages: [{ role: "user", content: [{ type: "text", text: "[Mon 11:00] run: echo hi" }] }],
    });
    expect(answer).toEqual({ toolCall: { name: "exec", arguments: { command: "echo hi" } } });
  });

  it("replies with the tool's output once the last message is the tool result", () => {
    const answer = scriptedAnswer({
      tools: exec,
      messages: [
        { role: "user", content: "run: echo hi" },
        { role: "assistant", content: null },
        { role: "tool", content: "hi\n" },
      ],
    });
    expect(answer).toEqual({ text: `${REPLY_PREFIX}\nhi` });
  });

  it("says so instead of pretending when no exec tool is offered", () => {
    const answer = scriptedAnswer({ tools: [], messages: [{ role: "user", content: "run: echo hi" }] });
    expect("text" in answer && answer.text).toMatch(/No exec tool/);
  });

  it("answers plain text to anything else", () => {
    expect(scriptedAnswer({ messages: [{ role: "user", content: "hello" }] })).toEqual({
      text: "Hello from the scripted model.",
    });
  });
});

describe("the server", () => {
  let model: ScriptedModel;
  beforeAll(async () => {
    model = await startScriptedModel("127.0.0.1");
  });
  afterAll(() => model.close());

  const post = (body: unknown) =>
    fetch(`${model.baseUrl}/chat/completions`, { method: "POST", body: JSON.stringify(body) });

  it("streams a tool call as OpenAI chunks ending in [DONE]", async () => {
    const response = await post({
      stream: true,
      model: "script",
      tools: exec,
      messages: [{ role: "user", content: "run: ls" }],
    });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const events = (await response.text()).split("\n\n").filter(Boolean);
    expect(events.at(-1)).toBe("data: [DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.slice("data: ".length)));
    expect(chunks[0].choices[0].delta.tool_calls[0].function).toEqual({
      name: "exec",
      arguments: JSON.stringify({ command: "ls" }),
    });
    expect(chunks[1].choices[0].finish_reason).toBe("tool_calls");
    expect(model.toolCalls()).toBe(1);
  });

  it("answers a non-streaming request with one message, and 404/400 to what it does not serve", async () => {
    const body = (await (await post({ messages: [{ role: "tool", content: "out" }] })).json()) as {
      choices: unknown[];
    };
    expect(body.choices[0]).toMatchObject({ message: { content: `${REPLY_PREFIX}\nout` }, finish_reason: "stop" });
    expect((await fetch(`${model.baseUrl}/models`)).status).toBe(404);
    expect((await fetch(`${model.baseUrl}/chat/completions`, { method: "POST", body: "{" })).status).toBe(400);
  });

  it("answers Codex's Responses API (Codex mode) with the codex-run script, as Server-Sent Events", async () => {
    const before = model.toolCalls();
    const response = await fetch(`${model.baseUrl}/responses`, {
      method: "POST",
      body: JSON.stringify({
        input: [{ type: "message", role: "user", content: [{ type: "input_text", text: `${RUN_MARKER} uname -a` }] }],
        tools: [{ type: "function", name: "exec_command" }],
      }),
    });
    expect(response.headers.get("content-type")).toBe("text/event-stream");
    const events = (await response.text())
      .split("\n\n")
      .filter(Boolean)
      .map((e) => JSON.parse(e.split("\n")[1]!.slice("data: ".length)) as { type: string; item?: unknown });
    expect(events.map((e) => e.type)).toEqual([
      "response.created",
      "response.output_item.added",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events[2]!.item).toMatchObject({
      type: "function_call",
      name: "exec_command",
      arguments: JSON.stringify({ cmd: "uname -a", yield_time_ms: 30_000 }),
    });
    expect(model.toolCalls()).toBe(before + 1);
    expect((await fetch(`${model.baseUrl}/responses`, { method: "POST", body: "[" })).status).toBe(400);
  });
});
