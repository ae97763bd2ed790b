// The `suspend` block of the plugin config, resolved to milliseconds with defaults. Pure; the schema itself is in
// src/config.ts (the manifest is generated from it).

import { durationMs } from "../settings/index.js";

export interface SuspendConfigInput {
  idleAfter?: number | string;
  pollInterval?: number | string;
  renotifyAfter?: number | string;
  sessionLimit?: number | string;
  deadlineAtMs?: number;
  deadlineMargin?: number | string;
  notifyUrl?: string;
  secretEnv?: string;
  wakeLead?: number | string;
}

export interface SuspendSettings {
  idleMs: number;
  pollMs: number;
  renotifyMs: number;
  sessionLimitMs?: number;
  deadlineAtMs?: number;
  deadlineMarginMs: number;
  notifyUrl?: string;
  secretEnv?: string;
  /** Scheduled wake: set → cron run times are projected to the host, and a job due this soon holds sleep. */
  wakeLeadMs?: number;
}

export const SUSPEND_DEFAULTS = {
  idleMs: 45 * 60_000,
  pollMs: 30_000,
  renotifyMs: 60_000,
  deadlineMarginMs: 5 * 60_000,
} as const;

/** Invalid values fall back to the default (the schema has already warned about them). */
export function resolveSuspendSettings(input: SuspendConfigInput): SuspendSettings {
  const ms = (value: number | string | undefined, fallback: number) =>
    value === undefined ? fallback : (durationMs(value) ?? fallback);
  const sessionLimitMs = input.sessionLimit === undefined ? undefined : durationMs(input.sessionLimit);
  const wakeLeadMs = input.wakeLead === undefined ? undefined : durationMs(input.wakeLead);
  return {
    idleMs: ms(input.idleAfter, SUSPEND_DEFAULTS.idleMs),
    pollMs: Math.max(1_000, ms(input.pollInterval, SUSPEND_DEFAULTS.pollMs)),
    renotifyMs: ms(input.renotifyAfter, SUSPEND_DEFAULTS.renotifyMs),
    deadlineMarginMs: ms(input.deadlineMargin, SUSPEND_DEFAULTS.deadlineMarginMs),
    ...(sessionLimitMs !== undefined ? { sessionLimitMs } : {}),
    ...(input.deadlineAtMs !== undefined ? { deadlineAtMs: input.deadlineAtMs } : {}),
    ...(input.notifyUrl ? { notifyUrl: input.notifyUrl } : {}),
    ...(input.secretEnv ? { secretEnv: input.secretEnv } : {}),
    ...(wakeLeadMs !== undefined ? { wakeLeadMs } : {}),
  };
}
