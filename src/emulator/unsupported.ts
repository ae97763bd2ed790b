// Endpoints the SDK can call that the emulator does not implement, answered honestly instead of
// by accident. Both answers are 4xx because the SDK retries every 5xx (twice, with back-off) and
// these would fail the same way each time.
// - Drives (SDK 3.5: GET /v2/sandboxes/drives, POST|DELETE /v2/sandboxes/drives/{name}): 404
//   `not_found`, Vercel's shape for a resource that does not exist; without these routes the
//   list would be read as a sandbox named `drives`.
// - Interactive shells (POST …/sessions/{sid}/interactive): there is no PTY relay, so a URL
//   would be one nobody can connect to. 422 `interactive_not_supported`, the status the SDK
//   treats as a plain, non-retried refusal. It is answered before the session's state is looked
//   at, so a stopped sandbox is not resumed (the SDK's auto-resume follows a 410) just to refuse.
import type { Ctx } from "./context.js";
import { sessionOr404 } from "./context.js";
import { HttpError } from "./http.js";

/** Any drive route. */
export async function drivesUnsupported(_ctx: Ctx): Promise<void> {
  throw new HttpError(
    404,
    "not_found",
    "Drives are not available in the local Vercel Sandbox emulator; use a snapshot to carry files between sandboxes",
  );
}

/** E7: the session must exist (404 otherwise), then the honest refusal. */
export async function interactiveUnsupported(ctx: Ctx): Promise<void> {
  sessionOr404(ctx, ctx.params[0]);
  throw new HttpError(
    422,
    "interactive_not_supported",
    "Interactive shells are not available in the local Vercel Sandbox emulator (it has no PTY relay); run commands with runCommand instead",
  );
}
