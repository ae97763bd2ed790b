// `openclaw vercel-sandbox images`: the warm images the store holds, base runtime images and project images (read from the gateway's state dir; the
// gateway and this CLI share the file) and the diagnostics of the latest preparations.

import type { ImageRecord, PreparationDiagnostics } from "../preparation/index.js";
import { formatDiagnosticsTable } from "../preparation/index.js";
import { formatDuration, formatTable } from "./table.js";

export interface ImagesReport {
  images: ImageRecord[];
  diagnostics: PreparationDiagnostics[];
}

function imageState(image: ImageRecord): string {
  if (image.refusedAt !== undefined) return `refused: ${image.refusedReason ?? "its runtime changed"}`;
  if (image.deletingSince !== undefined)
    return image.deleteAttempts ? `deleting (${image.deleteAttempts} failed)` : "deleting";
  return image.state;
}

export function renderImages(report: ImagesReport, now: number): string {
  const images =
    report.images.length === 0
      ? "No warm images. The first cold worker captures the base runtime image, and each project's first worker its project image (unless its profile sets warmImage: false)."
      : formatTable(
          [
            { header: "SNAPSHOT", cell: (i: ImageRecord) => i.snapshotId },
            { header: "KIND", cell: (i) => i.kind ?? "project" },
            { header: "KEY", cell: (i) => i.key.slice(0, 12) },
            { header: "RECIPE", cell: (i) => (i.kind === "base" ? "-" : i.recipeSource) },
            { header: "COMMIT", cell: (i) => (i.kind === "base" ? "-" : i.baseCommit.slice(0, 12)) },
            { header: "BASE", cell: (i) => (i.kind === "base" ? "-" : (i.baseImage ?? "-")) },
            { header: "CREATED", cell: (i) => `${formatDuration(now - i.createdAt)} ago` },
            { header: "LAST USED", cell: (i) => `${formatDuration(now - i.lastUsedAt)} ago` },
            { header: "STATE", cell: imageState },
          ],
          report.images,
        );
  return ["Warm images", images, "", "Preparations (newest first)", formatDiagnosticsTable(report.diagnostics)].join(
    "\n",
  );
}
