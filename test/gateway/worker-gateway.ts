// A real gateway of a given 2026.9.x with the packed plugin and a `vercel-sandbox` profile on its own emulator,
// bound to a TLS test host (core enrolls nodes only on a non-loopback gateway): what the version specs share.
// dispose() ends the gateway, the emulator and the host, also when start() failed halfway.
import { execFileSync } from "node:child_process";
import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { Sandbox } from "@vercel/sandbox";
import { expect } from "vitest";
import type { LocalSandboxApi } from "../../src/emulator/index.js";
import { type SpecEmulator, seedBaseImage, startSpecEmulator } from "./base-images.js";
import { type Environment, emulatorSettings, readyEnvironment, TOKEN_ENV } from "./environments.js";
import { GatewayHarness } from "./gateway-harness.js";
import { TestHost } from "./test-host.js";
import { waitFor } from "./wait.js";

export const PROFILE = "vsb";

/** Releases whose core keeps ready workers (`readyWorkers`, default 1 per project and profile). */
const READY_WORKER_VERSIONS: readonly string[] = ["2026.9.4", "2026.9.5", "2026.9.6"];

export interface WorkerGatewayOptions {
  /**
   * Start from the run's base runtime image of this version (base-images.ts), built once per run by the first spec
   * file that asks. For versions several spec files provision workers on; a spec that proves the cold path (the
   * runtime installed on VM2), or the only one of its version, leaves it off (the default).
   */
  seed?: boolean;
}

export class WorkerGateway {
  harness: GatewayHarness | undefined;
  host: TestHost | undefined;
  emulatorWorld: SpecEmulator | undefined;
  /** Phase durations (ms) for the version table. */
  readonly timings: Record<string, number> = {};

  constructor(
    readonly openclawVersion: string,
    readonly options: WorkerGatewayOptions = {},
  ) {}

  get api(): LocalSandboxApi | undefined {
    return this.emulatorWorld?.api;
  }

  get gw(): GatewayHarness {
    if (!this.harness) throw new Error("the gateway was not started (see start())");
    return this.harness;
  }

  get emulator(): LocalSandboxApi {
    if (!this.api) throw new Error("the emulator was not started (see start())");
    return this.api;
  }

  /**
   * Installs the packed plugin into a fresh state of this version, adds the profile (with `profile`'s extra
   * keys) and `config`, starts it. On a release with ready workers the profile keeps none unless `profile`
   * says `readyWorkers`, so a spec's sandbox count is its own dispatches'. `prepare` runs on the
   * harness before the config is patched and the gateway starts (e.g. a registry plugin install, an auth profile).
   */
  async start(
    config: Record<string, unknown> = {},
    profile: Record<string, unknown> = {},
    prepare?: (gw: GatewayHarness) => Promise<void>,
  ): Promise<void> {
    const started = performance.now();
    this.harness = await GatewayHarness.create({ openclawVersion: this.openclawVersion });
    this.host = await TestHost.create();
    this.emulatorWorld = await startSpecEmulator(this.options.seed ? { seedVersion: this.openclawVersion } : {});
    const api = this.emulatorWorld.api;
    await this.harness.installPlugin(await this.harness.packPlugin());
    await prepare?.(this.harness);
    this.timings.installMs = Math.round(performance.now() - started);
    const { gateway: extraGateway, ...rest } = config as { gateway?: Record<string, unknown> };
    await this.harness.patchConfig({
      gateway: { ...this.host.gatewayConfig(), ...extraGateway },
      cloudWorkers: {
        profiles: {
          [PROFILE]: {
            provider: "vercel-sandbox",
            ...(READY_WORKER_VERSIONS.includes(this.openclawVersion) ? { readyWorkers: 0 } : {}),
            ...profile,
            settings: emulatorSettings(api),
          },
        },
      },
      ...rest,
    });
    const seeded = await seedBaseImage(this.harness.stateDir, emulatorSettings(api), this.emulatorWorld);
    this.timings.seededBaseImage = seeded ? 1 : 0;
    await this.harness.startGateway({
      bind: "custom",
      tlsCertPem: this.host.certPem,
      env: { [TOKEN_ENV]: api.credentials.token },
      secrets: [api.credentials.token],
    });
  }

