// The emulator runs next to the user's gateway and must never change a host file. Building the sandbox
// image reads the runtime's Node install: here that install is a fake prefix holding, besides node and
// npm, files of other owners (one set-user-ID) that the image has no use for. Every one of them must keep
// its owner, mode, size, mtime, content and link count, and none of the extra files may reach a sandbox.
import { createHash } from "node:crypto";
import {
  chmod,
  chown,
  copyFile,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  rm,
  symlink,
  writeFile,
} from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import * as sdk from "@vercel/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type LocalSandboxApi, startLocalSandboxApi } from "../../src/emulator/index.js";
import { resolveNodeBinDir } from "../../src/emulator/isolation.js";
import { connect } from "./harness.js";

const OTHER = 12_345;
let prefix: string;
let api: LocalSandboxApi | undefined;

/** Owner, mode, size, mtime, links and content hash of every entry under `dir`, symlinks not followed. */
async function fingerprint(dir: string): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  const walk = async (d: string) => {
    for (const name of await readdir(d)) {
      const p = path.join(d, name);
      const s = await lstat(p);
      const hash = s.isFile()
        ? createHash("sha256")
            .update(await readFile(p))
            .digest("hex")
        : "";
      out[path.relative(dir, p)] = [s.uid, s.gid, s.mode.toString(8), s.size, s.mtimeMs, s.nlink, hash].join(" ");
      if (s.isDirectory()) await walk(p);
    }
  };
  await walk(dir);
  return out;
}

beforeAll(async () => {
  prefix = await mkdtemp(path.join(tmpdir(), "fake-node-prefix-"));
  const npm = path.join(prefix, "lib/node_modules/npm");
  await mkdir(path.join(prefix, "bin"), { recursive: true });
  await mkdir(path.join(npm, "bin"), { recursive: true });
  await mkdir(path.join(prefix, "share/doc"), { recursive: true });
  await copyFile(path.join(resolveNodeBinDir()!, "node"), path.join(prefix, "bin/node"));
  await writeFile(path.join(npm, "package.json"), '{"name":"npm","version":"10.99.1-fake"}\n');
  const cli = "#!/usr/bin/env node\nconsole.log(require('../package.json').version);\n";
  await writeFile(path.join(npm, "bin/npm-cli.js"), cli, { mode: 0o755 });
  await writeFile(path.join(npm, "bin/npx-cli.js"), cli, { mode: 0o755 });
  await symlink("../lib/node_modules/npm/bin/npm-cli.js", path.join(prefix, "bin/npm"));
  await symlink("../lib/node_modules/npm/bin/npx-cli.js", path.join(prefix, "bin/npx"));
  // What a system prefix (/usr) also holds: a set-user-ID program of another owner, unrelated files.
  const suid = path.join(prefix, "bin/extra-suid");
  await copyFile("/bin/true", suid);
  await chown(suid, OTHER, OTHER);
  await chmod(suid, 0o4755);
  await writeFile(path.join(prefix, "share/doc/unrelated.txt"), "not for the sandbox\n", { mode: 0o640 });
  await chown(path.join(prefix, "share/doc/unrelated.txt"), OTHER, OTHER);
  await chown(path.join(prefix, "share"), OTHER, OTHER);
}, 60_000);

afterAll(async () => {
  await api?.close();
  await rm(prefix, { recursive: true, force: true });
});

describe("host files", () => {
  it("building the image and running a sandbox change no file of the runtime's Node prefix", async () => {
    const before = await fingerprint(prefix);
    api = await startLocalSandboxApi({ nodeBinDir: path.join(prefix, "bin") });
    const sandbox = await sdk.Sandbox.create(connect(api));
    const run = async (script: string) => {
      const done = await sandbox.runCommand({ cmd: "bash", args: ["-c", script] });
      return { code: done.exitCode, out: await done.stdout() };
    };
    expect((await run("node --version")).out).toBe(`${process.version}\n`);
    expect((await run("npm --version; npx --version")).out).toBe("10.99.1-fake\n10.99.1-fake\n");
    const extra = await run(
      "ls /opt/vercel-sandbox-node/bin; test -e /opt/vercel-sandbox-node/share && echo share-present; true",
    );
    expect(extra.out).toBe("node\nnpm\nnpx\n");
    // Checked while the image exists: a hard link into it would show as a second link here.
    expect(await fingerprint(prefix)).toEqual(before);
    await sandbox.delete();
    await api.close();
    api = undefined;
    expect(await fingerprint(prefix)).toEqual(before);
  }, 120_000);
});
