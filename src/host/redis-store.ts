// The host's shared state in Redis (the HostStore of store.ts), for any number of host instances on one Redis.
// Every operation is one atomic command or Lua script (EVAL), so two instances never interleave inside one:
//   nonces     SET <prefix>:nonce:<sha256> 1 NX PX <until the window refuses it by itself>
//   events     SET <prefix>:event:<sha256> 1 NX PX <ttl>
//   wake       a hash <prefix>:wake {revision, kept}; replaced only by a higher revision (checked in the script)
//   admission  SET <prefix>:admission <intent>:<owner token> NX PX <ttl>; extended or released (DEL, and the
//              settled state written to <prefix>:lifecycle) only when the value is still the owner's
// Ids are hashed into keys (bounded, no caller text in a key). A command that fails or takes longer than
// `timeoutMs` throws HostStoreUnavailableError (fail closed); a timed-out command may still run later, which
// errs on the safe side (a nonce or event id recorded, a lock that expires after its ttl). Durability is the
// server's: run Redis with `appendonly yes` (and `appendfsync always` to lose nothing acknowledged on a crash).
import { createHash } from "node:crypto";
import {
  type Admission,
  type AdmissionIntent,
  type AdmissionLease,
  type AdmissionLock,
  checkId,
  checkIntent,
  checkSettled,
  checkTtl,
  type EventDedupe,
  type HostStore,
  HostStoreInputError,
  HostStoreUnavailableError,
  ownerToken,
  type SettledLifecycle,
  type VmLifecycle,
} from "./store.js";
import type { NonceStore } from "./verify.js";
import { type KeptWake, parseKept, type WakeStore } from "./wake.js";

/** What the store needs of a node-redis client (`createClient` from `redis`, connected): EVAL only. */
export interface RedisHostClient {
  eval(script: string, options: { keys: string[]; arguments: string[] }): Promise<unknown>;
}

export interface RedisHostStoreOptions {
  /** Prefix of every key (letters, digits, `:_-`, at most 64); one per VM1 when hosts share a Redis. */
  keyPrefix?: string;
  /** How long one operation may take before it counts as unanswered (default 2 s). */
  timeoutMs?: number;
}

export interface RedisConnectOptions extends RedisHostStoreOptions {
  /** `redis://host:port` (or `rediss://`); keep the password out of it and in `password`. */
  url: string;
  username?: string;
  password?: string;
  /** Called with the name or code of each client error (never its message). */
  onError?: (name: string) => void;
}

/** Most bytes of a kept wake snapshot (MAX_WAKES wakes fit many times over). */
const MAX_KEPT_BYTES = 512 * 1024;

