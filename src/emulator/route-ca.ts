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

/** What `issueCertificates` makes: a CA and one leaf it signs, each for `days`. */
export interface CertificateRequest {
  caSubject: string;
  leafSubject: string;
  /** The leaf's subjectAltName, e.g. `DNS:*.vercel.run` or `IP:10.0.0.1`. */
  altName: string;
  caDays: number;
  leafDays: number;
}

/**
 * Issues a CA and a leaf certificate into `dir` with the openssl CLI (P-256 keys, 0600): `ca.key`, `ca.crt`,
 * `leaf.key`, `leaf.crt`; returns the PEMs.
 */
export async function issueCertificates(dir: string, request: CertificateRequest): Promise<RouteCa> {
  const at = (name: string) => path.join(dir, name);
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  await run("openssl", [
    "req",
    "-x509",
    ...ec,
    "-days",
    String(request.caDays),
    "-subj",
    `/CN=${request.caSubject}`,
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
    `/CN=${request.leafSubject}`,
    "-addext",
    `subjectAltName=${request.altName}`,
    "-keyout",
    at("leaf.key"),
    "-out",
    at("leaf.csr"),
  ]);
  await run("openssl", [
    "x509",
    "-req",
    "-in",
    at("leaf.csr"),
    "-CA",
    at("ca.crt"),
    "-CAkey",
    at("ca.key"),
    "-CAcreateserial",
    "-days",
    String(request.leafDays),
    "-copy_extensions",
    "copy",
    "-out",
    at("leaf.crt"),
  ]);
  for (const key of ["ca.key", "leaf.key"]) await chmod(at(key), 0o600);
  const read = (name: string) => readFile(at(name), "utf8");
  return { ca: await read("ca.crt"), key: await read("leaf.key"), cert: await read("leaf.crt") };
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
