// The program's entry: the order of the steps, and the one place failures become protocol lines. Every step
// is timed and reported (`phase` lines), and the run ends with exactly one `done`, `failed` or `evidence` line.
// biome-ignore lint/complexity/noUselessStringRaw: every part is raw, so an escape added later stays literal
export const MAIN = String.raw`
let CURRENT = "preparation";
const step = (phase, run) => {
  CURRENT = phase;
  return timed(phase, run);
};

/** Touches nothing: a run started as root checks the Node before it creates anything for the account. */
function checkEngines() {
  if (!nodeVersionOk(process.version, PLAN.engines)) {
    throw fail("preparation", "node-version", "the sandbox's Node " + process.version + " is not one OpenClaw " + PLAN.openclawVersion + " runs on (" + PLAN.enginesText + "); choose a runtime that satisfies it in the profile's settings.runtime");
  }
}

function checkNode() {
  return step("preparation", () => {
    checkEngines();
    fs.mkdirSync(RUNTIMES, { recursive: true, mode: 0o700 });
    return { node: process.version };
  });
}

/**
 * Download, verify and install the runtime unless a verified install of its digest is there already; when the
 * plan says the egress admits no registry to install with, a missing runtime is reported instead.
 */
async function installRuntime() {
  const reuse = await step("reuse", async () => ({ reused: await reusableRuntime() }));
  if (!reuse.reused && PLAN.installRuntime === false) {
    throw fail("reuse", "runtime-missing", "no verified runtime " + PLAN.artifact.sha256 + " is on the sandbox, and its egress admits no package registry to install one");
  }
  if (!reuse.reused) {
    const archive = path.join(RUNTIMES, ".download-" + randomBytes(8).toString("hex") + ".tgz");
    try {
      const downloaded = await step("download", () => download(archive));
      await step("verify", () => verifyDownload(downloaded));
      await step("install", () => install(archive));
    } finally {
      fs.rmSync(archive, { force: true });
    }
  }
  return reuse.reused;
}

/** Preparation for a warm image: the runtime and the worker archive, and no node identity of any kind. */
async function prepareRuntime() {
  await checkNode();
  const reused = await installRuntime();
  if (PLAN.workerBundle) await step("publish", publishWorkerArchive);
  emit({ event: "done", adopted: false, pid: 0, runtime: reused ? "reused" : "installed" });
}

/** The secret-free first run of an enrollment: adopts a live node of this lease, or says enrollment is needed. */
async function probe() {
  await checkNode();
  const adopted = adoptable();
  if (!adopted) throw fail("reuse", "enrollment-needed", "no live node of this lease is on the sandbox; enrollment follows");
  emit({ event: "done", adopted: true, pid: adopted, runtime: "running" });
}

async function enroll() {
  await checkNode();
  const adopted = adoptable();
  if (adopted) {
    emit({ event: "done", adopted: true, pid: adopted, runtime: "running" });
    return;
  }
  const reused = await installRuntime();
  await step("activate", activate);
  const launched = await step("launch", launch);
  emit({ event: "done", adopted: false, pid: launched.pid, runtime: reused ? "reused" : "installed" });
}

let HANDOFF = null;
try {
  if (PLAN.action === "evidence") evidence();
  else if (PLAN.action === "probe") await probe();
  else {
    checkEngines();
    HANDOFF = becomeAccount();
    if (PLAN.action === "runtime") await prepareRuntime();
    else await enroll();
  }
} catch (error) {
  closeHandoff(true);
  const known = error instanceof StepFailure;
  emit({
    event: "failed",
    phase: known ? error.phase : CURRENT,
    code: known ? error.code : error && error.code ? String(error.code) : "unexpected",
    message: known ? error.message : String(error && error.message ? error.message : error),
  });
  process.exitCode = 1;
} finally {
  closeHandoff(false);
}
`;
