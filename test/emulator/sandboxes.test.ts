import { describe, expect, it } from "vitest";
import { connect, SDKS, useEmulator } from "./harness.js";

const emulator = useEmulator();

describe.each(SDKS)("sandboxes with SDK %s", (version, { Sandbox, APIError }) => {
  const tag = `v${version.replace(/\W/g, "")}`;

  it("a resume that comes while a new sandbox boots joins that boot", async () => {
    const api = emulator();
    const name = `joined-${tag}`;
    const creating = Sandbox.create({ ...connect(api), name });
    let created = false;
    void creating.then(() => {
      created = true;
    });
    // Resumes from the moment the name is listed (404 before), as a command run on the sandbox would.
    const resumes: Array<Promise<{ currentSession(): { sessionId: string } }>> = [];
    while (!created && resumes.length < 200) {
      const attempt = Sandbox.get({ ...connect(api), name, resume: true });
      resumes.push(attempt);
      await attempt.catch(() => undefined);
    }
    const sandbox = await creating;
    const joined = (await Promise.allSettled(resumes)).flatMap((r) => (r.status === "fulfilled" ? [r.value] : []));
    expect(joined.length).toBeGreaterThan(0);
    expect(new Set(joined.map((r) => r.currentSession().sessionId))).toEqual(
      new Set([sandbox.currentSession().sessionId]),
    );
    // A second overlay on the same work dir breaks the copy-up this mkdir needs (ENOENT), or its own mount.
    const out = await sandbox.runCommand("mkdir", ["/home/vercel-sandbox/.made"]);
    expect({ code: out.exitCode, stderr: await out.stderr() }).toEqual({ code: 0, stderr: "" });
    await sandbox.delete();
  });

  it("creates a running sandbox on the v3 path and reads it back without resuming", async () => {
    const api = emulator();
    const sandbox = await Sandbox.create({ ...connect(api), tags: { suite: tag } });
    expect(sandbox.status).toBe("running");
    expect(sandbox.cwd).toBe("/vercel/sandbox");
    const again = await Sandbox.get({ ...connect(api), name: sandbox.name });
    expect(again.currentSession().sessionId).toBe(sandbox.currentSession().sessionId);
    expect(api.requests().some((r) => r.method === "POST" && r.path === "/v3/sandboxes")).toBe(true);
    await sandbox.delete();
  });

  it("creates from a legacy runtime on the v2 path", async () => {
    const api = emulator();
    const sandbox = await Sandbox.create({ ...connect(api), runtime: "node24" });
    expect(sandbox.runtime).toBe("node24");
    expect(api.requests().some((r) => r.method === "POST" && r.path === "/v2/sandboxes")).toBe(true);
    await sandbox.delete();
  });

  it("get without resume returns the stopped session; get with resume boots a new one", async () => {
    const api = emulator();
    const sandbox = await Sandbox.create(connect(api));
    const first = sandbox.currentSession().sessionId;
    await sandbox.stop();
    const stopped = await Sandbox.get({ ...connect(api), name: sandbox.name });
    expect(stopped.status).toBe("stopped");
    expect(stopped.currentSession().sessionId).toBe(first);
    const resumed = await Sandbox.get({ ...connect(api), name: sandbox.name, resume: true });
    expect(resumed.status).toBe("running");
    expect(resumed.currentSession().sessionId).not.toBe(first);
    await resumed.delete();
  });

  it("lists sandboxes by tag and name prefix across pages", async () => {
    const api = emulator();
    const prefix = `list-${tag}-`;
    const made = [];
    for (let i = 0; i < 3; i++) {
      made.push(await Sandbox.create({ ...connect(api), name: `${prefix}${i}`, tags: { group: prefix } }));
    }
    const byPrefix = await (await Sandbox.list({ ...connect(api), namePrefix: prefix, limit: 2 })).toArray();
    expect(byPrefix.map((s) => s.name).sort()).toEqual([`${prefix}0`, `${prefix}1`, `${prefix}2`]);
    const byTag = await (await Sandbox.list({ ...connect(api), tags: { group: prefix } })).toArray();
    expect(byTag).toHaveLength(3);
    const none = await (await Sandbox.list({ ...connect(api), tags: { group: "nobody" } })).toArray();
    expect(none).toHaveLength(0);
    for (const s of made) await s.delete();
  });

  it("updates timeout, tags and network policy, and echoes the policy in the SDK's shape", async () => {
    const api = emulator();
    const sandbox = await Sandbox.create({ ...connect(api), timeout: 60_000 });
    await sandbox.update({ timeout: 120_000, tags: { stage: "two" }, networkPolicy: "deny-all" });
    const fresh = await Sandbox.get({ ...connect(api), name: sandbox.name });
    expect(fresh.timeout).toBe(120_000);
    expect(fresh.tags).toEqual({ stage: "two" });
    expect(fresh.networkPolicy).toEqual("deny-all");
    await sandbox.updateNetworkPolicy({ allow: ["example.com"], subnets: { deny: ["10.0.0.0/8"] } });
    const session = (await (await sandbox.listSessions()).toArray()).find(
      (s) => s.id === sandbox.currentSession().sessionId,
    );
    expect(session?.networkPolicy).toMatchObject({ mode: "custom", allowedDomains: ["example.com"] });
    await sandbox.delete();
  });

  it("extends the running session's timeout", async () => {
    const api = emulator();
    const sandbox = await Sandbox.create({ ...connect(api), timeout: 60_000 });
    await sandbox.extendTimeout(30_000);
    const sessions = await (await sandbox.listSessions()).toArray();
    expect(sessions.find((s) => s.id === sandbox.currentSession().sessionId)?.timeout).toBe(90_000);
    await sandbox.delete();
  });

  it("deletes a sandbox, after which get answers 404", async () => {
    const api = emulator();
    const sandbox = await Sandbox.create(connect(api));
    await sandbox.delete();
    const error = await Sandbox.get({ ...connect(api), name: sandbox.name }).catch((e) => e);
    expect(error).toBeInstanceOf(APIError);
    expect(error.response.status).toBe(404);
  });

  it("forks a stopped sandbox with its files as its stop left them, under a new name", async () => {
    const api = emulator();
    const source = await Sandbox.create(connect(api));
    await source.writeFiles([{ path: "forked.txt", content: Buffer.from("from source") }]);
    await source.stop();
    const fork = await Sandbox.fork({ ...connect(api), sourceSandbox: source.name });
    expect(fork.name).not.toBe(source.name);
    expect((await fork.readFileToBuffer({ path: "forked.txt" }))?.toString()).toBe("from source");
    await fork.delete();
    await source.delete();
  });

  it("getOrCreate creates a missing sandbox once, then adopts it", async () => {
    const api = emulator();
    const name = `goc-${tag}`;
    let created = 0;
    const first = await Sandbox.getOrCreate({ ...connect(api), name, onCreate: async () => void created++ });
    const second = await Sandbox.getOrCreate({ ...connect(api), name, onCreate: async () => void created++ });
    expect(created).toBe(1);
    expect(second.name).toBe(first.name);
    await second.delete();
  });

  it("getOrCreate recreates a sandbox whose restore snapshot was deleted", async () => {
    const api = emulator();
    const name = `goc-snap-${tag}`;
    const sandbox = await Sandbox.create({ ...connect(api), name });
    const snapshot = await sandbox.snapshot();
    await snapshot.delete();
    let created = 0;
    const again = await Sandbox.getOrCreate({ ...connect(api), name, onCreate: async () => void created++ });
    expect(created).toBe(1);
    expect(again.status).toBe("running");
    expect(api.requests().some((r) => r.method === "DELETE" && r.path === `/v2/sandboxes/${name}`)).toBe(true);
    await again.delete();
  });

  it("lists a sandbox's sessions, one per boot", async () => {
    const api = emulator();
    const sandbox = await Sandbox.create(connect(api));
    await sandbox.stop();
    await sandbox.runCommand("true");
    const sessions = await (await sandbox.listSessions()).toArray();
    expect(sessions.map((s) => s.status).sort()).toEqual(["running", "stopped"]);
    await sandbox.delete();
  });
});
