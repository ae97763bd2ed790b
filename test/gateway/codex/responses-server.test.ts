// The scripted Responses server drives the real Codex CLI (the version @openclaw/codex 2026.9.5 pins) offline:
// the command the test names runs, its stdout and stderr come back to the model, and the turn ends with the
// scripted reply. The proof is a nonce in a file the prompt never names the content of, so only the command
// Codex ran can put it in the reply.
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scriptedCodexArgs } from "../../../src/main-job/codex-config.js";
import { ChildProcesses } from "../processes.js";
import { waitFor } from "../wait.js";
import { ensureCodexCli } from "./codex-cli.js";
import {
  decide,
  MAX_POLLS,
  REPLY_MARKER,
  type ResponsesServer,
  RUN_MARKER,
  STREAM_MARKER,
  startResponsesServer,
} from "./responses-server.js";

describe("decide", () => {
  const user = (text: string) => ({ type: "message", role: "user", content: [{ type: "input_text", text }] });

  it("answers the newest user message's codex-run with an exec_command call", () => {
    const decision = decide([user(`${RUN_MARKER} echo one`), user(`${RUN_MARKER} echo two`)], ["exec_command"]);
    expect(decision.call).toEqual({ name: "exec_command", args: { cmd: "echo two", yield_time_ms: 30_000 } });
  });

  it("uses shell with bash -lc when the request offers only shell", () => {
    expect(decide([user(`${RUN_MARKER} ls`)], ["shell"]).call).toEqual({
      name: "shell",
      args: { command: ["bash", "-lc", "ls"] },
    });
  });

  it("ends the turn with the command's output once the history carries it", () => {
    const decision = decide(
      [user(`${RUN_MARKER} ls`), { type: "function_call" }, { type: "function_call_output", output: "a\nb" }],
      ["exec_command"],
    );
    expect(decision).toEqual({ text: `${REPLY_MARKER}\na\nb`, toolOutput: "a\nb" });
  });

  it("an output from before the newest user message does not answer it", () => {
    const decision = decide(
      [user(`${RUN_MARKER} ls`), { type: "function_call_output", output: "old" }, user(`${RUN_MARKER} pwd`)],
      ["exec_command"],
    );
    expect(decision.call?.args).toEqual({ cmd: "pwd", yield_time_ms: 30_000 });
  });

  it("streams a codex-stream command: a short yield, then write_stdin polls of its session until it exits", () => {
    const call = { type: "function_call" };
    const running = (text: string) => ({
      type: "function_call_output",
      output: `Chunk ID: a\nProcess running with session ID 7\nOutput:\n${text}`,
    });
    const prompt = user(`${STREAM_MARKER} ./count`);
    expect(decide([prompt], ["exec_command", "write_stdin"]).call).toEqual({
      name: "exec_command",
      args: { cmd: "./count", yield_time_ms: 1_000 },
    });
    expect(decide([prompt, call, running("one")], ["exec_command", "write_stdin"])).toEqual({
      call: { name: "write_stdin", args: { session_id: 7, chars: "", yield_time_ms: 1_000 } },
      toolOutput: running("one").output,
    });
    const exited = { type: "function_call_output", output: "Process exited with code 0\nOutput:\ntwo" };
    expect(decide([prompt, call, running("one"), call, exited], ["exec_command"]).text).toBe(
      `${REPLY_MARKER}\n${exited.output}`,
    );
  });

  it("stops polling after MAX_POLLS and ends the turn with the last chunk", () => {
    const polls = Array.from({ length: MAX_POLLS + 1 }, () => ({
      type: "function_call_output",
      output: "Process running with session ID 3\nOutput:\n",
    }));
    expect(decide([user(`${STREAM_MARKER} sleep 999`), ...polls], ["exec_command"]).call).toBeUndefined();
  });

  it("a codex-run command whose process outlives its yield is not polled", () => {
    const output = "Process running with session ID 4\nOutput:\nx";
    expect(decide([user(`${RUN_MARKER} sleep 99`), { type: "function_call_output", output }], []).text).toBe(
      `${REPLY_MARKER}\n${output}`,
    );
  });

  it("a message without codex-run gets a closing message", () => {
    expect(decide([user("hello")], ["exec_command"])).toEqual({ text: `${REPLY_MARKER} nothing to run` });
  });
});

