// Lifecycle phases on a real emulated sandbox through the unmodified SDK (seed 002 "Each lifecycle command
// supports these forms", containerEnv/remoteEnv). One sandbox serves the file; each test works in its own
// directory, standing in for the prepared checkout.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Recipe, resolveRecipe } from "../../src/devcontainer/index.js";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { registerSecret } from "../../src/infra/redact.js";
import { runPhase, runPhases } from "../../src/preparation/commands.js";
import { parseSettings } from "../../src/settings/profile.js";
import { type SandboxBox, type SandboxHandle, VercelClient, type VercelProject } from "../../src/vercel/client.js";

let api: LocalSandboxApi;
let project: VercelProject;
let sandbox: SandboxHandle;
let box: SandboxBox;

beforeAll(async () => {
  api = await startLocalSandboxApi();
  const client = new VercelClient({ fetch: api.fetch, credentials: api.credentials });
  project = await client.project(parseSettings({}));
  // A sandbox-wide variable outside the minimal setup environment: lifecycle commands must not see it.
  sandbox = await project.create({ name: "preparation-commands", runtime: "node24", env: { STRAY: "sandbox-wide" } });
  box = project.box(sandbox);
});
afterAll(async () => {
  if (sandbox) await project.delete(sandbox, true);
  await api?.close();
});

/** A fresh directory on the sandbox standing in for the prepared checkout. */
async function checkout(name: string): Promise<string> {
  const dir = `/vercel/sandbox/${name}`;
  expect((await box.run({ cmd: "mkdir", args: ["-p", dir] })).exitCode).toBe(0);
  return dir;
}

/** Runs a plain command (no recipe environment) and returns its stdout. */
async function sh(script: string): Promise<string> {
  return (await box.run({ cmd: "/bin/sh", args: ["-c", script] })).stdout;
}

const recipeOf = (config: object): Recipe =>
  resolveRecipe({ files: { ".devcontainer/devcontainer.json": JSON.stringify(config) } });
/** A devcontainer variable reference such as `${containerEnv:PATH}`, spelled so it is plainly not a template. */
const ref = (name: string) => `\${${name}}`;
const noEnv = { env: {}, unset: [] };

describe("lifecycle command forms", () => {
  it("a string runs through the shell: pipes and && work", async () => {
    const cwd = await checkout("shell");
    const outcome = await runPhase(
      "postCreateCommand",
      { kind: "shell", command: "echo one | tr a-z A-Z > piped && echo two >> piped" },
      { box, cwd, recipe: noEnv },
    );
    expect(outcome).toMatchObject({ phase: "postCreateCommand", ok: true, outputTail: "" });
    expect(outcome.ms).toBeGreaterThan(0);
    expect(await sh(`cat ${cwd}/piped`)).toBe("ONE\ntwo\n");
  });

  it("an array runs the executable with no shell: $HOME and * stay literal arguments", async () => {
    const cwd = await checkout("exec");
    const outcome = await runPhase(
      "updateContentCommand",
      { kind: "exec", argv: ["touch", "$HOME", "*", "a b"] },
      { box, cwd, recipe: noEnv },
    );
    expect(outcome.ok).toBe(true);
    expect((await sh(`cd ${cwd} && ls -1`)).split("\n").filter(Boolean).sort()).toEqual(["$HOME", "*", "a b"].sort());
  });

  it("an executable whose path contains = still runs as the named program", async () => {
    const cwd = await checkout("odd-name");
    await box.writeFiles([{ path: `${cwd}/odd=name`, content: '#!/bin/sh\necho "ran $1" > odd.out\n', mode: 0o755 }]);
    const outcome = await runPhase(
      "onCreateCommand",
      { kind: "exec", argv: ["./odd=name", "x=1"] },
      {
        box,
        cwd,
        recipe: noEnv,
      },
    );
    expect(outcome.ok).toBe(true);
    expect(await sh(`cat ${cwd}/odd.out`)).toBe("ran x=1\n");
  });

  it("runs in the checkout as the sandbox's default user", async () => {
    const cwd = await checkout("where");
    const outcome = await runPhase(
      "postCreateCommand",
      { kind: "shell", command: 'echo "$(pwd) $(id -un)" > where' },
      {
        box,
        cwd,
        recipe: noEnv,
      },
    );
    expect(outcome.ok).toBe(true);
    expect(await sh(`cat ${cwd}/where`)).toBe(`${cwd} vercel-sandbox\n`);
  });

  it("a failing exit code fails the phase, naming the command, its code and its output", async () => {
    const cwd = await checkout("failing");
    const outcome = await runPhase(
      "updateContentCommand",
      { kind: "shell", command: "echo to-stdout; echo to-stderr >&2; exit 7" },
      { box, cwd, recipe: noEnv },
    );
    expect(outcome).toMatchObject({
      phase: "updateContentCommand",
      ok: false,
      exitCode: 7,
      failed: "echo to-stdout; echo to-stderr >&2; exit 7",
      reason: "updateContentCommand failed: `echo to-stdout; echo to-stderr >&2; exit 7` exited with code 7",
    });
    // stderr joins stdout in the order written.
    expect(outcome.outputTail).toBe("to-stdout\nto-stderr\n");
  });

  it("a command that outlives the phase timeout fails the phase as timed out", async () => {
    const cwd = await checkout("slow");
    const outcome = await runPhase(
      "postStartCommand",
      { kind: "shell", command: "echo started; sleep 30" },
      {
        box,
        cwd,
        recipe: noEnv,
        timeoutMs: 1000,
      },
    );
    expect(outcome).toMatchObject({
      ok: false,
      reason: "postStartCommand failed: `echo started; sleep 30` timed out after 1 s",
    });
    expect(outcome.outputTail).toBe("started\n");
    expect(outcome.ms).toBeLessThan(20_000);
  });
});

