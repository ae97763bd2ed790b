// The local certificate authority of the emulator's port routes (route-server.ts): a CA and a wildcard
// certificate for `*.vercel.run`, made once per data dir with the openssl CLI (node:crypto cannot issue
// certificates). Every sandbox trusts the CA (image.ts adds it to the sandbox's bundle), and so can a test or a
// host (`api.routes.ca`). The keys stay in the data dir (0600) and never enter a sandbox.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, rename, rm } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

export const ROUTE_DOMAIN = "vercel.run";

export interface RouteCa {
  /** PEM of the CA certificate: what clients trust. */
  ca: string;
  /** PEM key and certificate for `*.vercel.run`, served by the route server. */
  key: string;
  cert: string;
}

async function issue(dir: string): Promise<void> {
  const at = (name: string) => path.join(dir, name);
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  await run("openssl", [
    "req",
    "-x509",
    ...ec,
    "-days",
    "3650",
    "-subj",
    "/CN=Vercel Sandbox emulator route CA",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
    "-keyout",
    at("ca.key"),
    "-out",
    at("ca.crt"),
  ]);
  await run("openssl", [
    "req",
    "-new",
    ...ec,
    "-subj",
    `/CN=*.${ROUTE_DOMAIN}`,
    "-addext",
    `subjectAltName=DNS:*.${ROUTE_DOMAIN}`,
    "-keyout",
    at("route.key"),
    "-out",
    at("route.csr"),
  ]);
  await run("openssl", [
    "x509",
    "-req",
    "-in",
    at("route.csr"),
    "-CA",
    at("ca.crt"),
    "-CAkey",
    at("ca.key"),
    "-CAcreateserial",
    "-days",
    "825",
    "-copy_extensions",
    "copy",
    "-out",
    at("route.crt"),
  ]);
  for (const key of ["ca.key", "route.key"]) await chmod(at(key), 0o600);
}

/** The data dir's route CA, issued on first use (atomically: a half-issued CA is never used). */
export async function ensureRouteCa(dataDir: string): Promise<RouteCa> {
  const dir = path.join(dataDir, "route-ca");
  if (!existsSync(path.join(dir, "route.crt"))) {
    const staging = `${dir}.issuing-${process.pid}-${Date.now()}`;
    await mkdir(staging, { recursive: true, mode: 0o700 });
    try {
      await issue(staging);
      await rm(dir, { recursive: true, force: true });
      await rename(staging, dir);
    } catch (error) {
      await rm(staging, { recursive: true, force: true });
      throw error;
    }
  }
  const read = (name: string) => readFile(path.join(dir, name), "utf8");
  return { ca: await read("ca.crt"), key: await read("route.key"), cert: await read("route.crt") };
}
