// Polling helpers for the real-gateway tests: everything they wait for (an HTTP probe, an emulator request,
// a state in environments.list) is observed from outside, so waiting is polling with a hard deadline.

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls `probe` every intervalMs until it returns a value other than undefined, or throws after timeoutMs. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined>,
  { timeoutMs, intervalMs = 500 }: { timeoutMs: number; intervalMs?: number },
): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (error) {
      lastError = error;
    }
    if (performance.now() > deadline) {
      const detail = lastError instanceof Error ? `: ${lastError.message}` : "";
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail}`);
    }
    await sleep(intervalMs);
  }
}
