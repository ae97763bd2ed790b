// `openclaw-vercel-sandbox demo`, second half: the vercel-sandbox worker provider's lifecycle against the
// embedded emulator, as the gateway would drive it. The gateway's side (the node enrollment it offers) and the
// node bootstrap on the sandbox are stand-ins here, printed as such: the real bootstrap is not built yet.
import { Sandbox } from "@vercel/sandbox";
import { fakeEnrollment } from "../conformance/index.js";
import { startLocalSandboxApi } from "../emulator/index.js";
import { createVercelSandboxProvider } from "../provider/index.js";

type Log = (line: string) => void;

export async function runProviderDemo(log: Log = (line) => process.stdout.write(`${line}\n`)): Promise<void> {
  const api = await startLocalSandboxApi();
  const requestsSince = (() => {
    let mark = 0;
    return () => {
      const count = api.requests().length - mark;
      mark = api.requests().length;
      return count;
    };
  })();
  const provider = createVercelSandboxProvider({
    env: { DEMO_VERCEL_TOKEN: api.credentials.token },
    logger: { warn: (m) => log(`    warning: ${m}`) },
    scope: "demo",
    // Stand-in for the node bootstrap: proves the sandbox runs the tools a node needs, then reports a device.
    enroll: async ({ sandbox, enrollment }) => {
      const node = await sandbox.runCommand("node", ["--version"]);
      log(
        `    sandbox has node ${(await node.stdout()).trim()} (stand-in enroller: the real node bootstrap needs a gateway, see test/gateway/enrollment.test.ts)`,
      );
      return enrollment.waitForDeviceId();
    },
  });
  const profile = {
    apiUrl: api.url,
    tokenEnv: "DEMO_VERCEL_TOKEN",
    teamId: api.credentials.teamId,
    projectId: api.credentials.projectId,
    timeout: "10m",
  };
  const operationId = `provision:v2:${"d".repeat(64)}`;
  const step = async <T>(label: string, fn: () => Promise<T>): Promise<T> => {
    const started = performance.now();
    const value = await fn();
    log(`  ✓ ${label} (${Math.round(performance.now() - started)} ms, ${requestsSince()} API requests)`);
    return value;
  };
  log("worker provider vercel-sandbox against the emulator");
  try {
    const { leaseId } = await step("resolveAllocation", () => provider.resolveAllocation(profile, operationId));
    log(`    lease ${leaseId}`);
    const options = {
      executionMode: "worker-turn" as const,
      beginNodeEnrollment: async () => fakeEnrollment("demo-device"),
    };
    const lease = await step("provision", () => provider.provision(profile, operationId, options));
    log(`    node ${lease.node?.deviceId}`);
    await step("provision again (replay adopts, creates nothing)", () =>
      provider.provision(profile, operationId, options),
    );
    const status = await step("inspect", () => provider.inspect({ leaseId, profile }));
    log(`    ${status.status}`);
    await step("destroy (proves absence)", () => provider.destroy({ leaseId, profile }));
    const after = await step("inspect", () => provider.inspect({ leaseId, profile }));
    log(`    ${after.status}`);
    const left = await (await Sandbox.list({ ...api.credentials, fetch: api.fetch })).toArray();
    if (left.length > 0) throw new Error(`${left.length} sandbox(es) left behind`);
    log("provider demo finished: no sandbox left behind");
  } finally {
    await provider.dispose();
    await api.close();
  }
}
