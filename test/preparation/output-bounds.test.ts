// Output from the box is untrusted and may be endless: the gateway holds a bounded tail of each command's
// streams (and a bounded total across a phase's parallel commands), and output it needs whole (our own
// programs' JSON lines) is bounded too, failing by name past the bound. The emulator runs in its own process
// (the built CLI), so this process's memory is the gateway side alone; the SDK is the real one.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { runPhase } from "../../src/preparation/commands.js";
import { parseSettings } from "../../src/settings/profile.js";
import {
  BoxOutputTooLargeError,
  type SandboxBox,
  type SandboxHandle,
  VercelClient,
  type VercelProject,
} from "../../src/vercel/client.js";
import { REPO_ROOT } from "../gateway/openclaw.js";
import { ensureBuilt } from "../setup/build.js";

// Each parallel command prints this much; three of them print far more than the allowed growth.
const EACH_BYTES = Number(process.env.OUTPUT_BOUNDS_EACH_MB ?? 512) * 1024 * 1024;
// Far below what is printed (old code grew by more than the output), with room for the garbage V8 collects lazily.
const ALLOWED_GROWTH_BYTES = 300 * 1024 * 1024;

let dir: string;
let emulator: ChildProcess | undefined;
let project: VercelProject;
let sandbox: SandboxHandle;
let box: SandboxBox;

beforeAll(async () => {
  await ensureBuilt();
  dir = await mkdtemp(path.join(tmpdir(), "output-bounds-"));
  const tokenFile = path.join(dir, "token");
  emulator = spawn(process.execPath, [path.join(REPO_ROOT, "dist/cli.js"), "emulator", "--token-file", tokenFile], {
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let said = "";
  emulator.stdout!.on("data", (d) => {
    said += d;
  });
  emulator.stderr!.on("data", (d) => {
    said += d;
  });
  for (let i = 0; i < 600 && !said.includes("Ctrl-C"); i++) await new Promise((r) => setTimeout(r, 50));
  const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(said)?.[1];
  if (!url) throw new Error(`the emulator did not start: ${said}`);
  const token = (await readFile(tokenFile, "utf8")).trim();
  const fetch = ((input: string | URL | Request, init?: RequestInit) => {
    const target = typeof input === "string" || input instanceof URL ? String(input) : input.url;
    return globalThis.fetch(target.replace("https://vercel.com/api", url), init);
  }) as typeof globalThis.fetch;
  const client = new VercelClient({
    fetch,
    credentials: { token, teamId: "team_emulator", projectId: "prj_emulator" },
  });
  project = await client.project(parseSettings({}));
  sandbox = await project.create({ name: "output-bounds", runtime: "node24" });
  box = project.box(sandbox);
}, 600_000);
afterAll(async () => {
  try {
    if (sandbox) await project.delete(sandbox, true);
  } finally {
    if (emulator?.pid) {
      const exited = new Promise((resolve) => emulator!.once("exit", resolve));
      process.kill(-emulator.pid, "SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
      if (emulator.exitCode === null) process.kill(-emulator.pid, "SIGKILL");
    }
    if (dir) await rm(dir, { recursive: true, force: true });
  }
}, 60_000);

/** Runs `work` while sampling this process's heap and external memory; returns the peak growth over the start. */
async function peakGrowth(work: () => Promise<unknown>): Promise<number> {
  const used = () => {
    const { heapUsed, external } = process.memoryUsage();
    return heapUsed + external;
  };
  globalThis.gc?.();
  const start = used();
  let peak = start;
  const sampler = setInterval(() => {
    peak = Math.max(peak, used());
  }, 10);
  try {
    await work();
  } finally {
    clearInterval(sampler);
  }
  return Math.max(peak, used()) - start;
}

const flood = (name: string) =>
  `head -c ${EACH_BYTES} /dev/zero | tr '\\0' '${name}'; echo; echo "end of ${name}"; exit 3`;

it("three parallel commands printing far past memory keep the gateway's heap bounded and report their tails", async () => {
  let outcome: Awaited<ReturnType<typeof runPhase>> | undefined;
  const growth = await peakGrowth(async () => {
    outcome = await runPhase(
      "postCreateCommand",
      {
        kind: "parallel",
        commands: {
          x: { kind: "shell", command: flood("x") },
          y: { kind: "shell", command: flood("y") },
          z: { kind: "shell", command: flood("z") },
        },
      },
      { box, cwd: "/vercel/sandbox", recipe: { env: {}, unset: [] } },
    );
  });
  console.log(
    `output-bounds: ${(3 * EACH_BYTES) / 2 ** 20} MiB printed, peak growth ${Math.round(growth / 2 ** 20)} MiB`,
  );
  expect(outcome).toMatchObject({ ok: false, failed: "x, y, z" });
  for (const name of ["x", "y", "z"]) {
    const section = new RegExp(
      `--- ${name} \\(exit 3\\) ---\\n\\[… (\\d+) earlier bytes omitted\\]\\n${name}+\\nend of ${name}\\n`,
    );
    const found = section.exec(outcome!.outputTail);
    expect(found, `${name}'s tail`).not.toBeNull();
    // Everything but the kept tail is counted as omitted: the count reaches back to the start of the output.
    expect(Number(found![1])).toBeGreaterThan(EACH_BYTES - 16 * 1024);
  }
  expect(Buffer.byteLength(outcome!.outputTail)).toBeLessThanOrEqual(16 * 1024);
  expect(growth).toBeLessThan(ALLOWED_GROWTH_BYTES);
}, 600_000);

it("output needed whole is bounded: a program printing past the bound fails by name, not by memory", async () => {
  const growth = await peakGrowth(async () => {
    const error = await box
      .run({ cmd: "/bin/sh", args: ["-c", `head -c ${EACH_BYTES} /dev/zero | tr '\\0' x`] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(BoxOutputTooLargeError);
    expect(error).toMatchObject({ stream: "stdout", limitBytes: 1024 * 1024 });
  });
  expect(growth).toBeLessThan(ALLOWED_GROWTH_BYTES);
}, 600_000);

it("output within the bound comes back whole, with nothing dropped", async () => {
  const result = await box.run({
    cmd: "/bin/sh",
    args: ["-c", "head -c 300000 /dev/zero | tr '\\0' a; echo >&2 said"],
  });
  expect(result.stdout).toBe("a".repeat(300_000));
  expect(result.stderr).toBe("said\n");
  expect(result.dropped).toEqual({ stdout: 0, stderr: 0 });
});
