// The host's shared state (src/host/store.ts, redis-store.ts) as several host instances see it. The same contract
// runs on the in-memory store (one instance, pure logic) and on a real Redis (Debian's redis-server, started by
// test/support/redis-server.ts) through two store clients, i.e. two instances: a notification's nonce passes once
// across both and is gone after its window; racing wake snapshots leave the highest revision and refuse a stale or
// equal one; of two instances racing to wake VM1 exactly one holds the admission lock, the other sees "waking",
// only the owner releases it, and it expires when its owner dies; one event id is first-seen once. With Redis
// stopped every operation refuses (HostStoreUnavailableError), verification included: fail closed. Two reference
// hosts (createHost) on one Redis refuse a notification replayed from one to the other and a stale wake snapshot,
// and answer 503 once Redis is gone.
import { createClient } from "redis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type HostStore,
  HostStoreInputError,
  HostStoreUnavailableError,
  type KeptWake,
  MemoryHostStore,
  RedisHostStore,
  signNotification,
  verifyNotification,
  type WakeNotification,
} from "../../src/host/index.js";
import { createHost } from "../../src/reference-host/index.js";
import { type RedisServer, startRedisServer } from "../support/redis-server.js";

const SECRET = "host-store-spec-secret";
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function kept(revision: number): KeptWake {
  return {
    instanceId: `i-${revision}`,
    leadMs: 60_000,
    acceptedAtMs: 1,
    snapshot: { revision, wakes: [{ jobId: `job-${revision}`, runAtMs: 1_000 + revision }] },
  };
}

function notification() {
  const body = JSON.stringify({ version: 1, reason: "idle", instanceId: "i-1", sentAtMs: 1, lastActivityMs: 1 });
  return { body, headers: signNotification(SECRET, body) };
}

let server: RedisServer | undefined;
const opened: RedisHostStore[] = [];
let prefixes = 0;

beforeAll(async () => {
  server = await startRedisServer();
});
afterAll(async () => {
  await Promise.allSettled(opened.splice(0).map((store) => store.close()));
  await server?.dispose();
});

async function redisStore(keyPrefix: string): Promise<RedisHostStore> {
  if (!server) throw new Error("no redis-server");
  const store = await RedisHostStore.connect({ url: server.url, password: server.password, keyPrefix });
  opened.push(store);
  return store;
}

/** Two instances on one state: two Redis clients on one prefix, or the one in-memory store twice. */
const kinds: Array<[string, () => Promise<[HostStore, HostStore]>]> = [
  [
    "in memory",
    async () => {
      const store = new MemoryHostStore();
      return [store, store];
    },
  ],
  [
    "in Redis, two clients",
    async () => {
      const prefix = `spec:${++prefixes}`;
      return [await redisStore(prefix), await redisStore(prefix)];
    },
  ],
];

