// `openclaw-vercel-sandbox emulator` serves the API until interrupted; its bearer token is a credential, so it
// goes to a 0600 file and never to the terminal.
import { spawn } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { expect, it } from "vitest";
import { REPO_ROOT } from "../gateway/openclaw.js";
import { ensureBuilt } from "../setup/build.js";

it("the emulator command writes its token to a 0600 file, prints none of it, and cleans up on SIGTERM", async () => {
  await ensureBuilt();
  const dir = await mkdtemp(path.join(tmpdir(), "emu-cli-"));
  const tokenFile = path.join(dir, "token");
  const child = spawn(process.execPath, [path.join(REPO_ROOT, "dist/cli.js"), "emulator", "--token-file", tokenFile], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.on("data", (d) => {
    out += d;
  });
  child.stderr.on("data", (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  try {
    for (let i = 0; i < 400 && !out.includes("Ctrl-C"); i++) await new Promise((r) => setTimeout(r, 50));
    expect(out).toContain(`bearer token in ${tokenFile} (0600)`);
    const token = (await readFile(tokenFile, "utf8")).trim();
    expect(token.length).toBeGreaterThanOrEqual(16);
    expect(statSync(tokenFile).mode & 0o777).toBe(0o600);
    expect(out).not.toContain(token);
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out)?.[1];
    const refused = await fetch(`${url}/v2/sandboxes?teamId=team_emulator&projectId=prj_emulator`);
    expect(refused.status).toBe(403);
    const admitted = await fetch(`${url}/v2/sandboxes?teamId=team_emulator&projectId=prj_emulator`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(admitted.status).toBe(200);
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    expect(existsSync(tokenFile)).toBe(false);
  } finally {
    child.kill("SIGKILL");
    await rm(dir, { recursive: true, force: true });
  }
});
