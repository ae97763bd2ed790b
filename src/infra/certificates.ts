// A private certificate authority and one leaf certificate it signs, issued with the openssl CLI (node:crypto
// cannot issue certificates). The emulator's port routes use one (emulator/route-ca.ts), and so does the main
// job's TLS API front; neither owns the other, so the issuing lives here.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmod, readFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** PEMs of an issued CA and its leaf. */
export interface IssuedCertificates {
  /** The CA certificate: what clients trust. */
  ca: string;
  /** The leaf's key and certificate: what a server presents. */
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
export async function issueCertificates(dir: string, request: CertificateRequest): Promise<IssuedCertificates> {
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
  await signLeaf({
    dir,
    ca: { cert: at("ca.crt"), key: at("ca.key") },
    key: { create: at("leaf.key") },
    subject: request.leafSubject,
    altName: request.altName,
    days: request.leafDays,
  });
  for (const key of ["ca.key", "leaf.key"]) await chmod(at(key), 0o600);
  const read = (name: string) => readFile(at(name), "utf8");
  return { ca: await read("ca.crt"), key: await read("leaf.key"), cert: await read("leaf.crt") };
}

/** A leaf for `signLeaf`: signed by the CA at `ca` (PEM paths), its key created at `key.create` or read from `key.use`. */
export interface LeafRequest {
  /** Where `leaf.csr` and `leaf.crt` are written. */
  dir: string;
  ca: { cert: string; key: string };
  key: { create: string } | { use: string };
  subject: string;
  /** e.g. `DNS:*.vercel.run` or `IP:10.0.0.1`. */
  altName: string;
  days: number;
}

/** Signs a leaf certificate (random serial, extensions copied from the request); returns its PEM. */
export async function signLeaf(request: LeafRequest): Promise<string> {
  const at = (name: string) => path.join(request.dir, name);
  const key =
    "create" in request.key
      ? ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-keyout", request.key.create]
      : ["-key", request.key.use];
  await run("openssl", [
    "req",
    "-new",
    ...key,
    "-subj",
    `/CN=${request.subject}`,
    "-addext",
    `subjectAltName=${request.altName}`,
    "-out",
    at("leaf.csr"),
  ]);
  await run("openssl", [
    "x509",
    "-req",
    "-in",
    at("leaf.csr"),
    "-CA",
    request.ca.cert,
    "-CAkey",
    request.ca.key,
    "-set_serial",
    `0x${randomBytes(12).toString("hex")}`,
    "-days",
    String(request.days),
    "-copy_extensions",
    "copy",
    "-out",
    at("leaf.crt"),
  ]);
  return readFile(at("leaf.crt"), "utf8");
}