describe.each(kinds)("the host store %s", (_kind, instances) => {
  it("a notification's nonce passes once across instances, and is forgotten once its window has passed", async () => {
    const [a, b] = await instances();
    const { body, headers } = notification();
    const results = await Promise.all(
      [a, b, a, b].map((store) => verifyNotification({ secret: SECRET, headers, body, nonces: store.nonces })),
    );
    expect(results.filter((r) => r.ok)).toHaveLength(1);
    expect(results.filter((r) => !r.ok).map((r) => !r.ok && r.reason)).toEqual(["replayed", "replayed", "replayed"]);

    const now = Date.now();
    expect(await a.nonces.claim("short-lived", now + 50, now)).toBe(true);
    expect(await b.nonces.claim("short-lived", now + 50, now)).toBe(false);
    await sleep(120);
    expect(await b.nonces.claim("short-lived", Date.now() + 50, Date.now())).toBe(true);
  });

  it("racing wake snapshots leave the highest revision; a stale or equal one is refused", async () => {
    const [a, b] = await instances();
    const revisions = [3, 9, 1, 7, 5, 8, 2, 6, 4];
    const outcomes = await Promise.all(revisions.map((r, i) => (i % 2 ? a : b).wake.replace(kept(r))));
    expect(outcomes).toContain("accepted");
    expect((await a.wake.read())?.snapshot.revision).toBe(9);
    expect(await b.wake.read()).toEqual(kept(9));
    expect(await b.wake.replace(kept(9))).toBe("stale");
    expect(await a.wake.replace(kept(4))).toBe("stale");
    expect(await a.wake.replace(kept(10))).toBe("accepted");
    expect((await b.wake.read())?.snapshot.revision).toBe(10);
  });

  it("of two instances racing to wake VM1 one holds the lock; the other sees waking; only the owner releases", async () => {
    const [a, b] = await instances();
    expect(await a.admission.state()).toBe("unknown");
    const [first, second] = await Promise.all([
      a.admission.acquire("waking", 10_000),
      b.admission.acquire("waking", 10_000),
    ]);
    const winners = [first, second].filter((admission) => admission.acquired);
    expect(winners).toHaveLength(1);
    const loser = first.acquired ? second : first;
    expect(loser).toMatchObject({ acquired: false, state: "waking" });
    expect(!loser.acquired && loser.retryAfterMs).toBeGreaterThan(0);
    expect(await b.admission.state()).toBe("waking");
    // No sleep while the wake is under way.
    expect(await b.admission.acquire("sleeping", 10_000)).toMatchObject({ acquired: false, state: "waking" });

    const lease = winners[0]!.acquired ? winners[0]!.lease : undefined;
    if (!lease) throw new Error("no lease");
    const forged = { intent: "waking" as const, token: "0".repeat(32) };
    expect(await b.admission.release(forged, "asleep")).toBe(false);
    expect(await b.admission.extend(forged, 10_000)).toBe(false);
    expect(await a.admission.state()).toBe("waking");
    expect(await a.admission.extend(lease, 10_000)).toBe(true);
    expect(await a.admission.release(lease, "awake")).toBe(true);
    expect(await b.admission.state()).toBe("awake");
    expect(await a.admission.release(lease, "asleep")).toBe(false); // released once
    expect(await b.admission.state()).toBe("awake");
  });

  it("the lock expires when its owner dies without releasing it; the dead owner's lease then does nothing", async () => {
    const [a, b] = await instances();
    const dead = await a.admission.acquire("sleeping", 80);
    if (!dead.acquired) throw new Error("not acquired");
    expect(await b.admission.acquire("waking", 10_000)).toMatchObject({ acquired: false, state: "sleeping" });
    await sleep(150);
    const next = await b.admission.acquire("waking", 10_000);
    expect(next.acquired).toBe(true);
    expect(await a.admission.extend(dead.lease, 10_000)).toBe(false);
    expect(await a.admission.release(dead.lease, "asleep")).toBe(false);
    expect(await a.admission.state()).toBe("waking");
  });

  it("one event id arriving at several instances at once is first-seen once, and again after its expiry", async () => {
    const [a, b] = await instances();
    const seen = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).events.firstSeen("Ev1", 80)));
    expect(seen.filter(Boolean)).toHaveLength(1);
    expect(await a.events.firstSeen("Ev2", 80)).toBe(true);
    await sleep(150);
    expect(await b.events.firstSeen("Ev1", 80)).toBe(true);
  });

  it("refuses unbounded inputs by name", async () => {
    const [a] = await instances();
    await expect(a.events.firstSeen("x".repeat(257), 1_000)).rejects.toThrow(HostStoreInputError);
    await expect(a.events.firstSeen("", 1_000)).rejects.toThrow(HostStoreInputError);
    await expect(a.events.firstSeen("e", 0)).rejects.toThrow(HostStoreInputError);
    await expect(a.admission.acquire("waking", 8 * 24 * 3_600_000)).rejects.toThrow(HostStoreInputError);
  });
});

/** Two reference hosts (two instances) on one Redis; nothing reaches a gateway or Vercel but the sleep attempt. */
function referenceHost(store: HostStore) {
  const slept: unknown[] = [];
  const host = createHost({
    gatewayUrl: "http://127.0.0.1:9",
    gatewayToken: "gateway-token",
    notifySecret: SECRET,
    connection: { token: "t", teamId: "team", projectId: "project" },
    vmName: "vm1",
    start: { cmd: "true" },
    ready: async () => true,
    store,
    onSlept: (outcome) => slept.push(outcome),
    log: () => undefined,
  });
  const notify = (body: string, headers: Record<string, string>) =>
    host.fetch(new Request("http://host/notify", { method: "POST", body, headers }));
  return { host, notify, slept };
}

