// Decisions over a clock snapshot, pure: is it time to ask the host to sleep us (idle, deadline near, fenced),
// and may a suspend go ahead now. A turn, a model call or a worker provision in flight always blocks sleep; a fence or a near
// deadline skip the idle wait but never that.

import type { ClockSnapshot } from "./clock.js";

export type NotifyReason = "idle" | "deadline" | "fenced";

export interface SleepPolicy {
  idleMs: number;
  /** Absolute session deadline (epoch ms), when the platform limits session length. */
  deadlineAtMs?: number;
  /** Ask for graceful shutdown this long before the deadline. */
  deadlineMarginMs: number;
  /** Scheduled wake: a cron job due within this long (or overdue) is a reason not to sleep yet. */
  wakeLeadMs?: number;
}

/** Whether a job is due within the wake lead (or overdue): sleeping now would only mean waking again for it. */
export function wakeDueSoon(clock: ClockSnapshot, policy: SleepPolicy): boolean {
  if (clock.nextWakeAtMs === undefined || policy.wakeLeadMs === undefined) return false;
  const inMs = clock.nextWakeAtMs - clock.nowMs;
  // Overdue by more than the lead: the run is not coming (a stuck job must not hold sleep forever).
  return inMs <= policy.wakeLeadMs && inMs >= -policy.wakeLeadMs;
}

/** The absolute deadline: an explicit one, or the session start plus the platform's session limit. */
export function sessionDeadline(
  startedAtMs: number,
  limit: { sessionLimitMs?: number; deadlineAtMs?: number },
): number | undefined {
  const fromLimit = limit.sessionLimitMs === undefined ? undefined : startedAtMs + limit.sessionLimitMs;
  if (fromLimit === undefined) return limit.deadlineAtMs;
  if (limit.deadlineAtMs === undefined) return fromLimit;
  return Math.min(fromLimit, limit.deadlineAtMs);
}

/** Why sleep is due now, or undefined. Priority: fenced, deadline, idle. */
export function dueReason(clock: ClockSnapshot, policy: SleepPolicy): NotifyReason | undefined {
  if (clock.fence) return "fenced";
  if (policy.deadlineAtMs !== undefined && clock.nowMs >= policy.deadlineAtMs - policy.deadlineMarginMs) {
    return "deadline";
  }
  if (isBusy(clock) || wakeDueSoon(clock, policy)) return undefined;
  return clock.nowMs - clock.lastActivityMs >= policy.idleMs ? "idle" : undefined;
}

export function isBusy(clock: ClockSnapshot): boolean {
  return clock.activeTurns > 0 || clock.activeModelCalls > 0 || clock.activeProvisions > 0;
}

/** Milliseconds until the clock would be idle (0 when it already is); busy clocks count a full interval. */
export function idleInMs(clock: ClockSnapshot, policy: SleepPolicy): number {
  if (isBusy(clock)) return policy.idleMs;
  // A job due soon holds sleep until it is past (and its run then counts as activity).
  if (wakeDueSoon(clock, policy)) return Math.max(policy.idleMs, (clock.nextWakeAtMs ?? clock.nowMs) - clock.nowMs);
  return Math.max(0, policy.idleMs - (clock.nowMs - clock.lastActivityMs));
}

export type SuspendCheck = { ok: true; reason: NotifyReason } | { ok: false; retryAfterMs: number };

/**
 * The recheck under the admission lock: a suspend goes ahead only when sleep is due and nothing is in flight,
 * except near the deadline, where the gateway's drain lets the turn in flight finish (the platform ends the
 * session at the deadline whatever we do).
 */
export function checkSuspend(clock: ClockSnapshot, policy: SleepPolicy, minRetryMs = 1_000): SuspendCheck {
  const reason = dueReason(clock, policy);
  if (reason === "deadline" || (reason && !isBusy(clock))) return { ok: true, reason };
  return { ok: false, retryAfterMs: Math.max(minRetryMs, idleInMs(clock, policy)) };
}

export interface NotifyMemory {
  reason: NotifyReason;
  atMs: number;
}

/**
 * Whether the timer should notify the host now: when sleep is due and either it has not said so for this
 * reason yet or `renotifyMs` has passed since (the host may have been down, or refused; cleanup is retried).
 */
export function shouldNotify(
  reason: NotifyReason | undefined,
  last: NotifyMemory | undefined,
  nowMs: number,
  renotifyMs: number,
): boolean {
  if (!reason) return false;
  if (!last || last.reason !== reason) return true;
  return nowMs - last.atMs >= renotifyMs;
}
