// What our programs later execute from a prepared box (issue 25): the `node` that PATH resolves and every file
// and link under the OpenClaw runtimes directory. Measured once right after the runtime install on a fresh
// sandbox, before any recipe ran (the baseline a base image records and every project image built on it
// carries), again after each first preparation, and on each project image's first restore right after its
// capture (which verifies it for every later worker), before enrollment hands over any secret. A mismatch means
// a recipe replaced what enrollment would run: a project image is refused, a recipe's own worker fails.
//
// The measurement runs on the box, with the box's own sh, find and sha256sum: it catches a recipe that patches
// a runtime file or swaps `node` for a wrapper, never a recipe that used sudo to replace those tools too. Only
// `images.shareBy: "commit"` keeps another commit's recipe away from a worker.
import type { SandboxBox } from "../vercel/index.js";
import type { RuntimeDigest } from "./types.js";

/** The box's answer was not the two lines the script prints: it cannot be compared, so it is not trusted. */
export class RuntimeDigestError extends Error {
  override readonly name = "RuntimeDigestError";
}

const SCRIPT = [
  "set -e",
  'n=$(readlink -f "$(command -v node)")',
  'echo "$n $(sha256sum < "$n" | cut -d" " -f1)"',
  'cd "$HOME/.openclaw-worker/node-runtimes" 2>/dev/null || { echo absent; exit 0; }',
  "{ find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum; find . -type l -printf '%p -> %l\\n' | LC_ALL=C sort; } | sha256sum | cut -d' ' -f1",
].join("\n");

const DIGEST = /^[0-9a-f]{64}$/;

/** Reads the two lines of the measurement (pure). */
export function parseRuntimeDigest(stdout: string): RuntimeDigest {
  const [node = "", runtimes = "", ...rest] = stdout.trimEnd().split("\n");
  const nodeDigest = node.slice(node.lastIndexOf(" ") + 1);
  if (
    rest.length > 0 ||
    !node.startsWith("/") ||
    !DIGEST.test(nodeDigest) ||
    !(runtimes === "absent" || DIGEST.test(runtimes))
  ) {
    throw new RuntimeDigestError("the box's runtime measurement is not the two lines our script prints");
  }
  return { node, runtimes };
}

export async function measureRuntime(box: SandboxBox, signal?: AbortSignal): Promise<RuntimeDigest> {
  const result = await box.run({
    cmd: "sh",
    args: ["-c", SCRIPT],
    signal,
    timeoutMs: 120_000,
    output: { keep: "whole", bytes: 4096 },
  });
  if (result.exitCode !== 0) {
    throw new RuntimeDigestError(`the box's runtime measurement exited ${result.exitCode}`);
  }
  return parseRuntimeDigest(result.stdout);
}

/** Why the measured runtime is not the one recorded with the image, or undefined when it is (pure). */
export function runtimeChangedReason(recorded: RuntimeDigest, measured: RuntimeDigest): string | undefined {
  const changed = [
    ...(recorded.node !== measured.node ? ["the node on PATH"] : []),
    ...(recorded.runtimes !== measured.runtimes ? ["the OpenClaw runtime files"] : []),
  ];
  if (changed.length === 0) return undefined;
  return `${changed.join(" and ")} differ from the baseline measured right after the runtime install, before any recipe ran`;
}
