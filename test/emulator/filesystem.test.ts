import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { connect, SDKS, useEmulator } from "./harness.js";

const emulator = useEmulator();

describe.each(SDKS)("filesystem with SDK %s", (_version, { Sandbox }) => {
  it("writes files (relative, absolute and long PAX names) that commands and reads see", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    const longName = `/home/vercel-sandbox/deep/${"n".repeat(150)}.txt`;
    await sandbox.writeFiles([
      { path: "rel/a.txt", content: Buffer.from("relative") },
      { path: "/tmp/emulator/b.sh", content: Buffer.from("#!/bin/sh\necho ran\n"), mode: 0o755 } as never,
      { path: longName, content: Buffer.from("long") },
    ]);
    expect((await sandbox.readFileToBuffer({ path: "rel/a.txt" }))?.toString()).toBe("relative");
    expect(await (await sandbox.runCommand("cat", ["/vercel/sandbox/rel/a.txt"])).stdout()).toBe("relative");
    expect(await (await sandbox.runCommand("cat", [longName])).stdout()).toBe("long");
    expect(await (await sandbox.runCommand("/tmp/emulator/b.sh")).stdout()).toBe("ran\n");
    // Written by the default user, as on Vercel.
    const owners = await sandbox.runCommand("stat", ["-c", "%U %a", "/vercel/sandbox/rel/a.txt", "/tmp/emulator/b.sh"]);
    expect(await owners.stdout()).toBe("vercel-sandbox 644\nvercel-sandbox 755\n");
    await sandbox.delete();
  });

  it("returns null for a missing file and downloads an existing one", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    expect(await sandbox.readFileToBuffer({ path: "nope.txt" })).toBeNull();
    await sandbox.runCommand("bash", ["-c", "printf downloaded > /vercel/sandbox/d.txt"]);
    const dir = await mkdtemp(path.join(tmpdir(), "emu-dl-"));
    try {
      const dst = path.join(dir, "d.txt");
      await sandbox.downloadFile({ path: "d.txt" }, { path: dst });
      expect(await readFile(dst, "utf8")).toBe("downloaded");
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    await sandbox.delete();
  });

  it("makes directories and rejects an existing one", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    await sandbox.mkDir("made");
    expect((await sandbox.runCommand("test", ["-d", "/vercel/sandbox/made"])).exitCode).toBe(0);
    await expect(sandbox.mkDir("made")).rejects.toThrow();
    await sandbox.delete();
  });

  it("supports the sandbox.fs helpers", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    await sandbox.fs.writeFile("/tmp/h.txt", "hello");
    await sandbox.fs.appendFile("/tmp/h.txt", " world");
    expect(await sandbox.fs.readFile("/tmp/h.txt", "utf8")).toBe("hello world");
    await sandbox.fs.mkdir("/vercel/sandbox/x/y", { recursive: true });
    expect(await sandbox.fs.exists("/vercel/sandbox/x/y")).toBe(true);
    expect((await sandbox.fs.stat("/tmp/h.txt")).size).toBe(11);
    expect(await sandbox.fs.readdir("/vercel/sandbox/x")).toEqual(["y"]);
    await sandbox.fs.rm("/vercel/sandbox/x", { recursive: true });
    expect(await sandbox.fs.exists("/vercel/sandbox/x")).toBe(false);
    await expect(sandbox.fs.readFile("/nope", "utf8")).rejects.toMatchObject({ code: "ENOENT" });
    await sandbox.delete();
  });

  it("keeps two sandboxes' files invisible to each other, and off the host", async () => {
    const api = emulator();
    const a = await Sandbox.create(connect(api));
    const b = await Sandbox.create(connect(api));
    await a.writeFiles([
      { path: "secret.txt", content: Buffer.from("a only") },
      { path: "/home/vercel-sandbox/a-only.conf", content: Buffer.from("a") },
      { path: "/tmp/a-tmp", content: Buffer.from("a") },
    ]);
    expect(await b.readFileToBuffer({ path: "secret.txt" })).toBeNull();
    const probe = await b.runCommand("bash", [
      "-c",
      "ls /home/vercel-sandbox/a-only.conf /tmp/a-tmp /vercel/sandbox/secret.txt 2>&1 | grep -c 'No such'",
    ]);
    expect((await probe.stdout()).trim()).toBe("3");
    for (const hostPath of ["/home/vercel-sandbox/a-only.conf", "/vercel/sandbox/secret.txt"]) {
      await expect(readFile(hostPath)).rejects.toMatchObject({ code: "ENOENT" });
    }
    await a.delete();
    await b.delete();
  });
});
