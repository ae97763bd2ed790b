// Self-signed certificates for test servers (a stand-in gateway, a test host), made by the openssl CLI, with the
// SHA-256 fingerprint setup codes and bootstrap descriptors pin. Written under `dir`, key 0600.
import { execFileSync } from "node:child_process";
import { X509Certificate } from "node:crypto";
import { chmodSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface SelfSigned {
  certPath: string;
  keyPath: string;
  cert: Buffer;
  key: Buffer;
  /** Lowercase hex without colons. */
  fingerprint: string;
}

/** `altNames` are subjectAltName entries, e.g. ["IP:127.0.0.1", "DNS:localhost"]. */
export function selfSigned(dir: string, commonName: string, altNames: string[]): SelfSigned {
  const certPath = join(dir, `${commonName}.crt`);
  const keyPath = join(dir, `${commonName}.key`);
  execFileSync(
    "openssl",
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:prime256v1",
      "-nodes",
      "-days",
      "2",
      "-subj",
      `/CN=${commonName}`,
      "-addext",
      `subjectAltName=${altNames.join(",")}`,
      "-keyout",
      keyPath,
      "-out",
      certPath,
    ],
    { stdio: "ignore" },
  );
  chmodSync(keyPath, 0o600);
  const cert = readFileSync(certPath);
  const fingerprint = new X509Certificate(cert).fingerprint256.replaceAll(":", "").toLowerCase();
  return { certPath, keyPath, cert, key: readFileSync(keyPath), fingerprint };
}
