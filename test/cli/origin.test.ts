// Where a worker would enroll, resolved from the config as OpenClaw 2026.9.2 resolves it, and the doctor
// verdict for each backend: a Vercel sandbox needs a public origin, the embedded emulator any non-loopback one.
import { describe, expect, it } from "vitest";
import { checkOrigin } from "../../src/cli/checks.js";
import { enrollmentOrigin, reachOf } from "../../src/cli/origin.js";

const vercel = new Set(["vercel"] as const);
const embedded = new Set(["embedded"] as const);

describe("reachOf", () => {
  it.each([
    ["127.0.0.1", "loopback"],
    ["localhost", "loopback"],
    ["[::1]", "loopback"],
    ["0.0.0.0", "loopback"],
    ["169.254.1.2", "loopback"],
    ["10.1.2.3", "private"],
    ["172.20.0.1", "private"],
    ["192.168.1.10", "private"],
    ["100.101.102.103", "private"],
    ["[fd00::1]", "private"],
    ["box.tailnet-name.ts.net", "private"],
    ["203.0.113.7", "public"],
    ["gw.example.com", "public"],
  ])("%s is %s", (host, reach) => {
    expect(reachOf(host)).toBe(reach);
  });
});

describe("enrollmentOrigin", () => {
  it("a default gateway is loopback-only", () => {
    expect(enrollmentOrigin({ gateway: { mode: "local" } })).toEqual({
      source: "gateway.bind=loopback",
      reach: "loopback",
    });
  });

  it("the device-pair publicUrl wins over gateway.publicOrigin, which wins over the bind", () => {
    const gateway = { bind: "loopback", publicOrigin: "https://gw.example.com" };
    expect(enrollmentOrigin({ gateway })).toEqual({
      url: "https://gw.example.com",
      source: "gateway.publicOrigin",
      reach: "public",
    });
    const plugins = { entries: { "device-pair": { config: { publicUrl: "wss://pair.example.org" } } } };
    expect(enrollmentOrigin({ gateway, plugins })).toMatchObject({
      url: "wss://pair.example.org",
      source: "plugins.entries.device-pair.config.publicUrl",
    });
  });

  it("a publicOrigin with a path is a problem (core ignores it)", () => {
    const origin = enrollmentOrigin({ gateway: { publicOrigin: "https://gw.example.com/openclaw" } });
    expect(origin.problem).toMatch(/not a bare origin/);
  });

  it("lan, tailnet and Tailscale Serve are private; Funnel is public; custom follows its host", () => {
    expect(enrollmentOrigin({ gateway: { bind: "lan" } }).reach).toBe("private");
    expect(enrollmentOrigin({ gateway: { bind: "tailnet" } }).reach).toBe("private");
    expect(enrollmentOrigin({ gateway: { tailscale: { mode: "serve" } } }).reach).toBe("private");
    expect(enrollmentOrigin({ gateway: { tailscale: { mode: "funnel" } } }).reach).toBe("public");
    expect(enrollmentOrigin({ gateway: { bind: "custom", customBindHost: "198.51.100.4" } }).reach).toBe("public");
    expect(enrollmentOrigin({ gateway: { bind: "custom" } }).problem).toMatch(/customBindHost/);
  });
});

describe("checkOrigin", () => {
  it("fails a loopback gateway for Vercel with the public-ingress remedy naming gateway.publicOrigin", () => {
    const check = checkOrigin(enrollmentOrigin({}), vercel);
    expect(check.status).toBe("fail");
    expect(check.message).toMatch(/only on loopback/);
    expect(check.remedy).toMatch(/gateway\.publicOrigin/);
    expect(check.remedy).toMatch(/gateway\.trustedProxies/);
  });

  it("fails a loopback gateway for embedded profiles with the bind remedy", () => {
    const check = checkOrigin(enrollmentOrigin({}), embedded);
    expect(check.status).toBe("fail");
    expect(check.remedy).toMatch(/gateway\.bind=lan/);
  });

  it("a LAN bind is enough for the embedded emulator but not for Vercel", () => {
    const origin = enrollmentOrigin({ gateway: { bind: "lan" } });
    expect(checkOrigin(origin, embedded).status).toBe("ok");
    const check = checkOrigin(origin, vercel);
    expect(check.status).toBe("fail");
    expect(check.message).toMatch(/private address a Vercel sandbox cannot reach/);
  });

  it("passes a public https origin, warns on plain http, and skips without profiles", () => {
    expect(
      checkOrigin(enrollmentOrigin({ gateway: { publicOrigin: "https://gw.example.com" } }), vercel),
    ).toMatchObject({
      status: "ok",
      message: "workers enroll through https://gw.example.com (from gateway.publicOrigin)",
    });
    const http = checkOrigin(enrollmentOrigin({ gateway: { publicOrigin: "http://gw.example.com" } }), vercel);
    expect(http.status).toBe("warn");
    expect(http.remedy).toMatch(/HTTPS/);
    expect(checkOrigin(enrollmentOrigin({}), new Set()).status).toBe("skip");
  });

  it("a publicOrigin pointing at loopback fails even though it is set", () => {
    const check = checkOrigin(enrollmentOrigin({ gateway: { publicOrigin: "https://127.0.0.1:8443" } }), vercel);
    expect(check.status).toBe("fail");
  });
});
