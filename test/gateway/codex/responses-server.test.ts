// The scripted Responses server drives the real Codex CLI (the version @openclaw/codex 2026.9.5 pins) offline:
// the command the test names runs, its stdout and stderr come back to the model, and the turn ends with the
// scripted reply. The proof is a nonce in a file the prompt never names the content of, so only the command
// Codex ran can put it in the reply.
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChildProcesses } from "../processes.js";
import { ensureCodexCli, scriptedCodexArgs } from "./codex-cli.js";
import { decide, REPLY_MARKER, type ResponsesServer, RUN_MARKER, startResponsesServer } from "./responses-server.js";

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

  it("runs the scripted command and ends the turn with its stdout and stderr", { timeout: 120_000 }, async () => {
    if (!server) throw new Error("server not started");
    const nonce = randomBytes(8).toString("hex");
    await fs.writeFile(path.join(dir, "proof"), `${nonce}\n`);
    const home = path.join(dir, "codex-home");
    await fs.mkdir(home);
    const result = await processes.run(
      codex,
      [
        "exec",
        "--ephemeral",
        "--skip-git-repo-check",
        "--dangerously-bypass-approvals-and-sandbox",
        "--disable",
        "plugins",
        ...scriptedCodexArgs(server.baseUrl),
        "-m",
        "scripted-model",
        `${RUN_MARKER} cat proof; echo on-stderr >&2`,
      ],
      {
        cwd: dir,
        timeoutMs: 90_000,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, CODEX_HOME: home },
      },
    );
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
});
