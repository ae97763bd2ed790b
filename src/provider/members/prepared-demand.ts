// `notePreparedDemand` (OpenClaw 2026.9.4 and later): after a session's activation core reports the demand it
// met, and the provider records it on the images that lease selected or produced, and on no other: retention
// (`images.unusedFor`) then counts that image as used at the demand's time. Metadata only: it allocates,
// captures and renews nothing, and touches no Vercel resource.
import type { PreparedPoolMembers } from "../options.js";
import type { ProviderParts } from "../parts.js";

export class PreparedDemandError extends Error {
  override readonly name = "PreparedDemandError";
}

export function createNotePreparedDemand({
  images,
}: Pick<ProviderParts, "images">): PreparedPoolMembers["notePreparedDemand"] {
  return async function notePreparedDemand({ leaseId }, { preparationKey, demandAtMs }) {
    if (typeof leaseId !== "string" || leaseId.length === 0 || leaseId.length > 256) {
      throw new PreparedDemandError("vercel-sandbox: prepared demand names no lease");
    }
    if (typeof preparationKey !== "string" || preparationKey.length === 0) {
      throw new PreparedDemandError("vercel-sandbox: prepared demand names no preparation");
    }
    if (!Number.isSafeInteger(demandAtMs) || demandAtMs < 0) {
      throw new PreparedDemandError("vercel-sandbox: prepared demand has no valid time");
    }
    const choice = await images.choiceFor(leaseId);
    const selected = choice?.choice.kind === "image" ? [choice.choice.snapshotId] : [];
    const produced = (await images.images()).filter((i) => i.sourceLeaseId === leaseId).map((i) => i.snapshotId);
    for (const snapshotId of new Set([...selected, ...produced])) await images.touch(snapshotId, demandAtMs);
  };
}
