// VM1's way to "Vercel": a TLS front on the job's host address that pipes each connection to the emulator's
// loopback API, so VM1's gateway uses `apiUrl: https://<address>:<port>` exactly as it would use
// https://vercel.com/api (the plugin accepts plain http only for loopback, which VM1 cannot reach). The front has
// its own CA (issued like the emulator's route CA); VM1's gateway trusts it through NODE_EXTRA_CA_CERTS. Keys stay in
// the job's temp dir on the host and never enter a sandbox.
import net from "node:net";
import tls from "node:tls";
import { issueCertificates } from "../emulator/route-ca.js";

export interface ApiFront {
  url: string;
  /** PEM of the CA VM1 must trust. */
  caPem: string;
  close(): Promise<void>;
}

/** Serves `target` (the emulator's http://127.0.0.1:port) over TLS on `address`. `dir` holds the keys (0700). */
export async function startApiFront(address: string, target: string, dir: string): Promise<ApiFront> {
  const { ca, key, cert } = await issueCertificates(dir, {
    caSubject: "openclaw-vercel-sandbox main job API CA",
    leafSubject: address,
    altName: `IP:${address}`,
    caDays: 2,
    leafDays: 2,
  });
  const upstream = new URL(target);
  const sockets = new Set<net.Socket>();
  const server = tls.createServer({ key, cert }, (client) => {
    const backend = net.connect({ host: upstream.hostname, port: Number(upstream.port) });
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
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, address, () => resolve());
  });
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `https://${address}:${port}`,
    caPem: ca,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
