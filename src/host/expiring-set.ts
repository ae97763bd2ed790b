// A bounded in-memory set of keys, each live through the moment it was added with: the one-instance half of a
// `SET NX PX`, shared by the nonce store (verify.ts) and the event dedupe (store.ts).

export class ExpiringSet {
  readonly #live = new Map<string, number>();

  constructor(readonly max: number) {}

  /**
   * Adds `key`, live through `lastLiveMs`; false when it is live already. Keys whose moment has passed at `nowMs`
   * go first. When the set is full of live keys, throws `full(max, retryAfterMs)`: how long until the soonest goes.
   */
  add(key: string, lastLiveMs: number, nowMs: number, full: (max: number, retryAfterMs: number) => Error): boolean {
    for (const [live, until] of this.#live) if (until < nowMs) this.#live.delete(live);
    if (this.#live.has(key)) return false;
    if (this.#live.size >= this.max) throw full(this.max, Math.min(...this.#live.values()) - nowMs + 1);
    this.#live.set(key, lastLiveMs);
    return true;
  }
}
