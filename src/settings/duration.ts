// Durations in settings: milliseconds as a number, or a string such as "45m" (ms, s, m, h, d).
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

export function durationMs(value: number | string): number | undefined {
  if (typeof value === "number") return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  const match = /^([0-9]+)(ms|s|m|h|d)$/.exec(value);
  if (!match) return undefined;
  const ms = Number(match[1]) * (UNIT_MS[match[2] as string] as number);
  return Number.isSafeInteger(ms) ? ms : undefined;
}
