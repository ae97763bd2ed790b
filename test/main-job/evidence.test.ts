// The secret scan the job runs on VM1, run here on a local tree: it names the files holding any of the secrets it
// is given (all four, the model key too), skips node_modules, and takes the secrets from its environment only. The proof command, run here with sh: its line holds
// what only running it yields, and survives the redaction OpenClaw applies to tool output before the model sees it.
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { expectedProof, proofCommand, secretsOnDisk } from "../../src/main-job/evidence.js";

let dir = "";
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** VM1 stood in for by this machine: `runCommand` runs the command here, as the box would (node, env only). */
const local = {
  runCommand: async ({ cmd, args, env }: { cmd: string; args?: string[]; env?: Record<string, string> }) => {
    const done = spawnSync(cmd === "node" ? process.execPath : cmd, args ?? [], { env, encoding: "utf8" });
    return { exitCode: done.status, stdout: async () => done.stdout, stderr: async () => done.stderr };
  },
} as unknown as Parameters<typeof secretsOnDisk>[0];

describe("the secret scan of VM1's gateway tree", () => {
  it("names every file holding any of the secrets given, the fourth (the model key) too, outside node_modules", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "vsb-scan-"));
    const secrets = [1, 2, 3, 4].map((i) => `secret-${i}-${randomBytes(8).toString("hex")}`);
    mkdirSync(path.join(dir, "state", "deep"), { recursive: true });
    mkdirSync(path.join(dir, "node_modules", "x"), { recursive: true });
    writeFileSync(path.join(dir, "state", "openclaw.json"), '{"gateway":{"auth":{"mode":"token"}}}');
    writeFileSync(path.join(dir, "state", "deep", "leak.log"), `token=${secrets[0]}!`);
    writeFileSync(path.join(dir, "state", "model.bin"), Buffer.from(`\0\0${secrets[3]}\0`));
    writeFileSync(path.join(dir, "node_modules", "x", "ignored.js"), secrets[1]!);
    expect(await secretsOnDisk(local, secrets, dir)).toEqual([
      path.join(dir, "state", "deep", "leak.log"),
      path.join(dir, "state", "model.bin"),
    ]);
    expect(await secretsOnDisk(local, secrets.slice(1, 3), dir)).toEqual([]);
    // What it cannot scan fails it: a root that is not there.
    await expect(secretsOnDisk(local, secrets, path.join(dir, "gone"))).rejects.toThrow(/secret scan failed on VM1/);
  });
});

/** OpenClaw 2026.9.2's redaction of tool output (`redactToolPayloadText`, a minified export of its redact chunk). */
async function toolOutputRedaction(): Promise<(text: string) => string> {
  const dist = path.join(process.cwd(), "node_modules", "openclaw", "dist");
  const chunk = readdirSync(dist).find((name) => /^redact-[\w-]+\.js$/.test(name));
  if (!chunk) throw new Error("openclaw 2026.9.2 has no dist/redact-*.js; was the package updated?");
  const redact = (await import(pathToFileURL(path.join(dist, chunk)).href)).h;
  if (typeof redact !== "function")
    throw new Error("openclaw's redact chunk no longer exports redactToolPayloadText as h");
  return redact as (text: string) => string;
}

describe("the proof command", () => {
  it("prints the proof, the product and 8 random hex digits, and appends them to the proof file", () => {
    dir = mkdtempSync(path.join(tmpdir(), "vsb-scan-"));
    const file = path.join(dir, "proof.txt");
    const command = proofCommand("proof-0a1b2c3d", 48_611, 77_023, file);
    const out = execFileSync("sh", ["-c", command], { encoding: "utf8" }).trim();
    expect(out).toMatch(new RegExp(`^${expectedProof("proof-0a1b2c3d", 48_611, 77_023)}[0-9a-f]{8}$`));
    expect(expectedProof("proof-0a1b2c3d", 48_611, 77_023)).toBe(`proof-0a1b2c3d ${48_611 * 77_023} `);
    expect(command).not.toContain(String(48_611 * 77_023));
    expect(readFileSync(file, "utf8")).toBe(`${out}\n`);
  });

  it("prints a line OpenClaw's tool-output redaction leaves whole (a `digits:token` shape it would mask)", async () => {
    dir = mkdtempSync(path.join(tmpdir(), "vsb-scan-"));
    const out = execFileSync("sh", ["-c", proofCommand("proof-0a1b2c3d", 48_611, 77_023, path.join(dir, "p"))], {
      encoding: "utf8",
    }).trim();
    const redact = await toolOutputRedaction();
    expect(redact(`The worker ran it and printed:\n${out}`)).toBe(`The worker ran it and printed:\n${out}`);
    // The shape the job used before: OpenClaw took it for a Telegram token and cut the reply.
    expect(redact(`proof-0a1b2c3d:${48_611 * 77_023}:d637936a-32d9-4a8e-97bb-4c6a799ad795`)).toContain("…");
  });
});
