// The pure devcontainer recipe engine (seed 002, host-mode subset): decides which commands prepare a
// repository and when they run. No I/O, no Vercel, no OpenClaw; src/preparation runs what this decides.
export type {
  ExecCommand,
  LifecycleCommand,
  ParallelCommands,
  PhaseName,
  Phases,
  ShellCommand,
  SingleCommand,
} from "./commands.js";
export { RecipeError, type RecipeLocation } from "./errors.js";
export { type PreparationEvent, planPhases } from "./phases.js";
export { type Recipe, type RecipeSource, type ResolveInput, resolveRecipe } from "./resolve.js";
