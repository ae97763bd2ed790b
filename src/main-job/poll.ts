// Polling for something the job cannot be told about (a gateway's readiness, the host's sleep), with a bound.
// (Named apart from the host config's `waitUntil`, which keeps a function alive for work after its response.)

/** Resolves with the first truthy value `probe` gives; a throwing probe counts as not yet. */
export async function pollUntil<T>(
  what: string,
  probe: () => Promise<T | undefined | false>,
  timeoutMs: number,
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const value = await probe().catch(() => undefined);
    if (value) return value;
    if (performance.now() > deadline)
      throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
  }
}
