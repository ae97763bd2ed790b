// The program's node steps: adopt a running node of this lease, activate the runtime in the lease's private
// state directory, and start the node detached with its output in a private log. In connect mode the setup
// code reaches the node only through the handoff file (account.ts) that `openclaw connect --target-file`
// deletes once read; the node's argv and environment never hold it.
// biome-ignore lint/complexity/noUselessStringRaw: every part is raw, so an escape added later stays literal
export const NODE_STEPS = String.raw`
/** A live node of ours from an earlier run of this lease is adopted, never doubled; a foreign pid is refused. */
function adoptable() {
  const pid = readPid();
  if (!pid) return 0;
  if (!alive(pid)) {
    fs.rmSync(FILES.pid, { force: true });
    return 0;
  }
  if (!isOurs(pid)) {
    throw fail("launch", "foreign-process", "pid " + pid + " in this lease's node.pid is alive but is not this lease's node; release the worker and provision it again");
  }
  return pid;
}

async function activate() {
  fs.mkdirSync(STATE, { recursive: true, mode: 0o700 });
  fs.chmodSync(STATE, 0o700);
  fs.rmSync(FILES.runtime, { force: true });
  // The plan says where the pointer goes for this release (engines.ts): up to 2026.9.4 before the plugins are
  // enabled, from 2026.9.5 after them (published earlier, fresh state looks like a legacy installation).
  const activation = PLAN.pluginActivation;
  if (activation.pointerFirst) fs.symlinkSync(RUNTIME, FILES.runtime);
  const env = Object.assign({}, process.env, { OPENCLAW_STATE_DIR: STATE });
  for (const ids of activation.batches) {
    const code = await runLogged(process.execPath, [cliOf(RUNTIME), "plugins", "enable"].concat(ids), {
      cwd: RUNTIME,
      env: env,
      log: FILES.log,
      timeoutMs: 120000 * ids.length,
    });
    if (code !== 0) {
      throw fail("activate", "plugin-enable", "openclaw plugins enable " + ids.join(" ") + " exited " + code + ": " + tail(FILES.log, 1000));
    }
  }
  if (!activation.pointerFirst) fs.symlinkSync(RUNTIME, FILES.runtime);
  return { plugins: PLAN.enabledPluginIds.length };
}

function launchArgv() {
  const common = ["--ephemeral", "--display-name", PLAN.displayName];
  if (PLAN.mode === "connect") return [cliOf(RUNTIME), "connect", "--target-file", HANDOFF.file].concat(common);
  return [cliOf(RUNTIME), "node", "run"].concat(common);
}

/** Resolves (with "") once the node has removed its setup-code file, or once watch.over is set. */
async function codeTaken(watch) {
  while (!watch.over && fs.existsSync(HANDOFF.file)) await new Promise((r) => setTimeout(r, 25));
  return "";
}

/**
 * Removes the handoff once the node took the code, or at once when the run failed (the run holds the handoff's
 * group). A node still starting keeps it: the next root run removes what is left (account.ts).
 */
function closeHandoff(failed) {
  if (HANDOFF && (failed || !fs.existsSync(HANDOFF.file))) fs.rmSync(HANDOFF.directory, { recursive: true, force: true });
}

async function launch() {
  if (PLAN.mode === "connect" && !HANDOFF) {
    throw fail("launch", "no-handoff", "the setup code can reach the node only from a run started as sandbox root; replay the operation");
  }
  const log = fs.openSync(FILES.log, "a", 0o600);
  const child = spawn(process.execPath, launchArgv(), {
    cwd: RUNTIME,
    env: Object.assign({}, process.env, { OPENCLAW_STATE_DIR: STATE }),
    detached: true,
    stdio: ["ignore", log, log],
  });
  fs.closeSync(log);
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve(code === null ? "signal " + signal : "code " + code)));
  const spawnError = new Promise((resolve) => child.once("error", (error) => resolve("spawn error " + error.message)));
  // A node that dies at once (bad runtime, refused arguments) is reported now, with its log, rather than
  // after the gateway's long wait for a device that will never come. A connecting node that has taken its
  // setup code (openclaw connect removes the target file once read) is past that point: no need to wait on.
  let graceTimer;
  const grace = new Promise((r) => (graceTimer = setTimeout(r, PLAN.timings.launchGraceMs, "")));
  const watch = { over: false };
  grace.then(() => (watch.over = true));
  const early = await Promise.race([exited, spawnError, PLAN.mode === "connect" ? codeTaken(watch) : grace]);
  // Once decided, neither the grace timer nor the setup-code watch may keep this program (and so the
  // provision waiting on its command) alive: the node took its code, the rest of the grace is not waited out.
  clearTimeout(graceTimer);
  watch.over = true;
  if (early) {
    closeHandoff(true);
    throw fail("launch", "node-exited", "the node exited right after it started (" + early + "); its log ends: " + tail(FILES.log, 1000));
  }
  fs.writeFileSync(FILES.pid, String(child.pid), { mode: 0o600 });
  child.unref();
  return { pid: child.pid };
}

/** What a failed enrollment leaves to look at: bounded, and the setup code is removed if the node never took it. */
function evidence() {
  removeHandoffs();
  // Where runs before the handoff left the code.
  fs.rmSync(path.join(STATE, "setup-code"), { force: true });
  let runtime = "absent";
  try {
    runtime = fs.readlinkSync(FILES.runtime);
    if (!fs.existsSync(runtime)) runtime = "absent (link to " + runtime + ")";
  } catch {
    runtime = fs.existsSync(RUNTIME) ? RUNTIME + " (not activated)" : "absent";
  }
  const pid = readPid();
  const node = pid && alive(pid) ? (isOurs(pid) ? "alive" : "foreign") : "dead-or-absent";
  emit({ event: "evidence", runtime: runtime, node: node, logTail: tail(FILES.log, 2000) });
}
`;
