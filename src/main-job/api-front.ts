// VM1's way to "Vercel": a TLS front on the job's host address that pipes each connection to the emulator's
// loopback API, so VM1's gateway uses `apiUrl: https://<address>:<port>` exactly as it would use
// https://vercel.com/api (the plugin accepts plain http only for loopback, which VM1 cannot reach). The front has
// its own CA, made here with the openssl CLI; VM1's gateway trusts it through NODE_EXTRA_CA_CERTS. Keys stay in
// the job's temp dir on the host and never enter a sandbox.
import { execFile } from "node:child_process";
import { readFile } from "node:fs/promises";
import net from "node:net";
import path from "node:path";
import tls from "node:tls";
import { promisify } from "node:util";

const run = promisify(execFile);

export interface ApiFront {
  url: string;
  /** PEM of the CA VM1 must trust. */
  caPem: string;
  close(): Promise<void>;
}

async function issue(dir: string, address: string): Promise<{ ca: string; key: string; cert: string }> {
  const at = (name: string) => path.join(dir, name);
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  await run("openssl", [
    "req",
    "-x509",
    ...ec,
    "-days",
    "2",
    "-subj",
    "/CN=openclaw-vercel-sandbox main job API CA",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
    "-keyout",
    at("api-ca.key"),
    "-out",
    at("api-ca.crt"),
  ]);
  await run("openssl", [
    "req",
    "-new",
    ...ec,
    "-subj",
    `/CN=${address}`,
    "-addext",
    `subjectAltName=IP:${address}`,
    "-keyout",
    at("api.key"),
    "-out",
    at("api.csr"),
  ]);
  await run("openssl", [
    "x509",
    "-req",
    "-in",
    at("api.csr"),
    "-CA",
    at("api-ca.crt"),
    "-CAkey",
    at("api-ca.key"),
    "-CAcreateserial",
    "-days",
    "2",
    "-copy_extensions",
    "copy",
    "-out",
    at("api.crt"),
  ]);
  const read = (name: string) => readFile(at(name), "utf8");
  return { ca: await read("api-ca.crt"), key: await read("api.key"), cert: await read("api.crt") };
}

/** Serves `target` (the emulator's http://127.0.0.1:port) over TLS on `address`. `dir` holds the keys (0700). */
export async function startApiFront(address: string, target: string, dir: string): Promise<ApiFront> {
  const { ca, key, cert } = await issue(dir, address);
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
