// The program's entry: the order of the steps, and the one place failures become protocol lines. Every step
// is timed and reported (`phase` lines), and the run ends with exactly one `done`, `failed` or `evidence` line.
// biome-ignore lint/complexity/noUselessStringRaw: every part is raw, so an escape added later stays literal
export const MAIN = String.raw`
let CURRENT = "preparation";
const step = (phase, run) => {
  CURRENT = phase;
  return timed(phase, run);
};

async function enroll() {
  await step("preparation", () => {
    if (!nodeVersionOk(process.version, PLAN.engines)) {
      throw fail("preparation", "node-version", "the sandbox's Node " + process.version + " is not one OpenClaw " + PLAN.openclawVersion + " runs on (" + PLAN.enginesText + "); choose a runtime that satisfies it in the profile's settings.runtime");
    }
    fs.mkdirSync(RUNTIMES, { recursive: true, mode: 0o700 });
    return { node: process.version };
  });
  const adopted = adoptable();
  if (adopted) {
    emit({ event: "done", adopted: true, pid: adopted, runtime: "running" });
    return;
  }
  const reuse = await step("reuse", async () => ({ reused: await reusableRuntime() }));
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
  await step("activate", activate);
  const launched = await step("launch", launch);
  emit({ event: "done", adopted: false, pid: launched.pid, runtime: reuse.reused ? "reused" : "installed" });
}

try {
  if (PLAN.action === "evidence") evidence();
  else await enroll();
} catch (error) {
  const known = error instanceof StepFailure;
  emit({
    event: "failed",
    phase: known ? error.phase : CURRENT,
    code: known ? error.code : error && error.code ? String(error.code) : "unexpected",
    message: known ? error.message : String(error && error.message ? error.message : error),
  });
  process.exitCode = 1;
}
`;