describe("parallel commands", () => {
  it("succeeds when every named command succeeds", async () => {
    const cwd = await checkout("parallel-ok");
    const outcome = await runPhase(
      "postCreateCommand",
      {
        kind: "parallel",
        commands: { a: { kind: "shell", command: "touch a.done" }, b: { kind: "exec", argv: ["touch", "b.done"] } },
      },
      { box, cwd, recipe: noEnv },
    );
    expect(outcome).toMatchObject({ ok: true, outputTail: "" });
    expect(await sh(`cd ${cwd} && ls -1`)).toBe("a.done\nb.done\n");
  });

  it("fails naming the failed member, after the others ran to completion", async () => {
    const cwd = await checkout("parallel-fail");
    const outcome = await runPhase(
      "postCreateCommand",
      {
        kind: "parallel",
        commands: {
          slow: { kind: "shell", command: "sleep 1; touch slow.done" },
          bad: { kind: "shell", command: "echo bad-output; exit 4" },
          fast: { kind: "exec", argv: ["touch", "fast.done"] },
        },
      },
      { box, cwd, recipe: noEnv },
    );
    expect(outcome).toMatchObject({
      ok: false,
      failed: "bad",
      exitCode: 4,
      reason: "postCreateCommand failed: command bad exited with code 4 (of 3 parallel commands)",
      outputTail: "--- bad (exit 4) ---\nbad-output\n",
    });
    // The slow member finished after the bad one had already failed.
    expect(await sh(`cd ${cwd} && ls -1`)).toBe("fast.done\nslow.done\n");
  });

  it("reports every failed member with its own output", async () => {
    const cwd = await checkout("parallel-two");
    const outcome = await runPhase(
      "onCreateCommand",
      {
        kind: "parallel",
        commands: {
          one: { kind: "shell", command: "echo first; exit 1" },
          ok: { kind: "shell", command: "true" },
          two: { kind: "exec", argv: ["ls", "/nonexistent-path"] },
        },
      },
      { box, cwd, recipe: noEnv },
    );
    expect(outcome.ok).toBe(false);
    expect(outcome.failed).toBe("one, two");
    expect(outcome.exitCode).toBeUndefined();
    expect(outcome.reason).toBe(
      "onCreateCommand failed: command one exited with code 1; command two exited with code 2 (of 3 parallel commands)",
    );
    expect(outcome.outputTail).toMatch(
      /^--- one \(exit 1\) ---\nfirst\n--- two \(exit 2\) ---\nls: .*nonexistent-path/,
    );
  });
});

