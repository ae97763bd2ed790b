// VM1: a sandbox running the real pinned OpenClaw gateway with this checkout's plugin installed the way a user
// installs it (`openclaw plugins install npm-pack:<tarball>`), its `vercel-sandbox` profile pointing at "Vercel"
// (the API front), the scripted model, and the idle clock notifying the host. Everything lives under
// /vercel/sandbox/gateway so a checkpoint carries it. Secrets (gateway token, Vercel token, notify secret) are
// never written on the box: they travel only in the environment of the gateway command (and of the CLI calls
// that need the token), so they never reach a checkpoint.
import type { Sandbox } from "@vercel/sandbox";
import { isolatedOpenClawEnv } from "./openclaw-env.js";
import { OPENCLAW_VERSION } from "./topology.js";

export const ROOT = "/vercel/sandbox/gateway";
const APP = `${ROOT}/app`;
const STATE = `${ROOT}/state`;
export const CONFIG_PATH = `${STATE}/openclaw.json`;
/** The plugin's warm-image store on VM1 (src/preparation/store.ts). */
export const IMAGE_STORE = `${STATE}/vercel-sandbox/images.json`;
export const GATEWAY_LOG = `${ROOT}/logs/gateway.out`;
export const SAMPLE_REPO = "/vercel/sandbox/sample";
const CA_BUNDLE = `${ROOT}/ca-bundle.pem`;
const OPENCLAW = `${APP}/node_modules/openclaw/openclaw.mjs`;
export const PROFILE_ID = "vsb";

export interface GatewaySecrets {
  gatewayToken: string;
  vercelToken: string;
  notifySecret: string;
}

/** The environment every openclaw process on VM1 gets; secrets only where given. */
export function openclawEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...isolatedOpenClawEnv({ home: `${ROOT}/home`, stateDir: STATE, configPath: CONFIG_PATH, tmpDir: `${ROOT}/tmp` }),
    NODE_EXTRA_CA_CERTS: CA_BUNDLE,
    ...extra,
  };
}

export function gatewayEnv(secrets: GatewaySecrets): Record<string, string> {
  return openclawEnv({
    OPENCLAW_GATEWAY_TOKEN: secrets.gatewayToken,
    VERCEL_TOKEN: secrets.vercelToken,
    VSB_NOTIFY_SECRET: secrets.notifySecret,
  });
}

/**
 * The gateway's start command: the first boot and every wake run the same one. `prelude`: shell run before the
 * gateway starts, with its environment (Codex mode starts its approvals client there).
 */
export function gatewayStart(port: number, secrets: GatewaySecrets, prelude = "") {
  return {
    cmd: "sh",
    args: [
      "-c",
      `${prelude}exec node ${OPENCLAW} gateway run --port ${port} --bind loopback --auth token >> ${GATEWAY_LOG} 2>&1`,
    ],
    env: gatewayEnv(secrets),
    cwd: ROOT,
  };
}

export class BoxCommandError extends Error {
  override readonly name = "BoxCommandError";
}

/** Runs a shell script on the box; a non-zero exit throws with the output's tail. */
export async function sh(sandbox: Sandbox, label: string, script: string, env: Record<string, string> = {}) {
  const done = await sandbox.runCommand({ cmd: "sh", args: ["-c", `set -e\n${script}`], env, cwd: "/vercel/sandbox" });
  const [stdout, stderr] = [await done.stdout(), await done.stderr()];
  if (done.exitCode !== 0) {
    throw new BoxCommandError(
      `${label} failed on ${sandbox.name} (exit ${done.exitCode}):\n${`${stdout}\n${stderr}`.trim().slice(-3000)}`,
    );
  }
  return stdout;
}

/** Runs the openclaw CLI on the box (`args` must hold no secret: argv is visible). */
export function openclaw(sandbox: Sandbox, label: string, args: string[], env: Record<string, string> = {}) {
  const quoted = args.map((a) => `'${a.replaceAll("'", "'\\''")}'`).join(" ");
  return sh(sandbox, label, `node ${OPENCLAW} ${quoted}`, openclawEnv(env));
}

