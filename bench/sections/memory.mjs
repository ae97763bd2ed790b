// Memory: the plugin's heap and RSS growth with N tracked leases, measured in a Node process of its own that
// holds only the provider (memory-child.mjs); sections/gateway.mjs takes the same figure inside a real gateway.
import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";

const CHILD = fileURLToPath(new URL("../memory-child.mjs", import.meta.url));

export async function memory(api, leases) {
  const env = {
    ...process.env,
    BENCH_LEASES: String(leases),
    BENCH_API_URL: api.url,
    BENCH_API_TOKEN: api.credentials.token,
    BENCH_TEAM_ID: api.credentials.teamId,
    BENCH_PROJECT_ID: api.credentials.projectId,
  };
  const stdout = await new Promise((resolve, reject) => {
    execFile(process.execPath, ["--expose-gc", CHILD], { env, timeout: 600_000 }, (error, out, err) =>
      error ? reject(new Error(`memory child: ${error.message} ${err}`)) : resolve(out),
    );
  });
  const figures = JSON.parse(stdout.trim().split("\n").pop());
  return {
    where:
      "in a Node process of its own holding only the built provider (stand-in enroller, keepalive armed for " +
      "each lease, ledger in memory)",
    ...figures,
    heapPerLeaseBytes: Math.round(figures.heapGrowthBytes / figures.leases),
  };
}
