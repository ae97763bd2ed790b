// VM1's way to "Vercel": a TLS front on the job's host address that pipes each connection to the emulator's
// loopback API, so VM1's gateway uses `apiUrl: https://<address>:<port>` exactly as it would use
// https://vercel.com/api (the plugin accepts plain http only for loopback, which VM1 cannot reach). The front has
// its own CA (issued like the emulator's route CA); VM1's gateway trusts it through NODE_EXTRA_CA_CERTS. Keys stay in
// the job's temp dir on the host and never enter a sandbox. Being "Vercel", the front also sees what the plugin on VM1
// hands to its workers in their commands' environment (bootstrap tokens, setup codes, worker-bundle tokens): it keeps
// those values in memory, never logged, so the job can check that none of them is on VM1's disk.
import net from "node:net";
import tls from "node:tls";
import { issueCertificates } from "../infra/index.js";

export interface ApiFront {
  url: string;
  /** PEM of the CA VM1 must trust. */
  caPem: string;
  /** The enrollment secrets VM1's plugin sent to workers so far, by variable name (in memory only). */
  handedOver(): Array<{ name: string; value: string }>;
  close(): Promise<void>;
}

// The enrollment program's secret variables (PROGRAM_ENV in src/provider/enrollment/program/index.ts: the bootstrap
// and worker-bundle tokens, the setup code) as JSON request bodies carry them: `"OPENCLAW_VSB_SETUP_CODE":"…"`.
// Secrets are tokens: no quote or backslash in them.
const HANDOVER = /"(OPENCLAW_VSB_(?:[A-Z_]*TOKEN|SETUP_CODE))"\s*:\s*"([^"\\]+)"/g;
/** How much of a connection's previous bytes to keep, so a variable split across two reads is still seen. */
const CARRY = 16 * 1024;

/** The secret variables named in `text` (pure). */
export function handoverIn(text: string): Array<{ name: string; value: string }> {
  return [...text.matchAll(HANDOVER)].map((m) => ({ name: m[1]!, value: m[2]! }));
}

/** Serves `target` (the emulator's http://127.0.0.1:port) over TLS on `address`. `dir` holds the keys (0700). */
export async function startApiFront(address: string, target: string, dir: string, port = 0): Promise<ApiFront> {
  const { ca, key, cert } = await issueCertificates(dir, {
    caSubject: "openclaw-vercel-sandbox main job API CA",
    leafSubject: address,
    altName: `IP:${address}`,
    caDays: 2,
    leafDays: 2,
  });
  const upstream = new URL(target);
  const sockets = new Set<net.Socket>();
  const seen = new Map<string, { name: string; value: string }>();
  const server = tls.createServer({ key, cert }, (client) => {
    const backend = net.connect({ host: upstream.hostname, port: Number(upstream.port) });
    let carried = "";
    client.on("data", (chunk: Buffer) => {
      const text = carried + chunk.toString("latin1");
      for (const found of handoverIn(text)) seen.set(`${found.name}=${found.value}`, found);
      carried = text.slice(-CARRY);
    });
    for (const socket of [client, backend]) {
      sockets.add(socket);
      socket.once("close", () => sockets.delete(socket));
      socket.on("error", () => {
        client.destroy();
        backend.destroy();
      });
    }
    client.pipe(backend).pipe(client);
  });
  server.on("tlsClientError", () => {});
  // A preferred port (the last run's, for a stable apiUrl) that is taken falls back to a free one.
  const listen = (on: number) =>
    new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(on, address, () => {
        server.off("error", reject);
        resolve();
      });
    });
  await listen(port).catch((error: NodeJS.ErrnoException) => {
    if (port === 0 || error.code !== "EADDRINUSE") throw error;
    return listen(0);
  });
  const bound = (server.address() as net.AddressInfo).port;
  return {
    url: `https://${address}:${bound}`,
    caPem: ca,
    handedOver: () => [...seen.values()],
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
