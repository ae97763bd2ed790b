// Interactive shells: `sandbox.openInteractive()` from the unmodified SDK, then the `sandbox` CLI's
// WebSocket protocol (start frame, binary input and output, resize frames, exit frame) against a real
// PTY in the sandbox, as its default user in its namespaces.
import { describe, expect, it } from "vitest";
import { parseStart } from "../../src/emulator/interactive.js";
import { connect, SDKS, sh, useEmulator } from "./harness.js";
import { attach } from "./interactive-client.js";

const emulator = useEmulator();

describe.each(SDKS)("interactive shells with SDK %s", (_version, { Sandbox }) => {
  it("is a real terminal: the account's login shell as the sandbox user, input, output and resize", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    const { url, token } = await sandbox.openInteractive();
    const shell = await attach(url, token);
    // Quotes split the markers so the terminal's echo of the typed line never matches them.
    shell.send(`echo "who=$(id -un) tty=$(tty) cwd=$(pwd) shell=$0 size=$(stty size)"'.'\n`);
    const out = await shell.waitFor(/who=\w[^\n]*\./);
    expect(out).toMatch(/who=vercel-sandbox tty=\/dev\/pts\/\d+ cwd=\/vercel\/sandbox shell=\S*bash size=30 100\./);
    shell.resize(120, 50);
    shell.send(`echo "resized=$(stty size)"'.'\n`);
    expect(await shell.waitFor(/resized=50 120\./)).toContain("resized=50 120.");
    shell.send("exit 7\n");
    expect(await shell.exit).toBe(7);
    await sandbox.delete();
  });

  it("Ctrl-C interrupts the foreground program and the shell carries on", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    const { url, token } = await sandbox.openInteractive();
    const shell = await attach(url, token);
    // The program announces itself from inside the foreground job, so the interrupt cannot land before it runs.
    shell.send(`bash -c 'echo sle""eping; exec sleep 60'\n`);
    await shell.waitFor(/sleeping\r?\n/);
    shell.send("\x03");
    // The line discipline flushes typed-ahead input on an interrupt: type again once the prompt is back.
    await shell.waitFor(/\^C[\s\S]*\$ $/);
    shell.send(`echo "after=$?"'.'\n`);
    expect(await shell.waitFor(/after=\d+\./)).toMatch(/after=130\./);
    shell.send("exit 4\n");
    expect(await shell.exit).toBe(4);
    await sandbox.delete();
  });

  it("the connection's end ends the shell and what it runs; a token works once", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    const { url, token } = await sandbox.openInteractive();
    const shell = await attach(url, token);
    shell.send(`echo $$ > /tmp/shell.pid; sleep 1000 & echo "bg=$!"'.'\n`);
    const bg = /bg=(\d+)\./.exec(await shell.waitFor(/bg=\d+\./))![1];
    const pid = (await sh(sandbox, "cat /tmp/shell.pid")).out.trim();
    expect((await sh(sandbox, `kill -0 ${pid} && kill -0 ${bg} && echo alive`)).out).toBe("alive\n");
    shell.close();
    await shell.closed;
    let alive = "";
    for (let i = 0; i < 100; i++) {
      alive = (await sh(sandbox, `kill -0 ${pid} 2>/dev/null && echo shell; kill -0 ${bg} 2>/dev/null && echo bg`)).out;
      if (alive === "") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(alive).toBe("");
    await expect(attach(url, token)).rejects.toThrow(/failed/);
    await expect(attach(url, "not-a-token")).rejects.toThrow(/failed/);
    await sandbox.delete();
  });

  it("an explicit command runs on the terminal and its exit status comes back; a stopped sandbox is resumed", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    await sandbox.stop();
    const { url, token } = await sandbox.openInteractive();
    expect((await Sandbox.get({ ...connect(emulator()), name: sandbox.name })).status).toBe("running");
    const shell = await attach(url, token, { command: "bash", args: ["-c", "test -t 0 && test -t 1 && exit 3"] });
    expect(await shell.exit).toBe(3);
    await sandbox.delete();
  });
});

describe("the start frame (pure)", () => {
  it("reads env entries, bounds the size and defaults what is missing", () => {
    expect(parseStart(JSON.stringify({ type: "start", env: ["A=1=2", "bad"], cols: 5000, rows: 0 }))).toEqual({
      command: "",
      args: [],
      env: { A: "1=2" },
      cwd: "/home/vercel-sandbox",
      cols: 1000,
      rows: 24,
    });
    expect(parseStart(JSON.stringify({ type: "resize" }))).toBeUndefined();
    expect(parseStart("not json")).toBeUndefined();
  });
});