  async sandboxes() {
    return (await Sandbox.list({ ...this.emulator.credentials, fetch: this.emulator.fetch })).toArray();
  }

  /** environments.create on the profile, then the wait for ready; returns the ready environment. */
  async createReady(): Promise<Environment> {
    const started = performance.now();
    const created = await this.gw.call<Environment>(
      "environments.create",
      { profileId: PROFILE, idempotencyKey: randomUUID() },
      840_000,
    );
    if (created.code !== 0) {
      // Core answers a create that threw with a generic UNAVAILABLE; the environment's own error and the gateway's
      // log say why.
      const listed = await this.gw.call("environments.list", {}, 60_000);
      throw new Error(
        `${this.gw.describeFailure("environments.create", created)}\n` +
          `environments.list: ${this.gw.redact(listed.stdout.trim() || listed.stderr.trim())}\n` +
          `${await this.gw.gatewayLogTail(80)}`,
      );
    }
    const ready = await readyEnvironment(this.gw, created.json?.id);
    this.timings.readyMs = Math.round(performance.now() - started);
    return ready;
  }

  /** environments.destroy, then the wait until the emulator holds no sandbox; returns what it holds then. */
  async destroy(environmentId: string) {
    await this.gw.callOk("environments.destroy", { environmentId }, 240_000);
    return waitFor(
      "the emulator to hold no sandbox",
      async () => {
        const boxes = await this.sandboxes();
        return boxes.length === 0 ? boxes : undefined;
      },
      { timeoutMs: 240_000, intervalMs: 1_000 },
    );
  }

  /**
   * The smoke every release gets (versions.test.ts, and the Codex spec on its release): the packed plugin is
   * installed and listed, `environments.create` on the profile becomes ready with a real node on a sandbox of its
   * own, running, and destroy removes that sandbox. Sandboxes are counted against those that were there before,
   * so a spec may run it beside workers of its own. Returns the phase timings.
   */
  async smoke(): Promise<Record<string, number>> {
    const listed = await this.gw.ocOk(["plugins", "list", "--json"], { timeoutMs: 120_000 });
    expect(listed.stdout).toContain("vercel-sandbox");
    const before = (await this.sandboxes()).map((b) => b.name).sort();
    const ready = await this.createReady();
    expect(ready.worker).toMatchObject({ providerId: "vercel-sandbox", state: "ready" });
    const added = (await this.sandboxes()).filter((b) => !before.includes(b.name));
    expect(added.map((b) => b.status)).toEqual(["running"]);
    await this.gw.callOk("environments.destroy", { environmentId: ready.id }, 240_000);
    const left = await waitFor(
      "the environment's sandbox to be gone",
      async () => {
        const names = (await this.sandboxes()).map((b) => b.name).sort();
        return names.includes(added[0]!.name) ? undefined : names;
      },
      { timeoutMs: 240_000, intervalMs: 1_000 },
    );
    expect(left).toEqual(before);
    return { ...this.timings, ...this.gw.timings };
  }

  /** A one-commit Git repository (a README titled `title`) in the gateway's run dir, for a session's worktree. */
  async createRepo(title: string): Promise<string> {
    const repo = path.join(this.gw.runDir, "repo");
    await fs.mkdir(repo);
    await fs.writeFile(path.join(repo, "README.md"), `# ${title}\n`);
    const git = (...args: string[]) => execFileSync("git", args, { cwd: repo, stdio: "ignore" });
    git("init", "-q", "-b", "main");
    git("add", "-A");
    git("-c", "user.name=spec", "-c", "user.email=spec@example.invalid", "commit", "-q", "-m", "repo");
    return repo;
  }

  async dispose(): Promise<void> {
    try {
      await this.harness?.dispose();
    } finally {
      try {
        await this.emulatorWorld?.close();
      } finally {
        await this.host?.dispose();
      }
    }
  }
}
