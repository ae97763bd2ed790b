// The bootstrap program as one ES module source, and where it lives on the sandbox. Its name carries a digest
// of its text, so a sandbox never runs a stale copy left by an older provider.
import { createHash } from "node:crypto";
import { DOWNLOAD } from "./download.js";
import { MAIN } from "./main.js";
import { NODE_STEPS } from "./node.js";
import { PRELUDE } from "./prelude.js";
import { RUNTIME_STEPS, WORKER_ARCHIVE_STEPS } from "./runtime.js";

export const BOOTSTRAP_PROGRAM = [PRELUDE, DOWNLOAD, RUNTIME_STEPS, WORKER_ARCHIVE_STEPS, NODE_STEPS, MAIN].join("\n");

const DIGEST = createHash("sha256").update(BOOTSTRAP_PROGRAM).digest("hex").slice(0, 16);

/** Holds no secret (they come in the command's environment), so a shared directory is fine. */
export const PROGRAM_PATH = `/tmp/openclaw-vercel-sandbox/bootstrap-${DIGEST}.mjs`;

/** The environment variables the program reads (and deletes) first. */
export const PROGRAM_ENV = {
  plan: "OPENCLAW_VSB_PLAN",
  token: "OPENCLAW_VSB_BOOTSTRAP_TOKEN",
  setupCode: "OPENCLAW_VSB_SETUP_CODE",
  workerToken: "OPENCLAW_VSB_WORKER_TOKEN",
} as const;
