// A private certificate authority and one leaf certificate it signs, issued with the openssl CLI (node:crypto
// cannot issue certificates). The emulator's port routes use one (emulator/route-ca.ts), and so does the main
// job's TLS API front; neither owns the other, so the issuing lives here.
import { execFile } from "node:child_process";
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
