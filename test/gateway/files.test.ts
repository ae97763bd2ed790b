// The token-hygiene scan: it reads every regular file (any size, matches across read chunks), says how many it
// read, counts sockets as holding no bytes, and fails on a directory it cannot read instead of skipping it.
import fs from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { scanForSecret } from "./files.js";

const NEEDLE = "needle-0123456789abcdef";
let root: string | undefined;
let server: net.Server | undefined;

afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  server = undefined;
  if (root) await fs.rm(root, { recursive: true, force: true });
});

async function tree(files: Record<string, string | Buffer>): Promise<string> {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "secret-scan-"));
  for (const [name, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await fs.writeFile(path.join(root, name), content);
  }
  return root;
}

describe("scanForSecret", () => {
  it("finds the needle in any file, including across read chunks of a large one, and counts what it read", async () => {
    // 64 KiB is the read stream's chunk size: put the needle across the first chunk edge.
    const big = Buffer.concat([Buffer.alloc(65_536 - 5, "a"), Buffer.from(NEEDLE), Buffer.alloc(70 * 1024, "b")]);
    const dir = await tree({
      "state/openclaw.json": "{}",
      "logs/big.log": big,
      "tmp/clean.txt": "nothing here",
      "logs/hit.txt": `x${NEEDLE}y`,
      "pack/plugin.tgz": NEEDLE,
      "state/node_modules/dep/index.js": NEEDLE,
    });
    const scan = await scanForSecret(dir, NEEDLE);
    expect(scan.matches.sort()).toEqual(["logs/big.log", "logs/hit.txt"]);
    expect(scan.filesRead).toBe(4);
  });

  it("counts a socket as holding no bytes, and reads the files beside it", async () => {
    const dir = await tree({ "state/config.json": NEEDLE });
    const listening = net.createServer();
    server = listening;
    await new Promise<void>((resolve) => listening.listen(path.join(dir, "state", "gateway.sock"), resolve));
    const scan = await scanForSecret(dir, NEEDLE);
    expect(scan).toEqual({ matches: ["state/config.json"], filesRead: 1, notFiles: 1 });
  });

  it("fails when the root cannot be read instead of reporting nothing found", async () => {
    const dir = await tree({ "a.txt": "x" });
    await expect(scanForSecret(path.join(dir, "a.txt"), NEEDLE)).rejects.toThrow(/cannot read directory/);
  });
});
