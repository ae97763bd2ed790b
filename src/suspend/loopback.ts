// The plugin's own authenticated requests to its gateway, over loopback: how the worker cap, running inside a
// provision that core started (no request scope, so no dispatchGatewayMethod), reaches the authenticated
// routes that reclaim a worker through the gateway. It presents the gateway's own credential (from the
// gateway config, as core's local probes do), only to 127.0.0.1, and with TLS enabled only to the certificate
// the gateway serves (its SHA-256 pinned, as core's local probe pins it). The credential is never logged and
// never part of an error.
import { X509Certificate } from "node:crypto";
import { readFile } from "node:fs/promises";
import { Agent, request } from "undici";

export interface LoopbackTarget {
  port: number;
  /** Bearer credential (gateway token or password). */
  credential: string;
  /** The gateway's TLS certificate (PEM), when it serves TLS. */
  certPem?: string;
}

/** A loopback call to our own route failed; the message names the route and status, never the credential. */
export class LoopbackError extends Error {
  override readonly name = "LoopbackError";
}

const MAX_ANSWER_BYTES = 1 << 20;

function pinnedAgent(certPem: string): Agent {
  const pinned = new X509Certificate(certPem).fingerprint256;
  return new Agent({
    connect: {
      ca: certPem,
      allowPartialTrustChain: true,
      checkServerIdentity: (_host, cert) =>
        cert.fingerprint256 === pinned ? undefined : new LoopbackError("the gateway presented another certificate"),
    },
  });
}

export class GatewayLoopback {
  #agent: { pem: string; agent: Agent } | undefined;

  constructor(private readonly target: () => Promise<LoopbackTarget>) {}

  async call<T>(method: "GET" | "POST", path: string, body: unknown, timeoutMs: number): Promise<T> {
    const target = await this.target();
    const scheme = target.certPem ? "https" : "http";
    let dispatcher: Agent | undefined;
    if (target.certPem) {
      if (this.#agent?.pem !== target.certPem) {
        await this.#agent?.agent.close();
        this.#agent = { pem: target.certPem, agent: pinnedAgent(target.certPem) };
      }
      dispatcher = this.#agent.agent;
    }
    let status: number;
    let text: string;
    try {
      const response = await request(`${scheme}://127.0.0.1:${target.port}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${target.credential}`,
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        ...(dispatcher ? { dispatcher } : {}),
      });
      status = response.statusCode;
      text = (await response.body.text()).slice(0, MAX_ANSWER_BYTES);
    } catch (error) {
      throw new LoopbackError(`${method} ${path}: gateway unreachable on loopback (${(error as Error).name})`);
    }
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new LoopbackError(`${method} ${path}: answered ${status} with no JSON`);
    }
    if (status < 200 || status >= 300) {
      const message = (parsed as { error?: { message?: unknown } })?.error?.message;
      throw new LoopbackError(
        `${method} ${path}: answered ${status}${typeof message === "string" ? `: ${message.slice(0, 300)}` : ""}`,
      );
    }
    return parsed as T;
  }

  async close(): Promise<void> {
    await this.#agent?.agent.close();
    this.#agent = undefined;
  }
}

/** Reads the certificate file a TLS gateway serves (public bytes only). */
export async function readCertificate(path: string): Promise<string> {
  return readFile(path, "utf8");
}
