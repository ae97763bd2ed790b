// Small numeric helpers every bench section shares: quantiles, a request counter wrapped around a `fetch`,
// and the sum of the emulator's service time over a slice of its request log.

/** The q-quantile (nearest rank) of `values`; NaN when there are none. */
export function quantile(values, q) {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

export const summary = (values) => ({ p50: round(quantile(values, 0.5)), p95: round(quantile(values, 0.95)) });

export const round = (n, digits = 2) => (Number.isFinite(n) ? Number(n.toFixed(digits)) : null);

/** Milliseconds the emulator spent answering these log entries. */
export const serviceMs = (entries) => entries.reduce((sum, r) => sum + r.ms, 0);

export const CREATE_PATH = /^\/v[23]\/sandboxes$/;
export const isCreate = (r) => r.method === "POST" && CREATE_PATH.test(r.path);

/**
 * A `fetch` that records every request it sends (method, path, status), so the requests of one party (the
 * plugin) can be told from another's (the stand-in gateway reading the sandbox) in one emulator log.
 */
export function countingFetch(base) {
  const seen = [];
  const fetch = async (input, init) => {
    const url = new URL(typeof input === "string" || input instanceof URL ? input : input.url);
    const method = init?.method ?? (typeof input === "object" && "method" in input ? input.method : "GET");
    // The SDK addresses https://vercel.com/api/…; the emulator's log drops the /api base.
    const entry = { method: method.toUpperCase(), path: url.pathname.replace(/^\/api(?=\/)/, ""), status: 0 };
    seen.push(entry);
    const response = await base(input, init);
    entry.status = response.status;
    return response;
  };
  return { fetch, seen, mark: () => seen.length, since: (mark) => seen.slice(mark) };
}

/** `POST /v2/sandboxes/sessions/<id>/cmd` → `POST /v2/sandboxes/sessions/:id/cmd`, for printing request patterns. */
export const routeOf = (r) =>
  `${r.method} ${r.path
    .replace(/\?.*$/, "")
    .replace(/\/sandboxes\/(sessions\/|snapshots\/)?(?!sessions$|snapshots$|drives$)[^/]+/, "/sandboxes/$1:id")
    .replace(/\/cmd\/[^/]+/, "/cmd/:id")}`;

/** A slice of a counting fetch's requests as the bench reports it: how many, how many creates, and the pattern. */
export const tally = (requests) => ({
  requests: requests.length,
  creates: requests.filter(isCreate).length,
  pattern: requests.map((r) => `${routeOf(r)} ${r.status}`),
});
