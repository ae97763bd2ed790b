// The bootstrap program as one ES module source, and how the provider runs it on the sandbox.
import { ACCOUNT_STEPS } from "./account.js";
import { DOWNLOAD } from "./download.js";
import { MAIN } from "./main.js";
import { NODE_STEPS } from "./node.js";
import { PRELUDE } from "./prelude.js";
import { RUNTIME_STEPS, WORKER_ARCHIVE_STEPS } from "./runtime.js";

export const BOOTSTRAP_PROGRAM = [
  PRELUDE,
  ACCOUNT_STEPS,
  DOWNLOAD,
  RUNTIME_STEPS,
  WORKER_ARCHIVE_STEPS,
  NODE_STEPS,
  MAIN,
].join("\n");

/**
 * The program travels in the command itself (it holds no secret: those come in the environment of a command
 * run as sandbox root),
 * never as a file on the box: a file there could be changed by whatever runs on the worker before the next
 * replay runs it with fresh credentials. It also saves a request per run.
 */
export const PROGRAM_ARGV = ["--input-type=module", "--eval", BOOTSTRAP_PROGRAM];

/** The environment variables the program reads (and deletes) first. */
export const PROGRAM_ENV = {
  plan: "OPENCLAW_VSB_PLAN",
  token: "OPENCLAW_VSB_BOOTSTRAP_TOKEN",
  setupCode: "OPENCLAW_VSB_SETUP_CODE",
  workerToken: "OPENCLAW_VSB_WORKER_TOKEN",
} as const;
