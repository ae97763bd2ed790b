// A test host for a gateway that must not be loopback-only: a veth pair into a network namespace this file
// creates, whose host end carries a unique 10.213.x.1/30 address the gateway binds to, plus a self-signed
// certificate for that address (so setup codes pin its fingerprint). Traffic goes only to these addresses and
// loopback. dispose() deletes the namespace (and with it the veth pair) and the key, also after a failure.
import { execFile } from "node:child_process";
import { randomInt } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { selfSigned } from "../support/tls.js";

const run = promisify(execFile);

export class TestHost {
  private constructor(
    readonly namespace: string,
    readonly address: string,
    readonly certPath: string,
    readonly keyPath: string,
    readonly certPem: string,
    /** SHA-256 of the certificate, lowercase hex without colons (as setup codes carry it). */
    readonly fingerprint: string,
    private readonly dir: string,
  ) {}

  static async create(): Promise<TestHost> {
    const id = `${process.pid.toString(36)}${randomInt(1296).toString(36)}`;
    const namespace = `ocvsb-${id}`;
    const address = `10.213.${randomInt(1, 250)}.${1 + 4 * randomInt(0, 63)}`;
    const dir = await mkdtemp(path.join(tmpdir(), "ocvsb-host-"));
    try {
      await run("ip", ["netns", "add", namespace]);
      await run("ip", ["link", "add", `oh${id}`, "type", "veth", "peer", "name", `on${id}`, "netns", namespace]);
      await run("ip", ["addr", "add", `${address}/30`, "dev", `oh${id}`]);
      await run("ip", ["link", "set", `oh${id}`, "up"]);
      const tls = selfSigned(dir, "gateway", [`IP:${address}`, "IP:127.0.0.1", "DNS:localhost"]);
      const { certPath, keyPath, fingerprint } = tls;
      return new TestHost(namespace, address, certPath, keyPath, tls.cert.toString("utf8"), fingerprint, dir);
    } catch (error) {
      await run("ip", ["netns", "del", namespace]).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
      throw error;
    }
  }

  /** The gateway config that binds it to this host with this certificate (core then accepts a node-enrolling provider). */
  gatewayConfig(): Record<string, unknown> {
    return {
      bind: "custom",
      customBindHost: this.address,
      tls: { enabled: true, autoGenerate: false, certPath: this.certPath, keyPath: this.keyPath },
      nodes: { pairing: { sshVerify: false, autoApproveLocal: false } },
    };
  }

  async dispose(): Promise<void> {
    await run("ip", ["netns", "del", this.namespace]).catch(() => undefined);
    await rm(this.dir, { recursive: true, force: true });
  }
}
