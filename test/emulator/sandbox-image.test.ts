// An emulated sandbox is a sandbox: its own root with nothing of the host, Vercel's user model, and
// file endpoints that resolve every path inside it. With `backend: "embedded"` the host is the user's
// gateway, so each check here is one way a worker could otherwise reach the gateway's files.
import { randomBytes } from "node:crypto";
import { readFile, rm, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, SDKS, useEmulator } from "./harness.js";

const emulator = useEmulator();

/** Marker files the test writes on the host; no sandbox may see them. */
const marker = randomBytes(8).toString("hex");
const hostMarkers = [
  path.join(homedir(), `.emulator-marker-${marker}`),
  path.join(tmpdir(), `emulator-marker-${marker}`),
];

beforeAll(async () => {
  for (const file of hostMarkers) await writeFile(file, `host-secret-${marker}\n`, { mode: 0o644 });
});

afterAll(async () => {
  for (const file of hostMarkers) await rm(file, { force: true });
});

describe.each(SDKS)("the sandbox image with SDK %s", (_version, { Sandbox }) => {
  type Box = Awaited<ReturnType<typeof Sandbox.create>>;
  const sh = async (sandbox: Box, script: string, sudo = false) => {
    const done = await sandbox.runCommand({ cmd: "bash", args: ["-c", script], sudo });
    return { code: done.exitCode, out: await done.stdout(), err: await done.stderr() };
  };

  it("commands run as vercel-sandbox, and sudo (option or command) is root of the sandbox only", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    expect((await sh(sandbox, "id -un; id -u; id -Gn")).out).toBe("vercel-sandbox\n1000\nvercel-sandbox wheel\n");
    expect((await sh(sandbox, "sudo id -u; sudo -u vercel-sandbox id -un; echo $HOME")).out).toBe(
      "0\nvercel-sandbox\n/home/vercel-sandbox\n",
    );
    expect((await sh(sandbox, "id -u; echo $HOME", true)).out).toBe("0\n/root\n");
    // Root of the sandbox cannot mount or reach host devices, and, as in a VM, cannot end the namespace's init:
    // the kernel drops a signal from inside for which init has no handler, so PID 1 is the same process after.
    const root = await sh(
      sandbox,
      "mount -t tmpfs t /mnt 2>&1; echo m=$?; mknod /tmp/d c 1 3 2>&1; echo n=$?; " +
        "before=$(cut -d' ' -f22 /proc/1/stat); for s in KILL TERM INT HUP STOP; do kill -$s 1; done; " +
        "sleep 0.2; echo init=$before:$(cut -d' ' -f22 /proc/1/stat):$(sed -n 's/^State:.\\(.\\).*/\\1/p' /proc/1/status)",
      true,
    );
    expect(root.out).toMatch(/m=(?!0)\d+/);
    expect(root.out).toMatch(/n=(?!0)\d+/);
    expect(root.out).toMatch(/^init=(\d+):\1:S$/m);
    expect((await sh(sandbox, "echo still")).out).toBe("still\n");
    await sandbox.delete();
  });

  it("the root holds the runtime's directories and nothing else of the host", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    const top = (await sh(sandbox, "ls -A /", true)).out.trim().split("\n");
    expect(top).not.toContain("work");
    expect(top).not.toContain("old_root");
    expect(new Set(top)).toEqual(
      new Set(
        top.filter((d) =>
          /^(bin|sbin|lib|lib32|lib64|libx32|dev|etc|home|mnt|opt|proc|root|run|srv|tmp|usr|var|vercel)$/.test(d),
        ),
      ),
    );
    for (const p of [
      "/vercel/sandbox",
      "/home/vercel-sandbox",
      "/tmp",
      "/usr/bin/git",
      "/opt/vercel-sandbox-node/bin/node",
    ]) {
      expect((await sh(sandbox, `test -e ${p}`)).code, p).toBe(0);
    }
    // The host's home, the checkout running this test, and the markers written on the host are absent.
    const hostPaths = [process.cwd(), ...hostMarkers, path.join(homedir(), ".npmrc")];
    const probe = await sh(sandbox, hostPaths.map((p) => `test -e '${p}' && echo "present ${p}"`).join("; "), true);
    expect(probe.out).toBe("");
    const everywhere = "--exclude-dir=proc --exclude-dir=dev --exclude-dir=usr /";
    const search = await sh(sandbox, `grep -rls 'host-secret-${marker}' ${everywhere} 2>/dev/null | head -5`, true);
    expect(search.out).toBe("");
    expect((await sh(sandbox, "ls -A /root /home", true)).out).toBe("/home:\nvercel-sandbox\n\n/root:\n");
    expect((await sh(sandbox, "cat /etc/passwd | cut -d: -f1", true)).out).toBe("root\nvercel-sandbox\nnobody\n");
    // The system directories are read-only, even for sandbox root.
    expect((await sh(sandbox, "touch /usr/bin/x 2>&1; echo $?", true)).out).toMatch(/Read-only file system\n1\n$/);
    // The mount table names none of the host's paths.
    expect((await sh(sandbox, "cat /proc/self/mountinfo")).out).not.toContain(tmpdir());
    await sandbox.delete();
  });

  it("/dev holds only the minimal set", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    const dev = (await sh(sandbox, "ls -A /dev")).out.trim().split("\n").sort();
    expect(dev).toEqual(
      [
        "fd",
        "full",
        "mqueue",
        "null",
        "ptmx",
        "pts",
        "random",
        "shm",
        "stderr",
        "stdin",
        "stdout",
        "tty",
        "urandom",
        "zero",
      ].sort(),
    );
    expect((await sh(sandbox, "head -c 4 /dev/urandom | wc -c; echo x > /dev/null && echo ok")).out).toBe("4\nok\n");
    await sandbox.delete();
  });

  it("file endpoints resolve symlinks inside the sandbox and apply its permissions", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    const [homeMarker, tmpMarker] = hostMarkers as [string, string];
    await sh(
      sandbox,
      `ln -s /etc/shadow shadow; ln -s '${homeMarker}' home-marker; ln -s '${tmpMarker}' tmp-marker; ln -s /etc/passwd passwd; ln -s /etc etc-dir`,
    );
    await expect(sandbox.readFileToBuffer({ path: "shadow" })).rejects.toThrow(/403/);
    expect(await sandbox.readFileToBuffer({ path: "home-marker" })).toBeNull();
    expect(await sandbox.readFileToBuffer({ path: "tmp-marker" })).toBeNull();
    expect(await sandbox.readFileToBuffer({ path: "/etc/shadow" }).catch((e: Error) => e.message)).toMatch(/403/);
    // A write to a symlink replaces the link with the user's own file; one through a linked directory
    // the user may not write is refused. Neither touches the target, nor anything on the host.
    await sandbox.writeFiles([{ path: "passwd", content: Buffer.from("owned\n") }]);
    await expect(sandbox.writeFiles([{ path: "etc-dir/evil.conf", content: Buffer.from("x") }])).rejects.toThrow(/403/);
    await expect(sandbox.writeFiles([{ path: "/etc/evil.conf", content: Buffer.from("x") }])).rejects.toThrow(/403/);
    await sandbox.writeFiles([{ path: "home-marker", content: Buffer.from("replaced") }]);
    for (const file of hostMarkers) expect(await readFile(file, "utf8")).toBe(`host-secret-${marker}\n`);
    const after = await sh(
      sandbox,
      "head -1 /etc/passwd; test -e /etc/evil.conf || echo absent; stat -c '%F %U' passwd",
      true,
    );
    expect(after.out).toBe("root:x:0:0:root:/root:/bin/bash\nabsent\nregular file vercel-sandbox\n");
    await sandbox.delete();
  });

  it("Sandbox.createUser gives a user of its own, without sudo", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    const alice = await sandbox.createUser("alice");
    const who = await alice.runCommand("bash", ["-c", "id -un; pwd; sudo -n true 2>&1; echo sudo=$?"]);
    expect(await who.stdout()).toMatch(/^alice\n\/home\/alice\n.*not in the sudoers file\.\nsudo=1\n$/);
    await alice.writeFiles([{ path: "private.txt", content: Buffer.from("alice only") }]);
    await alice.runCommand("chmod", ["600", "/home/alice/private.txt"]);
    expect((await sh(sandbox, "cat /home/alice/private.txt 2>&1; echo rc=$?")).out).toMatch(
      /Permission denied\nrc=1\n$/,
    );
    expect((await sh(sandbox, "cat /home/alice/private.txt", true)).out).toBe("alice only");
    await sandbox.delete();
  });
});