function wakeNotification(revision: number): string {
  const notification: WakeNotification = {
    version: 1,
    kind: "wake",
    instanceId: "i-1",
    sentAtMs: 1,
    leadMs: 60_000,
    snapshot: { revision, wakes: [] },
  };
  return JSON.stringify(notification);
}

describe("two reference hosts on one Redis", () => {
  it("refuse a notification replayed from one to the other, and a stale wake snapshot", async () => {
    const prefix = "spec:hosts";
    const [a, b] = [referenceHost(await redisStore(prefix)), referenceHost(await redisStore(prefix))];
    try {
      const { body, headers } = notification();
      const answers = await Promise.all([a.notify(body, headers), b.notify(body, headers)]);
      expect(answers.map((r) => r.status).sort()).toEqual([202, 401]);
      expect(await answers.find((r) => r.status === 401)?.json()).toEqual({ error: "replayed" });

      const newer = wakeNotification(20);
      expect((await a.notify(newer, signNotification(SECRET, newer))).status).toBe(200);
      const older = wakeNotification(19);
      expect((await b.notify(older, signNotification(SECRET, older))).status).toBe(409);
      expect((await b.host.keptWake())?.snapshot.revision).toBe(20);
    } finally {
      a.host.stop();
      b.host.stop();
    }
  });
});

describe("the Redis host store", () => {
  it("keeps no caller text in its keys, and lets no one in without the password", async () => {
    if (!server) throw new Error("no redis-server");
    const store = await redisStore("spec:keys");
    const nonce = "a-nonce-in-the-clear";
    expect(await store.nonces.claim(nonce, Date.now() + 10_000, Date.now())).toBe(true);
    expect(await store.events.firstSeen("event-in-the-clear", 10_000)).toBe(true);
    const raw = createClient({ url: server.url, password: server.password });
    raw.on("error", () => undefined);
    await raw.connect();
    try {
      const keys = await raw.keys("spec:keys:*");
      expect(keys).toHaveLength(2);
      expect(keys.join(" ")).not.toMatch(/in-the-clear/);
    } finally {
      await raw.close();
    }
    const refused = RedisHostStore.connect({ url: server.url, keyPrefix: "spec:nopass" });
    await expect(refused).rejects.toThrow(HostStoreUnavailableError);
    await expect(refused).rejects.toMatchObject({ causeName: "NOAUTH" });
    const wrong = RedisHostStore.connect({ url: server.url, password: "wrong", keyPrefix: "spec:nopass" });
    await expect(wrong).rejects.toMatchObject({ name: "HostStoreUnavailableError", causeName: "WRONGPASS" });
  });

  // Last: it stops the server.
  it("refuses everything once Redis is stopped: verification fails closed with HostStoreUnavailableError", async () => {
    if (!server) throw new Error("no redis-server");
    const store = await redisStore("spec:down");
    const { host, notify } = referenceHost(store);
    expect(await store.events.firstSeen("before", 10_000)).toBe(true);
    await server.stop();
    const signed = notification();
    const answer = await notify(signed.body, signed.headers);
    host.stop();
    expect(answer.status).toBe(503);
    expect(await answer.json()).toEqual({ error: "HostStoreUnavailableError" });
    const { body, headers } = notification();
    const refused = verifyNotification({ secret: SECRET, headers, body, nonces: store.nonces });
    await expect(refused).rejects.toThrow(HostStoreUnavailableError);
    await expect(refused).rejects.toMatchObject({ name: "HostStoreUnavailableError", operation: "nonce claim" });
    await expect(store.wake.replace(kept(1))).rejects.toThrow(HostStoreUnavailableError);
    await expect(store.wake.read()).rejects.toThrow(HostStoreUnavailableError);
    await expect(store.events.firstSeen("after", 10_000)).rejects.toThrow(HostStoreUnavailableError);
    await expect(store.admission.acquire("waking", 10_000)).rejects.toThrow(HostStoreUnavailableError);
    const error = await store.admission.state().catch((e: unknown) => e as Error);
    expect(String(error)).not.toContain(server.password);
  });
});
