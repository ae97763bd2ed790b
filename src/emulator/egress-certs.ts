// Certificates for the hosts whose requests the egress proxy must read (egress-intercept.ts): a leaf
// per host, signed by the emulator's route CA, which every sandbox already trusts (image.ts). Issued
// on first use with the openssl CLI (node:crypto cannot sign certificates), reusing the route
// server's key, and kept in memory only; the CA key never leaves the data dir and never enters a sandbox.
import { mkdtemp, rm } from "node:fs/promises";
import { isIP } from "node:net";
import path from "node:path";
import { signLeaf } from "../infra/index.js";
import type { RouteCa } from "./route-ca.js";

export interface LeafCertificate {
  key: string;
  cert: string;
}

export class InterceptCertificates {
  private readonly leaves = new Map<string, Promise<LeafCertificate>>();

  /** `ca`: the route CA (issued into `<dataDir>/route-ca` by ensureRouteCa). */
  constructor(
    private readonly dataDir: string,
    private readonly ca: () => Promise<RouteCa>,
  ) {}

  /** The leaf for a canonical host (a name or an address); a failed issue is not remembered. */
  leafFor(host: string): Promise<LeafCertificate> {
    const known = this.leaves.get(host);
    if (known) return known;
    const issuing = this.issue(host);
    this.leaves.set(host, issuing);
    issuing.catch(() => this.leaves.get(host) === issuing && this.leaves.delete(host));
    return issuing;
  }

  private async issue(host: string): Promise<LeafCertificate> {
    const { key } = await this.ca();
    const caDir = path.join(this.dataDir, "route-ca");
    const work = await mkdtemp(path.join(caDir, "egress-"));
    try {
      const cert = await signLeaf({
        dir: work,
        ca: { cert: path.join(caDir, "ca.crt"), key: path.join(caDir, "ca.key") },
        key: { use: path.join(caDir, "leaf.key") },
        subject: isIP(host) === 0 ? host : "egress",
        altName: isIP(host) === 0 ? `DNS:${host}` : `IP:${host}`,
        days: 30,
      });
      return { key, cert };
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  }
}