/** npm install of openclaw (the pinned one unless told) into the box (from the registry, through the sandbox's egress). */
export async function installOpenClaw(sandbox: Sandbox, apiCaPem: string, version = OPENCLAW_VERSION): Promise<void> {
  await sandbox.writeFiles([{ path: `${ROOT}/api-ca.pem`, content: Buffer.from(apiCaPem) }]);
  await sh(
    sandbox,
    "npm install openclaw",
    [
      `mkdir -p ${APP} ${STATE} ${ROOT}/home ${ROOT}/tmp ${ROOT}/logs`,
      // The box's trust store plus the API front's CA: what the gateway's fetch trusts.
      `cat /etc/ssl/certs/ca-certificates.crt ${ROOT}/api-ca.pem > ${CA_BUNDLE}`,
      `cd ${APP}`,
      `echo '{"name":"vm1-gateway","private":true}' > package.json`,
      `npm install --no-audit --no-fund --loglevel=error --cache ${ROOT}/tmp/npm-cache openclaw@${version}`,
      // The download cache would only make every checkpoint of VM1 bigger.
      `rm -rf ${ROOT}/tmp/npm-cache`,
      `node ${OPENCLAW} --version`,
    ].join("\n"),
  );
}

/**
 * Makes the gateway trust this run's API front (its CA is new every run): on a VM1 created from a cached image,
 * whose bundle holds an earlier run's CA.
 */
export async function trustApiFront(sandbox: Sandbox, apiCaPem: string): Promise<void> {
  await sandbox.writeFiles([{ path: `${ROOT}/api-ca.pem`, content: Buffer.from(apiCaPem) }]);
  await sh(
    sandbox,
    "trust this run's API front",
    `cat /etc/ssl/certs/ca-certificates.crt ${ROOT}/api-ca.pem > ${CA_BUNDLE}`,
  );
}

/** Uploads the packed plugin and installs it as a user would; also enables it. */
export async function installPlugin(sandbox: Sandbox, tarball: Buffer, fileName: string): Promise<void> {
  const path = `${ROOT}/${fileName}`;
  await sandbox.writeFiles([{ path, content: tarball }]);
  await openclaw(sandbox, "openclaw plugins install", [
    "plugins",
    "install",
    `npm-pack:${path}`,
    "--force",
    "--accept-capabilities",
  ]);
  await sh(sandbox, "remove the install's npm cache", `rm -rf ${ROOT}/home/.npm ${path}`);
}

export async function writeConfig(sandbox: Sandbox, config: unknown): Promise<void> {
  await sandbox.writeFiles([{ path: CONFIG_PATH, content: Buffer.from(`${JSON.stringify(config, null, 2)}\n`) }]);
}

/** Applies a config patch through the CLI (validated by openclaw, as a user would edit it). */
export async function patchConfig(sandbox: Sandbox, patch: unknown): Promise<void> {
  const file = `${ROOT}/tmp/patch.json5`;
  await sandbox.writeFiles([{ path: file, content: Buffer.from(JSON.stringify(patch, null, 2)) }]);
  await openclaw(sandbox, "openclaw config patch", ["config", "patch", "--file", file]);
  await sh(sandbox, "remove the patch file", `rm -f ${file}`);
}

/** A small git repository with a devcontainer recipe: the session's managed worktree comes from it. */
export async function createSampleRepo(sandbox: Sandbox): Promise<void> {
  const devcontainer = JSON.stringify(
    { name: "sample", image: "node:24", postCreateCommand: "npm --version" },
    null,
    2,
  );
  await sandbox.writeFiles([
    {
      path: `${SAMPLE_REPO}/README.md`,
      content: Buffer.from("# sample\nA repository the main job's session works in.\n"),
    },
    { path: `${SAMPLE_REPO}/.devcontainer/devcontainer.json`, content: Buffer.from(`${devcontainer}\n`) },
  ]);
  await sh(
    sandbox,
    "git init the sample repository",
    [
      `cd ${SAMPLE_REPO}`,
      "git init -q -b main",
      "git add -A",
      "git -c user.name=main-job -c user.email=main-job@example.invalid commit -q -m 'sample repository'",
    ].join("\n"),
  );
}
