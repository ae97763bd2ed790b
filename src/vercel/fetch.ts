// The `fetch` wrappers the client seam hands the SDK. Callers may pass a string, a URL or a Request (the
// three inputs `fetch` accepts), so the target URL is read from each shape rather than stringified:
// `String(request)` is "[object Request]".
type Fetch = typeof globalThis.fetch;
type FetchInput = Parameters<Fetch>[0];

const VERCEL_API = /^https:\/\/vercel\.com\/api/;

const RESUME_BLOCKED = JSON.stringify({
  error: { code: "resume_blocked", message: "this call must not wake a stopped sandbox" },
});

export function urlOf(input: FetchInput): string {
  if (typeof input === "string") return input;
  if (input instanceof URL) return input.href;
  return input.url;
}

/** Sends requests meant for https://vercel.com/api to `apiUrl` instead, keeping a Request's method, headers and body. */
export function rewritingFetch(apiUrl: string, base: Fetch): Fetch {
  return (input, init) => {
    const url = urlOf(input);
    if (!VERCEL_API.test(url)) return base(input, init);
    const target = url.replace(VERCEL_API, apiUrl);
    return typeof input === "string" || input instanceof URL
      ? base(target, init)
      : base(new Request(target, input), init);
  };
}

/**
 * The SDK auto-resumes a stopped sandbox when a session-scoped call gets 410 (it calls
 * `GET /v2/sandboxes/{name}?resume=true`). Handles bound to this fetch fail instead of booting it.
 */
export function refusingResume(base: Fetch): Fetch {
  return (input, init) =>
    /[?&]resume=true(&|$)/.test(urlOf(input))
      ? Promise.resolve(new Response(RESUME_BLOCKED, { status: 409, headers: { "content-type": "application/json" } }))
      : base(input, init);
}