describe("lifecycle environment", () => {
  it("is the minimal setup environment plus containerEnv and remoteEnv, with null removing a variable", async () => {
    const cwd = await checkout("env");
    const recipe = recipeOf({
      containerEnv: { LAYERED: "container", ONLY_CONTAINER: "c", TOOL_HOME: "/opt/tool" },
      remoteEnv: {
        LAYERED: "remote",
        LANG: null,
        LITERAL: `${ref("containerEnv:PATH")}:/x $HOME`,
        PATH: "/opt/tool/bin:/usr/bin:/bin",
      },
    });
    const outcome = await runPhase(
      "postCreateCommand",
      { kind: "shell", command: "env -0 > env.out" },
      {
        box,
        cwd,
        recipe,
      },
    );
    expect(outcome.ok).toBe(true);
    const seen = Object.fromEntries(
      (await sh(`cat ${cwd}/env.out`))
        .split("\0")
        .filter(Boolean)
        .map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)]),
    );
    expect(seen).toMatchObject({
      HOME: "/home/vercel-sandbox",
      USER: "vercel-sandbox",
      SHELL: "/bin/bash",
      LAYERED: "remote",
      ONLY_CONTAINER: "c",
      TOOL_HOME: "/opt/tool",
      LITERAL: `${ref("containerEnv:PATH")}:/x $HOME`,
      PATH: "/opt/tool/bin:/usr/bin:/bin",
    });
    expect(seen.NODE_EXTRA_CA_CERTS).toMatch(/^\//);
    // Removed by null, and never part of the minimal environment, respectively.
    expect(Object.keys(seen)).not.toContain("LANG");
    expect(Object.keys(seen)).not.toContain("STRAY");
    expect(Object.keys(seen)).not.toContain("VERCEL_SANDBOX");
    // The sandbox does give those to plain commands, so the absence above is the setup environment's doing.
    expect(await sh('echo "$LANG|$STRAY"')).toBe("C.UTF-8|sandbox-wide\n");
  });

  it("never reaches later commands, login shells or profile files", async () => {
    const cwd = await checkout("no-leak");
    const recipe = recipeOf({ remoteEnv: { RECIPE_ONLY: "phase-value" }, postCreateCommand: "true" });
    const outcome = await runPhase(
      "postCreateCommand",
      { kind: "shell", command: 'test "$RECIPE_ONLY" = phase-value' },
      {
        box,
        cwd,
        recipe,
      },
    );
    expect(outcome.ok).toBe(true);
    const plain = await box.run({ cmd: "printenv", args: ["RECIPE_ONLY"] });
    expect(plain).toMatchObject({ exitCode: 1, stdout: "" });
    expect(await sh("bash -lc 'echo \"[$RECIPE_ONLY]\"'")).toBe("[]\n");
    expect(await sh("grep -rl phase-value /home/vercel-sandbox /etc 2>/dev/null; true")).toBe("");
  });
});

describe("failure output", () => {
  it("keeps the last 16 KiB, with registered secrets and token-shaped text redacted", async () => {
    const cwd = await checkout("output");
    const secret = "prep-secret-4b1c9e";
    registerSecret(secret, "commands-test");
    const command = `s=${secret}; i=0; while [ $i -lt 800 ]; do echo "line $i of filler text for the tail"; i=$((i+1)); done; echo "secret $s token=abcd1234efgh"; echo last >&2; exit 3`;
    const outcome = await runPhase("updateContentCommand", { kind: "shell", command }, { box, cwd, recipe: noEnv });
    expect(outcome.ok).toBe(false);
    expect(Buffer.byteLength(outcome.outputTail)).toBeLessThanOrEqual(16 * 1024);
    expect(Buffer.byteLength(outcome.outputTail)).toBeGreaterThan(15 * 1024);
    expect(outcome.outputTail).toMatch(/^\[… \d+ earlier bytes omitted\]\n/);
    expect(outcome.outputTail).not.toContain("line 0 of");
    expect(outcome.outputTail.endsWith("secret [redacted] token=[redacted]\nlast\n")).toBe(true);
    expect(outcome.outputTail).not.toContain(secret);
    // The label and reason name the command, whose text held the secret too.
    expect(`${outcome.failed} ${outcome.reason}`).not.toContain(secret);
    expect(outcome.failed).toContain("[redacted]");
  });
});

describe("output the gateway keeps", () => {
  it("holds only a tail of a long output, and the omission marker counts every byte before what is shown", async () => {
    const cwd = await checkout("long-output");
    // 300 000 bytes, far past what a member keeps (64 KiB), then a last line.
    const command = "head -c 300000 /dev/zero | tr '\\0' a; echo; echo the-end; exit 2";
    const outcome = await runPhase("onCreateCommand", { kind: "shell", command }, { box, cwd, recipe: noEnv });
    const marker = /^\[… (\d+) earlier bytes omitted\]\n/.exec(outcome.outputTail);
    expect(marker).not.toBeNull();
    const shown = Buffer.byteLength(outcome.outputTail) - Buffer.byteLength(marker![0]);
    expect(Number(marker![1]) + shown).toBe(300_000 + "\nthe-end\n".length);
    expect(outcome.outputTail.endsWith("aaaa\nthe-end\n")).toBe(true);
    expect(Buffer.byteLength(outcome.outputTail)).toBeLessThanOrEqual(16 * 1024);
  });
});

describe("runPhases", () => {
  it("runs the phases in order and stops at the first that fails", async () => {
    const cwd = await checkout("phases");
    const recipe = recipeOf({
      onCreateCommand: "touch on-create.done",
      updateContentCommand: ["sh", "-c", "touch update.tried; exit 5"],
      postCreateCommand: "touch post-create.done",
    });
    const { reports, failed } = await runPhases(
      ["onCreateCommand", "updateContentCommand", "postCreateCommand"],
      recipe,
      { box, cwd },
    );
    expect(reports.map(({ phase, ok }) => [phase, ok])).toEqual([
      ["onCreateCommand", true],
      ["updateContentCommand", false],
    ]);
    expect(failed).toBe(reports[1]);
    expect(failed).toMatchObject({ exitCode: 5, failed: "sh -c touch update.tried; exit 5" });
    expect(await sh(`cd ${cwd} && ls -1`)).toBe("on-create.done\nupdate.tried\n");
  });
});
