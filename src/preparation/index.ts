// The door of warm-image preparation (the I/O half beside the pure devcontainer engine): preparing a lease's
// project on its box, the warm-image store and its retention, image keys, and the diagnostics the CLI shows.
export { BASE_EXISTS, CAPTURING_ELSEWHERE, installBase } from "./base.js";
export { projectTransport } from "./box.js";
export { runPhases } from "./commands.js";
export { formatDiagnosticsTable, printable } from "./diagnostics.js";
export { baseKeyOf, imageKeyOf, profileKeyOf } from "./key.js";
export {
  CaptureRequiredError,
  DeclaredPreparationError,
  ImageRefusedError,
  type PrepareOutcome,
  prepareProject,
} from "./prepare.js";
export { maintainImages, type RetentionProfile } from "./retention.js";
export { ImageStore, ImageUnusableError } from "./store.js";
export type { AllocationChoice, ImageRecord, PreparationDiagnostics } from "./types.js";
export { requestBaseImage, takeBaseImageRequest, withdrawBaseImageRequest } from "./warm-request.js";
