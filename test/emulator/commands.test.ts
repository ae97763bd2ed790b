import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import { connect, SDKS, useEmulator } from "./harness.js";

const emulator = useEmulator();

describe.each(SDKS)("commands with SDK %s", (_version, { Sandbox }) => {
  it("streams stdout before the command ends", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    // The command only finishes once the marker file exists; the test creates it after seeing output.
    let sawEarlyOutput!: () => void;
    const early = new Promise<void>((resolve) => {
      sawEarlyOutput = resolve;
    });
    const stdout = new Writable({
      write(chunk, _enc, done) {
        if (String(chunk).includes("started")) sawEarlyOutput();
        done();
      },
    });
    const run = sandbox.runCommand({
      cmd: "bash",
      args: ["-c", "echo started; while [ ! -e /tmp/go ]; do sleep 0.05; done; echo finished"],
      stdout,
    });
    await early;
    const state = await sandbox.runCommand("bash", ["-c", "test -e /tmp/go && echo yes || echo no"]);
    expect(await state.stdout()).toBe("no\n");
    await sandbox.runCommand("touch", ["/tmp/go"]);
    const finished = await run;
    expect(await finished.stdout()).toBe("started\nfinished\n");
    await sandbox.delete();
  });

  it("reports non-zero exit codes and separate stderr", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    const result = await sandbox.runCommand("bash", ["-c", "echo out; echo oops >&2; exit 7"]);
    expect(result.exitCode).toBe(7);
    expect(await result.stdout()).toBe("out\n");
    expect(await result.stderr()).toBe("oops\n");
    await sandbox.delete();
  });

  it("keeps non-ASCII output intact", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    const result = await sandbox.runCommand("printf", ["héllo → wörld ✓"]);
    expect(await result.stdout()).toBe("héllo → wörld ✓");
    await sandbox.delete();
  });

  it("runs in /vercel/sandbox as the sandbox user, with sandbox env overridden by command env and cwd", async () => {
    const sandbox = await Sandbox.create({ ...connect(emulator()), env: { A: "sandbox", B: "sandbox" } });
    const result = await sandbox.runCommand({
      cmd: "bash",
      args: ["-c", 'echo "$PWD|$HOME|$USER|$A|$B"'],
      env: { B: "command" },
    });
    expect(await result.stdout()).toBe("/vercel/sandbox|/home/vercel-sandbox|vercel-sandbox|sandbox|command\n");
    await sandbox.mkDir("sub");
    const inSub = await sandbox.runCommand({ cmd: "pwd", cwd: "sub" });
    expect(await inSub.stdout()).toBe("/vercel/sandbox/sub\n");
    const sudo = await sandbox.runCommand({ cmd: "bash", args: ["-c", "echo $HOME $(id -u)"], sudo: true });
    expect(await sudo.stdout()).toBe("/root 0\n");
    await sandbox.delete();
  });

  it("starts a program as a fresh process: default signals, its own session, the user's groups, PWD", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    // SigBlk/SigIgn: no signal ignored or blocked (a Python or Node parent ignores SIGPIPE unless reset); its own
    // session and process group; the default user's groups from the sandbox's /etc/group (wheel: sudo).
    const status = await sandbox.runCommand("bash", [
      "-c",
      'grep -E "^Sig(Ign|Blk)" /proc/self/status; ps -o sid=,pgid=,pid= -p $$; id -G; echo "$PWD"',
    ]);
    const [blk, ign, ids, groups, pwd] = (await status.stdout()).trim().split("\n");
    expect([blk, ign]).toEqual(["SigBlk:\t0000000000000000", "SigIgn:\t0000000000000000"]);
    const [sid, pgid, pid] = ids!.trim().split(/\s+/);
    expect({ sid, pgid }).toEqual({ sid: pid, pgid: pid });
    expect(groups).toBe("1000 10");
    expect(pwd).toBe("/vercel/sandbox");
    // A pipeline whose reader leaves first ends by SIGPIPE, as it does in a terminal.
    const pipe = await sandbox.runCommand("bash", ["-c", "yes | head -1; echo $PIPESTATUS"]);
    expect(await pipe.stdout()).toBe("y\n141\n");
    await sandbox.delete();
  });

  it("names a missing program (127) and a missing working directory (1)", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    const missing = await sandbox.runCommand("no-such-program", ["x"]);
    expect({ code: missing.exitCode, stderr: await missing.stderr() }).toEqual({
      code: 127,
      stderr: "no-such-program: command not found\n",
    });
    const nowhere = await sandbox.runCommand({ cmd: "pwd", cwd: "/no/such/dir" });
    expect({ code: nowhere.exitCode, stderr: await nowhere.stderr() }).toEqual({
      code: 1,
      stderr: "cd: /no/such/dir: No such file or directory\n",
    });
    // A script without a shebang runs under /bin/sh (as execvp does).
    await sandbox.writeFiles([{ path: "plain", content: Buffer.from("echo plain $1\n") }]);
    await sandbox.runCommand("chmod", ["+x", "plain"]);
    const plain = await sandbox.runCommand("./plain", ["ok"]);
    expect(await plain.stdout()).toBe("plain ok\n");
    await sandbox.delete();
  });

  it("has Node >= 22.22.3 first on PATH, and git", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    const node = await sandbox.runCommand("node", ["-p", "process.versions.node"]);
    const [major, minor, patch] = (await node.stdout()).trim().split(".").map(Number);
    expect(major! > 22 || (major === 22 && (minor! > 22 || (minor === 22 && patch! >= 3)))).toBe(true);
    expect((await sandbox.runCommand("git", ["--version"])).exitCode).toBe(0);
    await sandbox.delete();
  });

  it("runs detached commands, waits for them and replays their logs", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    const command = await sandbox.runCommand({
      cmd: "bash",
      args: ["-c", "echo one; sleep 0.2; echo two >&2; exit 3"],
      detached: true,
    });
    expect(command.exitCode).toBeNull();
    const done = await command.wait();
    expect(done.exitCode).toBe(3);
    expect(await command.stdout()).toBe("one\n");
    expect(await command.stderr()).toBe("two\n");
    const lines = [];
    for await (const line of command.logs()) lines.push(line);
    expect(lines).toEqual([
      { stream: "stdout", data: "one\n" },
      { stream: "stderr", data: "two\n" },
    ]);
    const fetched = await sandbox.getCommand(command.cmdId);
    expect(fetched.exitCode).toBe(3);
    await sandbox.delete();
  });

  it("answers a detached command once its program runs: listed right away, it is that program", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    // A long group database makes the user's start slow (its groups are read before the exec), so a command
    // answered before its exec would be listed as a copy of the emulator's starter.
    const groups = "awk 'BEGIN { for (i = 0; i < 1500000; i++) printf \"g%d:x:%d:nobody\\n\", i, 200000 + i }'";
    expect(
      (await sandbox.runCommand({ cmd: "sh", args: ["-c", `${groups} >> /etc/group`], sudo: true })).exitCode,
    ).toBe(0);
    for (const tag of ["3001", "3002", "3003"]) {
      await sandbox.runCommand({ cmd: "sleep", args: [tag], detached: true });
      const listed = await sandbox.runCommand({
        cmd: "sh",
        args: ["-c", 'for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline; echo; done'],
        sudo: true,
      });
      const lines = (await listed.stdout()).split("\n");
      expect(lines).toContain(`sleep ${tag} `);
      expect(lines.filter((line) => line.includes("def program"))).toEqual([]);
    }
    await sandbox.delete();
  });

  it("kills a command, which then exits with 128 + signal", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    const command = await sandbox.runCommand({ cmd: "sleep", args: ["30"], detached: true });
    await command.kill("SIGKILL");
    expect((await command.wait()).exitCode).toBe(137);
    const term = await sandbox.runCommand({ cmd: "sleep", args: ["30"], detached: true });
    await term.kill();
    expect((await term.wait()).exitCode).toBe(143);
    await sandbox.delete();
  });

  it("kills a command that outlives its timeout", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    const result = await sandbox.runCommand({ cmd: "sleep", args: ["30"], timeoutMs: 200 } as never);
    expect(result.exitCode).toBe(137);
    await sandbox.delete();
  });

  it("auto-resumes a stopped sandbox on the next command", async () => {
    const api = emulator();
    const sandbox = await Sandbox.create(connect(api));
    await sandbox.writeFiles([{ path: "kept.txt", content: Buffer.from("survives stop") }]);
    const before = sandbox.currentSession().sessionId;
    await sandbox.stop();
    const result = await sandbox.runCommand("cat", ["kept.txt"]);
    expect({ out: await result.stdout(), err: await result.stderr(), code: result.exitCode }).toEqual({
      out: "survives stop",
      err: "",
      code: 0,
    });
    expect(sandbox.currentSession().sessionId).not.toBe(before);
    const log = api.requests();
    expect(log.some((r) => r.path.endsWith(`/sessions/${before}/cmd`) && r.status === 410)).toBe(true);
    await sandbox.delete();
  });
});