describe("the real Codex CLI against the scripted server", () => {
  let server: ResponsesServer | undefined;
  let dir = "";
  let codex = "";
  const processes = new ChildProcesses((text) => text);

  beforeAll(async () => {
    codex = await ensureCodexCli();
    server = await startResponsesServer();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), "codex-responses-spec-"));
  }, 660_000);

  afterAll(async () => {
    await processes.terminateAll();
    await server?.close();
    if (dir) await fs.rm(dir, { recursive: true, force: true });
  });

  /** `codex exec` on `prompt` against the scripted server, in the spec's dir, with a CODEX_HOME of its own there. */
  async function execCodex(baseUrl: string, homeName: string, prompt: string) {
    const home = path.join(dir, homeName);
    await fs.mkdir(home);
    return processes.run(
      codex,
      [
        "exec",
        "--ephemeral",
        "--skip-git-repo-check",
        "--dangerously-bypass-approvals-and-sandbox",
        "--disable",
        "plugins",
        ...scriptedCodexArgs(baseUrl),
        "-m",
        "scripted-model",
        prompt,
      ],
      {
        cwd: dir,
        timeoutMs: 90_000,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, CODEX_HOME: home },
      },
    );
  }

  it("runs the scripted command and ends the turn with its stdout and stderr", { timeout: 120_000 }, async () => {
    if (!server) throw new Error("server not started");
    const nonce = randomBytes(8).toString("hex");
    await fs.writeFile(path.join(dir, "proof"), `${nonce}\n`);
    const result = await execCodex(server.baseUrl, "codex-home", `${RUN_MARKER} cat proof; echo on-stderr >&2`);
    expect(result.code, result.stderr.slice(-2000)).toBe(0);
    const requests = server.requests();
    expect(requests.map((r) => r.path)).toEqual(["/v1/responses", "/v1/responses"]);
    expect(requests[0]?.toolCall).toEqual({
      name: "exec_command",
      arguments: { cmd: "cat proof; echo on-stderr >&2", yield_time_ms: 30_000 },
    });
    expect(requests[1]?.toolOutput).toContain(nonce);
    expect(requests[1]?.toolOutput).toContain("on-stderr");
    expect(requests.every((r) => r.headers.authorization === undefined)).toBe(true);
    expect(result.stdout).toContain(REPLY_MARKER);
    expect(result.stdout).toContain(nonce);
  });
  it("streams a codex-stream command's stdout and stderr back while it runs", { timeout: 120_000 }, async () => {
    if (!server) throw new Error("server not started");
    const release = path.join(dir, `release-${randomBytes(4).toString("hex")}`);
    const before = server.requests().length;
    const outputs = () =>
      server
        ?.requests()
        .slice(before)
        .flatMap((r) => (r.toolOutput === undefined ? [] : [r.toolOutput])) ?? [];
    const running = execCodex(
      server.baseUrl,
      "codex-home-stream",
      `${STREAM_MARKER} for i in 1 2; do echo out-$i; echo err-$i >&2; sleep 1; done; while [ ! -e ${release} ]; do sleep 0.2; done; echo done-$((6*7))`,
    );
    // The command cannot end before the release file exists, and that is written only once both streams' lines came back.
    await waitFor(
      "both streams' lines back from the running command",
      async () => (["out-2", "err-2"].every((line) => outputs().join("\n").includes(line)) ? true : undefined),
      { timeoutMs: 60_000 },
    );
    expect(outputs().join("\n")).not.toContain("done-42");
    await fs.writeFile(release, "");
    const result = await running;
    expect(result.code, result.stderr.slice(-2000)).toBe(0);
    const text = outputs().join("\n");
    expect(text.indexOf("out-1")).toBeLessThan(text.indexOf("out-2"));
    expect(text.indexOf("err-1")).toBeLessThan(text.indexOf("err-2"));
    expect(text.indexOf("out-2")).toBeLessThan(text.indexOf("done-42"));
    expect(
      server
        .requests()
        .slice(before)
        .some((r) => r.toolCall?.name === "write_stdin"),
    ).toBe(true);
  });
});
