// `openclaw-vercel-sandbox demo`, first half (the demo room, beside provider.ts): a visible end-to-end
// lifecycle through the real SDK against the local emulator, so a newcomer can see every moving part work in a
// few seconds.
import { Writable } from "node:stream";
import { Sandbox } from "@vercel/sandbox";
import { startLocalSandboxApi } from "../emulator/index.js";

type Log = (line: string) => void;

export async function runEmulatorDemo(log: Log = (line) => process.stdout.write(`${line}\n`)): Promise<void> {
  const t0 = performance.now();
  const api = await startLocalSandboxApi();
  const connection = { ...api.credentials, fetch: api.fetch };
  const step = async <T>(label: string, fn: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    const value = await fn();
    log(`  ✓ ${label} (${Math.round(performance.now() - started)} ms)`);
    return value;
  };
  log(`emulator listening on ${api.url}`);
  const created: Sandbox[] = [];
  try {
    const sandbox = await step("create sandbox", () => Sandbox.create(connection));
    created.push(sandbox);
    log(`    name ${sandbox.name}, session ${sandbox.currentSession().sessionId}`);
    await step("write hello.txt", () =>
      sandbox.writeFiles([{ path: "hello.txt", content: Buffer.from("hello from the demo\n") }]),
    );
    const stdout = new Writable({
      write(chunk, _encoding, done) {
        for (const line of String(chunk).split("\n").filter(Boolean)) log(`    | ${line}`);
        done();
      },
    });
    const streamed = await step("run a streamed command", () =>
      sandbox.runCommand({
        cmd: "bash",
        args: ["-c", "for i in 1 2 3; do echo tick $i; sleep 0.1; done; node --version; cat hello.txt"],
        stdout,
      }),
    );
    if (streamed.exitCode !== 0) throw new Error(`the streamed command exited with ${streamed.exitCode}`);
    const snapshot = await step("snapshot (stops the source)", () => sandbox.snapshot());
    log(`    snapshot ${snapshot.snapshotId}`);
    const copy = await step("create from snapshot", () =>
      Sandbox.create({ ...connection, source: { type: "snapshot", snapshotId: snapshot.snapshotId } }),
    );
    created.push(copy);
    const content = await step("read hello.txt in the copy", async () =>
      (await copy.readFileToBuffer({ path: "hello.txt" }))?.toString(),
    );
    if (content !== "hello from the demo\n")
      throw new Error("the file is missing from the sandbox made from the snapshot");
    await step("stop the copy", () => copy.stop());
    const resumed = await step("run a command (auto-resumes)", () => copy.runCommand("cat", ["hello.txt"]));
    if ((await resumed.stdout()) !== content) throw new Error("the file did not survive stop and resume");
    await step("delete both sandboxes", async () => {
      for (const s of created.splice(0)) await s.delete({ deleteOrphanSnapshots: true });
    });
    log(`demo finished in ${Math.round(performance.now() - t0)} ms, ${api.requests().length} API requests`);
  } finally {
    for (const s of created) await s.delete().catch(() => {});
    await api.close();
  }
}
