// The gateway's half of a real node enrollment, for counting the real enroller's requests: an HTTPS stand-in
// for the gateway's artifact route (self-signed, so the descriptor pins its fingerprint) serving a packed
// stand-in `openclaw` CLI (the enrollment specs' fixture node) and a worker archive as core publishes it, and
// provision options whose enrollment (and, for warm images, runtime preparation) points at it. The artifact and
// the certificate come from the specs' fixtures. The bootstrap program runs for real on the emulator's sandbox:
// it downloads, verifies, installs with npm and starts the fixture node, whose identity file is the device id
// the gateway "sees".
import { createHash, randomBytes, X509Certificate } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Sandbox } from "@vercel/sandbox";
import { enrollmentFixtures } from "./specs.mjs";

const VERSION = "2026.9.2";
const HOME = "/home/vercel-sandbox";

/**
 * Starts the stand-in gateway. `connection` reaches the emulator for the gateway's own reads (the device
 * wait); those requests are the gateway's, not the plugin's. `runtimeArtifact` replaces the fixture archive.
 */
export async function startEnrollmentGateway(connection, runtimeArtifact) {
  const { packFixture, selfSigned } = await enrollmentFixtures();
  const dir = mkdtempSync(join(tmpdir(), "bench-gateway-"));
  const artifact = runtimeArtifact ?? packFixture(VERSION);
  // Its bytes do not matter to the provider, only its digest: the runtime action publishes it as it is.
  const workerBytes = randomBytes(4096);
  const worker = { bytes: workerBytes, sha256: createHash("sha256").update(workerBytes).digest("hex") };
  const served = new Map([artifact, worker].map((a) => [`/__openclaw__/worker-bootstrap/artifacts/${a.sha256}`, a]));
  const tls = selfSigned(dir, "bench-gateway", ["IP:127.0.0.1"]);
  const token = `bench-bootstrap-${randomBytes(16).toString("hex")}`;
  let downloads = 0;
  const server = createServer(tls, (req, res) => {
    const wanted = served.get(req.url);
    if (req.headers.authorization !== `Bearer ${token}`) return void res.writeHead(401).end();
    if (!wanted) return void res.writeHead(404).end();
    if (wanted === artifact) downloads += 1;
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": wanted.bytes.length });
    res.end(wanted.bytes);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const urlOf = (sha256) =>
    `https://127.0.0.1:${server.address().port}/__openclaw__/worker-bootstrap/artifacts/${sha256}`;
  const url = urlOf(artifact.sha256);
  const fingerprint = new X509Certificate(tls.cert).fingerprint256;
  const runtime = {
    url,
    token,
    sha256: artifact.sha256,
    bytes: artifact.bytes.length,
    openclawVersion: VERSION,
    enabledPluginIds: [],
    tlsFingerprint: fingerprint,
  };

  async function deviceOf(sandboxName, leaseId) {
    const path = `${HOME}/.openclaw/cloud-workers/${leaseId}/identity.json`;
    for (;;) {
      const sandbox = await Sandbox.get({ ...connection, name: sandboxName });
      const file = await sandbox.readFileToBuffer({ path }).catch(() => undefined);
      const identity = file ? JSON.parse(file.toString("utf8")) : undefined;
      if (identity?.deviceId) return identity.deviceId;
      await sleep(100);
    }
  }

  return {
    /** How many times the runtime (the fixture node) was downloaded. */
    downloads: () => downloads,
    /** `prepareNodeRuntime` as core hands it over for a warm image: the runtime and the worker archive. */
    prepareNodeRuntime: async () => ({
      nodeBootstrap: runtime,
      workerBundle: {
        url: urlOf(worker.sha256),
        token,
        sha256: worker.sha256,
        bytes: worker.bytes.length,
        tlsFingerprint: fingerprint,
        packageRelativePath: `worker-archives/${worker.sha256}.tgz`,
      },
    }),
    /** Provision options as the gateway passes them; `mode: "resume"` is a restarted gateway's replay. */
    options(sandboxName, leaseId, mode = "connect") {
      return {
        executionMode: "worker-turn",
        beginNodeEnrollment: async () => {
          const common = {
            nodeBootstrap: runtime,
            openclawVersion: VERSION,
            displayName: "Cloud worker bench",
            waitForDeviceId: () => deviceOf(sandboxName, leaseId),
          };
          return mode === "resume"
            ? { ...common, mode, deviceId: "resumed" }
            : { ...common, mode, setupCode: `bench-setup-${randomBytes(16).toString("hex")}`, setupId: "bench" };
        },
      };
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          rmSync(dir, { recursive: true, force: true });
          resolve();
        });
      }),
  };
}