const SET_NX_PX = `return redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) and 1 or 0`;
const WAKE_READ = `return redis.call('HGET', KEYS[1], 'kept')`;
const WAKE_REPLACE = `
local current = redis.call('HGET', KEYS[1], 'revision')
if current and tonumber(current) >= tonumber(ARGV[1]) then return 0 end
redis.call('HSET', KEYS[1], 'revision', ARGV[1], 'kept', ARGV[2])
return 1`;
const ACQUIRE = `
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then return 1 end
return {redis.call('GET', KEYS[1]), redis.call('PTTL', KEYS[1])}`;
const EXTEND = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`;
const RELEASE = `
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], ARGV[2])
return 1`;
const STATE = `
local held = redis.call('GET', KEYS[1])
if held then return held end
return redis.call('GET', KEYS[2])`;

/** Error replies no retry mends. */
const REFUSALS = new Set(["NOAUTH", "WRONGPASS", "NOPERM"]);

const digest = (text: string) => createHash("sha256").update(text).digest("hex");

/** A Redis error reply's code (`NOAUTH`, `WRONGPASS`, `READONLY`…): the server's word, never the caller's text. */
function replyCode(error: unknown): string | undefined {
  const message = (error as { message?: unknown } | null)?.message;
  return typeof message === "string" ? /^([A-Z][A-Z_]{2,31})\b/.exec(message)?.[1] : undefined;
}

function causeName(error: unknown): string {
  const reply = replyCode(error);
  if (reply) return reply;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === "string" && /^[A-Z0-9_]{1,32}$/.test(code)) return code;
  const name = (error as { name?: unknown } | null)?.name;
  return typeof name === "string" && /^[A-Za-z0-9_]{1,64}$/.test(name) ? name : "Error";
}

export class RedisHostStore implements HostStore {
  readonly nonces: NonceStore;
  readonly wake: WakeStore;
  readonly events: EventDedupe;
  readonly admission: AdmissionLock;
  readonly #client: RedisHostClient;
  readonly #prefix: string;
  readonly #timeoutMs: number;
  readonly #close: () => Promise<void>;

  /** A store on a connected client the caller owns (close() leaves it open). */
  constructor(client: RedisHostClient, options: RedisHostStoreOptions = {}, close?: () => Promise<void>) {
    const prefix = options.keyPrefix ?? "ocvsb:host";
    if (!/^[A-Za-z0-9:_-]{1,64}$/.test(prefix)) {
      throw new HostStoreInputError("keyPrefix: 1 to 64 letters, digits or :_-");
    }
    this.#client = client;
    this.#prefix = prefix;
    this.#timeoutMs = options.timeoutMs ?? 2_000;
    this.#close = close ?? (async () => {});
    this.nonces = { claim: (nonce, expiresAtMs, nowMs) => this.#claimNonce(nonce, expiresAtMs, nowMs) };
    this.wake = { read: () => this.#readWake(), replace: (next) => this.#replaceWake(next) };
    this.events = { firstSeen: (id, ttlMs) => this.#firstSeen(id, ttlMs) };
    this.admission = {
      acquire: (intent, ttlMs) => this.#acquire(intent, ttlMs),
      extend: (lease, ttlMs) => this.#extend(lease, ttlMs),
      release: (lease, settled) => this.#release(lease, settled),
      state: () => this.#state(),
    };
  }

  /**
   * Connects a node-redis client (loaded only here: a host that never uses Redis never loads it) and returns a
   * store that closes it. Commands fail at once while disconnected (no offline queue): the store refuses then.
   */
  static async connect(options: RedisConnectOptions): Promise<RedisHostStore> {
    const { createClient } = await import("redis");
    const timeoutMs = options.timeoutMs ?? 2_000;
    const client = createClient({
      url: options.url,
      ...(options.username !== undefined ? { username: options.username } : {}),
      ...(options.password !== undefined ? { password: options.password } : {}),
      disableOfflineQueue: true,
      socket: {
        connectTimeout: timeoutMs,
        // A refusal by the server (a wrong or missing password) ends the attempt: retrying cannot mend it.
        reconnectStrategy: (retries: number, cause: Error) =>
          REFUSALS.has(replyCode(cause) ?? "") ? cause : Math.min(50 * 2 ** retries, 2_000),
      },
    });
    client.on("error", (error: unknown) => options.onError?.(causeName(error)));
    try {
      await within(client.connect(), timeoutMs, "connect");
    } catch (error) {
      client.destroy();
      throw error instanceof HostStoreUnavailableError
        ? error
        : new HostStoreUnavailableError("connect", causeName(error));
    }
    return new RedisHostStore(client, options, async () => {
      if (client.isOpen) await client.close().catch(() => client.destroy());
    });
  }

  /** Closes the client this store connected (a caller's own client stays open). */
  close(): Promise<void> {
    return this.#close();
  }

  async #eval(operation: string, script: string, keys: string[], args: string[]): Promise<unknown> {
    try {
      return await within(this.#client.eval(script, { keys, arguments: args }), this.#timeoutMs, operation);
    } catch (error) {
      if (error instanceof HostStoreUnavailableError) throw error;
      throw new HostStoreUnavailableError(operation, causeName(error));
    }
  }

  async #claimNonce(nonce: string, expiresAtMs: number, nowMs: number): Promise<boolean> {
    checkId("a nonce", nonce);
    // Held until the window would refuse it by itself (`expiresAtMs` inclusive).
    const ttlMs = Math.max(1, Math.ceil(expiresAtMs - nowMs) + 1);
    checkTtl(ttlMs);
    const key = `${this.#prefix}:nonce:${digest(nonce)}`;
    return (await this.#eval("nonce claim", SET_NX_PX, [key], [String(ttlMs)])) === 1;
  }

  async #firstSeen(eventId: string, ttlMs: number): Promise<boolean> {
    checkId("an event id", eventId);
    checkTtl(ttlMs);
    const key = `${this.#prefix}:event:${digest(eventId)}`;
    return (await this.#eval("event dedupe", SET_NX_PX, [key], [String(ttlMs)])) === 1;
  }

  async #readWake(): Promise<KeptWake | undefined> {
    const text = await this.#eval("wake read", WAKE_READ, [`${this.#prefix}:wake`], []);
    if (text === null || text === undefined) return undefined;
    try {
      return parseKept(String(text));
    } catch {
      throw new HostStoreUnavailableError("wake read", "DamagedValue");
    }
  }

  async #replaceWake(next: KeptWake): Promise<"accepted" | "stale"> {
    const text = JSON.stringify(next);
    // Checked as it will be read back: a value this store could not read again is never written.
    if (Buffer.byteLength(text) > MAX_KEPT_BYTES || parseKept(text) === undefined) {
      throw new HostStoreInputError(`a kept wake snapshot must be one, at most ${MAX_KEPT_BYTES} bytes`);
    }
    const revision = String(next.snapshot.revision);
    const replaced = await this.#eval("wake replace", WAKE_REPLACE, [`${this.#prefix}:wake`], [revision, text]);
    return replaced === 1 ? "accepted" : "stale";
  }

  #lockKeys() {
    return [`${this.#prefix}:admission`, `${this.#prefix}:lifecycle`];
  }

  async #acquire(intent: AdmissionIntent, ttlMs: number): Promise<Admission> {
    checkIntent(intent);
    checkTtl(ttlMs);
    const lease = { intent, token: ownerToken() };
    const [lock] = this.#lockKeys() as [string];
    const reply = await this.#eval("admission acquire", ACQUIRE, [lock], [`${intent}:${lease.token}`, String(ttlMs)]);
    if (reply === 1) return { acquired: true, lease };
    const [held, pttl] = Array.isArray(reply) ? reply : [];
    const state = heldIntent(held);
    if (!state) throw new HostStoreUnavailableError("admission acquire", "DamagedValue");
    return { acquired: false, state, retryAfterMs: typeof pttl === "number" && pttl > 0 ? pttl : 1 };
  }

  async #extend(lease: AdmissionLease, ttlMs: number): Promise<boolean> {
    checkTtl(ttlMs);
    const [lock] = this.#lockKeys() as [string];
    return (await this.#eval("admission extend", EXTEND, [lock], [leaseValue(lease), String(ttlMs)])) === 1;
  }

  async #release(lease: AdmissionLease, settled: SettledLifecycle): Promise<boolean> {
    checkSettled(settled);
    return (await this.#eval("admission release", RELEASE, this.#lockKeys(), [leaseValue(lease), settled])) === 1;
  }

  async #state(): Promise<VmLifecycle | "unknown"> {
    const value = await this.#eval("admission state", STATE, this.#lockKeys(), []);
    if (value === null || value === undefined) return "unknown";
    if (value === "asleep" || value === "awake") return value;
    const intent = heldIntent(value);
    if (!intent) throw new HostStoreUnavailableError("admission state", "DamagedValue");
    return intent;
  }
}

function leaseValue(lease: AdmissionLease): string {
  checkIntent(lease.intent);
  if (typeof lease.token !== "string" || !/^[0-9a-f]{32}$/.test(lease.token)) {
    throw new HostStoreInputError("not a lease this store gave");
  }
  return `${lease.intent}:${lease.token}`;
}

function heldIntent(value: unknown): AdmissionIntent | undefined {
  const intent = typeof value === "string" ? value.split(":")[0] : undefined;
  return intent === "waking" || intent === "sleeping" ? intent : undefined;
}

async function within<T>(work: Promise<T>, timeoutMs: number, operation: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new HostStoreUnavailableError(operation, "Timeout")), timeoutMs);
  });
  try {
    return await Promise.race([work, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
