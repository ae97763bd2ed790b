// The program's runtime steps: reuse a verified install of this artifact's SHA-256, or install the downloaded
// archive with npm (it is not an offline bundle: npm fetches its dependencies from the registry) into a
// staging directory that becomes the runtime only once the installed openclaw is verified. npm's
// environment holds no secret: they left process.env before anything ran. Each install has a private npm cache,
// removed with its staging directory: two bootstraps of one box (a replay beside a slow first attempt) never
// share npm's cache, whose temporary directory one npm empties when it exits while the other still extracts
// into it, and no image captured after the install carries a second copy of the runtime's packages.
// biome-ignore lint/complexity/noUselessStringRaw: every part is raw, so an escape added later stays literal
export const RUNTIME_STEPS = String.raw`
/** The installed openclaw must be the gateway's: name, version, and the CLI's own answer. */
async function verifyRuntime(runtime) {
  const manifest = path.join(runtime, "node_modules", "openclaw", "package.json");
  let pkg;
  try {
    pkg = JSON.parse(fs.readFileSync(manifest, "utf8"));
  } catch (error) {
    return "the installed package has no readable package.json (" + (error.code || error.message) + ")";
  }
  if (pkg.name !== "openclaw") return "the artifact installed package " + JSON.stringify(pkg.name) + ", not openclaw";
  if (pkg.version !== PLAN.openclawVersion) {
    return "the artifact installed openclaw " + pkg.version + ", the gateway runs " + PLAN.openclawVersion;
  }
  const log = path.join(runtime, ".verify.log");
  fs.rmSync(log, { force: true });
  const code = await runLogged(process.execPath, [cliOf(runtime), "--version"], {
    cwd: runtime,
    env: process.env,
    log: log,
    timeoutMs: 60000,
  });
  const printed = tail(log, 512).trim();
  fs.rmSync(log, { force: true });
  if (code !== 0 || !printed.includes("OpenClaw " + PLAN.openclawVersion)) {
    return "the installed CLI answered --version with " + JSON.stringify(printed.slice(0, 120)) + " (exit " + code + ")";
  }
  return undefined;
}

/** An install of this SHA-256 that still verifies; a broken one is removed so it is reinstalled. */
async function reusableRuntime() {
  if (!fs.existsSync(RUNTIME)) return false;
  const problem = await verifyRuntime(RUNTIME);
  if (problem === undefined) return true;
  fs.rmSync(RUNTIME, { recursive: true, force: true });
  return false;
}

async function install(archive) {
  const staging = fs.mkdtempSync(path.join(RUNTIMES, ".staging-" + PLAN.artifact.sha256.slice(0, 12) + "-"));
  const log = path.join(staging, "npm.log");
  const cache = fs.mkdtempSync(path.join(RUNTIMES, ".npm-cache-"));
  try {
    fs.writeFileSync(
      path.join(staging, "package.json"),
      JSON.stringify({ private: true, allowScripts: { ["file:" + archive]: true } }),
    );
    const code = await runLogged(
      "npm",
      ["install", "--prefix", staging, "--cache", cache, "--omit=dev", "--no-save", "--package-lock=false", "--no-audit", "--no-fund",
        "--ignore-scripts=false", "--loglevel=warn", archive],
      {
        cwd: staging,
        env: Object.assign({}, process.env, { npm_config_update_notifier: "false" }),
        log: log,
        timeoutMs: PLAN.timings.installTimeoutMs,
      },
    ).catch((error) => {
      throw fail("install", "npm-unavailable", "could not run npm on the sandbox: " + error.message);
    });
    if (code !== 0) {
      throw fail("install", "npm-failed", "npm install of the artifact failed (exit " + code + "; npm fetches the artifact's dependencies from registry.npmjs.org, which the sandbox's egress must allow during bootstrap). npm said: " + tail(log, 2000));
    }
    const problem = await verifyRuntime(staging);
    if (problem) throw fail("install", "runtime-mismatch", problem);
    fs.rmSync(log, { force: true });
    try {
      fs.renameSync(staging, RUNTIME);
    } catch (error) {
      // Another bootstrap of the same digest won the race: use its (verified) install.
      if (!(await reusableRuntime())) throw error;
    }
    return undefined;
  } finally {
    fs.rmSync(staging, { recursive: true, force: true });
    fs.rmSync(cache, { recursive: true, force: true });
  }
}
`;

// Warm images (src/preparation) carry the gateway's worker archive inside the installed runtime package, at
// the path core names; a matching node then uses those bytes instead of downloading the archive again. The
// directory holds exactly one archive: a superseded one is removed before capture.
export const WORKER_ARCHIVE_STEPS = String.raw`
function workerArchivePath() {
  const bundle = PLAN.workerBundle;
  const parts = String(bundle.packageRelativePath).split("/");
  if (parts.length !== 2 || !/^[a-z][a-z-]*$/.test(parts[0]) || parts[1] !== bundle.sha256 + ".tgz") {
    throw fail("publish", "archive-path", "the gateway named an unusable worker archive path " + JSON.stringify(bundle.packageRelativePath));
  }
  return path.join(RUNTIME, "node_modules", "openclaw", parts[0], parts[1]);
}

/** Whether the published archive is present, a regular file of the right size and digest. */
async function publishedArchiveOk(archive) {
  let stat;
  try {
    stat = fs.lstatSync(archive);
  } catch (error) {
    if (error.code === "ENOENT") return false;
    throw error;
  }
  if (!stat.isFile() || stat.size !== PLAN.workerBundle.bytes) return false;
  const hash = createHash("sha256");
  await pipeline(fs.createReadStream(archive), hash);
  return hash.digest("hex") === PLAN.workerBundle.sha256;
}

async function publishWorkerArchive() {
  const archive = workerArchivePath();
  const directory = path.dirname(archive);
  fs.mkdirSync(directory, { recursive: true, mode: 0o700 });
  let downloaded = false;
  if (!(await publishedArchiveOk(archive))) {
    const staged = path.join(RUNTIMES, ".worker-" + randomBytes(8).toString("hex") + ".tgz");
    try {
      const result = await download(staged, PLAN.workerBundle, SECRETS.workerToken);
      verifyDownload(result, PLAN.workerBundle);
      fs.renameSync(staged, archive);
      downloaded = true;
    } finally {
      fs.rmSync(staged, { force: true });
    }
  }
  for (const entry of fs.readdirSync(directory, { withFileTypes: true })) {
    if (entry.name !== path.basename(archive) && /^[a-f0-9]{64}\.tgz$/.test(entry.name)) {
      fs.rmSync(path.join(directory, entry.name), { force: true });
    }
  }
  return { downloaded: downloaded, bytes: PLAN.workerBundle.bytes };
}
`;
