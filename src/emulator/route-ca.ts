// The local certificate authority of the emulator's port routes (route-server.ts): a CA and a wildcard
// certificate for `*.vercel.run`, made once per data dir (issued by src/infra/certificates.ts with the openssl
// CLI). Every sandbox trusts the CA (image.ts adds it to the sandbox's bundle), and so can a test or a
// host (`api.routes.ca`). The keys stay in the data dir (0600) and never enter a sandbox.
import { existsSync } from "node:fs";
import { mkdir, readFile, rename, rm } from "node:fs/promises";
import path from "node:path";
import { issueCertificates } from "../infra/index.js";

export const ROUTE_DOMAIN = "vercel.run";

export interface RouteCa {
  /** PEM of the CA certificate: what clients trust. */
  ca: string;
  /** PEM key and certificate for `*.vercel.run`, served by the route server. */
  key: string;
  cert: string;
}

/** The data dir's route CA, issued on first use (atomically: a half-issued CA is never used). */
export async function ensureRouteCa(dataDir: string): Promise<RouteCa> {
  const dir = path.join(dataDir, "route-ca");
  if (!existsSync(path.join(dir, "leaf.crt"))) {
    const staging = `${dir}.issuing-${process.pid}-${Date.now()}`;
    await mkdir(staging, { recursive: true, mode: 0o700 });
    try {
      await issueCertificates(staging, {
        caSubject: "Vercel Sandbox emulator route CA",
        leafSubject: `*.${ROUTE_DOMAIN}`,
        altName: `DNS:*.${ROUTE_DOMAIN}`,
        caDays: 3650,
        leafDays: 825,
      });
      await rm(dir, { recursive: true, force: true });
      await rename(staging, dir);
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      throw error;
    }
  }
  const read = (name: string) => readFile(path.join(dir, name), "utf8");
  return { ca: await read("ca.crt"), key: await read("leaf.key"), cert: await read("leaf.crt") };
}
