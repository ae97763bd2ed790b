// Endpoints the SDK can call that the emulator does not implement, answered honestly instead of
// by accident. The answer is 4xx because the SDK retries every 5xx (twice, with back-off) and
// it would fail the same way each time.
// - Drives (SDK 3.5: GET /v2/sandboxes/drives, POST|DELETE /v2/sandboxes/drives/{name}): 404
//   `not_found`, Vercel's shape for a resource that does not exist; without these routes the
//   list would be read as a sandbox named `drives`.
import type { Ctx } from "./context.js";
import { HttpError } from "./http.js";

/** Any drive route. */
export async function drivesUnsupported(_ctx: Ctx): Promise<void> {
  throw new HttpError(
    404,
    "not_found",
    "Drives are not available in the local Vercel Sandbox emulator; use a snapshot to carry files between sandboxes",
  );
}
