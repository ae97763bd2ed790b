// Which lifecycle phases run for a preparation or worker event (seed 002 "Lifecycle and snapshots").
// Preparation phases end up in the snapshot; post-binding phases run on every worker and never do.
import type { PhaseName } from "./commands.js";
import type { Recipe } from "./resolve.js";

/**
 * - `initial`: first preparation of a checkout (onCreateCommand, then updateContentCommand).
 * - `refresh`: in-place refresh of a prepared checkout to a new commit (only updateContentCommand reruns).
 * - `unchanged`: a verified checkout at the same commit (no preparation command runs).
 * - `worker-start`: a worker bound to its session workspace on any machine start (postCreateCommand, then
 *   postStartCommand; every start provisions a fresh worker, so both run each time).
 */
export type PreparationEvent = "initial" | "refresh" | "unchanged" | "worker-start";

const PHASES_BY_EVENT: Readonly<Record<PreparationEvent, readonly PhaseName[]>> = {
  initial: ["onCreateCommand", "updateContentCommand"],
  refresh: ["updateContentCommand"],
  unchanged: [],
  "worker-start": ["postCreateCommand", "postStartCommand"],
};

/** The ordered phases to run for an event, limited to the phases this recipe actually has. */
export function planPhases(recipe: Recipe, event: PreparationEvent): PhaseName[] {
  const candidates = Object.hasOwn(PHASES_BY_EVENT, event) ? PHASES_BY_EVENT[event] : undefined;
  if (!candidates) throw new TypeError(`Unknown preparation event: ${String(event)}`);
  return candidates.filter((phase) => recipe.phases[phase] !== undefined);
}
