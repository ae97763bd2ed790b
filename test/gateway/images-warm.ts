// `openclaw vercel-sandbox images warm` on the real gateway of a release, as a user runs it before a project's
// first dispatch: the base runtime image of the profile's shape is built on a worker of that gateway, which is
// destroyed after; a second run builds nothing. This spec's build is also the run's base runtime image of the
// release (base-images.ts): it holds the run cache's right to it from before its gateway starts, and keeps what
// images warm built, so spec files that need the image wait for this one instead of building another.
import { Sandbox } from "@vercel/sandbox";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Hold } from "../support/run-cache.js";
import { holdBaseImage, keepBaseImage } from "./base-images.js";
import { parseCliJson } from "./cli-output.js";
import { TOKEN_ENV } from "./environments.js";
import { PROFILE, WorkerGateway } from "./worker-gateway.js";

/** A sandbox of the same account that is not the profile's: images warm must leave it alone. */
const FOREIGN = "scratch-of-someone";

export function defineImagesWarmSpec(version: string): void {
  const worker = new WorkerGateway(version);
  let hold: Hold | undefined;

  beforeAll(async () => {
    hold = await holdBaseImage(version);
    await worker.start();
    const api = worker.emulator;
    await Sandbox.create({ ...api.credentials, fetch: api.fetch, runtime: "node24", name: FOREIGN });
  }, 900_000);

  afterAll(async () => {
    try {
      await hold?.release();
    } finally {
      await worker.dispose();
    }
  }, 240_000);

  /** `openclaw vercel-sandbox <args>` with the Vercel token in this CLI process's environment only. */
  const vsb = (args: string[], timeoutMs = 120_000) =>
    worker.gw.oc(["vercel-sandbox", ...args], {
      timeoutMs,
      env: { [TOKEN_ENV]: worker.emulator.credentials.token },
    });
  const sandboxNames = async () => (await worker.sandboxes()).map((s) => s.name).sort();

  describe(`images warm on openclaw ${version}`, () => {
    it("images warm --worker-profile builds the base image on a worker of the gateway, destroys it, and a second run builds nothing", {
      timeout: 900_000,
    }, async () => {
      const gw = worker.gw;
      const result = await vsb(["images", "warm", "--worker-profile", PROFILE, "--json"], 840_000);
      if (result.code !== 0) {
        // The provision's own lines are in the gateway's log, not in the command's output.
        throw new Error(`${gw.describeFailure("images warm", result)}\n${gw.redact(await gw.gatewayLogTail(120))}`);
      }
      const report = parseCliJson<{
        built: boolean;
        snapshotId: string;
        environmentId: string;
        leaseId: string;
        wallMs: number;
        sizeBytes?: number;
      }>(result.stdout);
      expect(report).toMatchObject({ profile: PROFILE, built: true, environmentId: expect.any(String) });
      // The run's base image of this release, for the spec files waiting for it.
      if (hold) {
        await keepBaseImage(version, gw.stateDir, worker.emulatorWorld!, hold.staging);
        await hold.publish();
        await hold.release();
      }
      // Progress lines on stderr, and no secret this run knows of anywhere in the output.
      expect(result.stderr).toMatch(/^vercel-sandbox images warm: environment \S+ ready/m);
      expect(result.stderr).toMatch(/^vercel-sandbox images warm: environment \S+ destroyed/m);
      const said = result.stdout + result.stderr;
      expect(gw.redact(said)).toBe(said);
      expect(said).not.toContain(worker.emulator.credentials.token);
      const progress = result.stderr.split("\n").filter((l) => l.startsWith("vercel-sandbox images warm: "));
      const phases = (await gw.gatewayLogText())
        .split("\n")
        .filter((l) => l.includes(`${report?.leaseId}:`) && / \d+ ms/.test(l))
        .map((l) => l.slice(l.indexOf(`${report?.leaseId}:`), 200));
      process.stderr.write(
        `[images warm ${version}] ${report?.wallMs} ms, ${report?.snapshotId}, ${report?.sizeBytes ?? "?"} bytes\n` +
          `${[...progress, ...phases].join("\n")}\n`,
      );

      const images = await vsb(["images", "--json"]);
      const listed = parseCliJson<{ images: Array<{ snapshotId: string; kind?: string; sourceLeaseId: string }> }>(
        images.stdout,
      );
      expect(listed?.images.find((i) => i.snapshotId === report?.snapshotId)).toMatchObject({
        kind: "base",
        sourceLeaseId: report?.leaseId,
      });
      const table = await vsb(["images"]);
      expect(table.stdout).toMatch(new RegExp(`^${report?.snapshotId}\\s+base\\s`, "m"));
      // The environment is no longer live, and no sandbox of its lease remains on the emulator; the other stays.
      const environments = await gw.callOk<{ environments: Array<{ id: string; worker?: { state: string } }> }>(
        "environments.list",
        {},
      );
      const left = environments.environments.find((e) => e.id === report?.environmentId);
      expect([undefined, "destroyed"]).toContain(left?.worker?.state);
      expect(await sandboxNames()).toEqual([FOREIGN]);

      const again = await vsb(["images", "warm", "--worker-profile", PROFILE]);
      expect(again.code, gw.describeFailure("images warm", again)).toBe(0);
      expect(again.stdout).toMatch(
        new RegExp(`^Base image ${report?.snapshotId} of profile ${PROFILE} is current: nothing was built`, "m"),
      );
      expect(again.stdout).not.toMatch(/environment \S+ destroyed/);
      expect(await sandboxNames()).toEqual([FOREIGN]);
    });
  });
}
