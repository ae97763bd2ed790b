// The pure doctor checks: Node against OpenClaw 2026.9.2's engines, profile settings as the provider parses
// them (with the config path to fix), egress consequences from the provider's own policy, the agent heartbeat
// against sleep, and the verdict.
import { describe, expect, it } from "vitest";
import { checkEgress, checkHeartbeat, checkNode, checkProfiles, worst } from "../../src/cli/checks.js";
import { vercelProfiles } from "../../src/cli/profiles.js";
import { parseSettings } from "../../src/settings/profile.js";

describe("checkNode", () => {
  it.each(["v22.22.3", "v24.15.0", "v24.22.3", "v25.9.0", "v26.1.0"])("%s passes", (version) => {
    expect(checkNode(version).status).toBe("ok");
  });
  it.each(["v20.20.2", "v22.22.2", "v23.11.0", "v24.14.9", "v25.8.0"])("%s fails with an install remedy", (version) => {
    const check = checkNode(version);
    expect(check.status).toBe("fail");
    expect(check.message).toContain(">=22.22.3 <23, >=24.15.0 <25 or >=25.9.0");
    expect(check.remedy).toMatch(/Install Node 24/);
  });
});

describe("vercelProfiles and checkProfiles", () => {
  const config = {
    cloudWorkers: {
      profiles: {
        zeta: { provider: "vercel-sandbox", settings: { vcpus: 3 } },
        alpha: { provider: "vercel-sandbox", settings: { scope: "own-scope" } },
        mid: { provider: "vercel-sandbox" },
        other: { provider: "crabbox", settings: { provider: "aws" } },
      },
    },
  };

  it("keeps this provider's profiles, sorted, each with the scope its tags use", () => {
    const profiles = vercelProfiles(config, "gw-12345678");
    expect(profiles.map((p) => [p.id, p.ok && p.scope])).toEqual([
      ["alpha", "own-scope"],
      ["mid", "gw-12345678"],
      ["zeta", false],
    ]);
  });

  it("reports a bad setting by key with the config path to fix, and valid ones with their shape", () => {
    const checks = checkProfiles(vercelProfiles(config, "gw-12345678"));
    expect(checks.map((c) => [c.subject, c.status])).toEqual([
      ["alpha", "ok"],
      ["mid", "ok"],
      ["zeta", "fail"],
    ]);
    expect(checks[2]?.message).toContain("`vcpus`");
    expect(checks[2]?.remedy).toBe(
      "Fix cloudWorkers.profiles.zeta.settings.vcpus in the OpenClaw config, then restart the gateway",
    );
    expect(checks[1]?.message).toBe("valid (vercel backend, node24, 2 vCPU, scope gw-12345678)");
  });

  it("fails when no profile uses the provider, saying how to add one", () => {
    const [check] = checkProfiles(vercelProfiles({}, "gw-1"));
    expect(check?.status).toBe("fail");
    expect(check?.remedy).toMatch(/provider: "vercel-sandbox"/);
  });
});

describe("checkEgress", () => {
  it("spells out the stages of a restricted worker's egress", () => {
    const check = checkEgress("vsb", parseSettings({}), "gw.example.com");
    expect(check.status).toBe("ok");
    expect(check.message).toBe(
      "deny-by-default: bootstrap may reach registry.npmjs.org, gw.example.com; once enrolled only gw.example.com " +
        "(agents cannot install packages or clone repositories from the worker)",
    );
  });

  it("includes the profile's additions and an IP gateway as a /32", () => {
    const settings = parseSettings({ networkPolicy: { allow: ["github.com"], allowCidrs: ["10.0.0.0/8"] } });
    expect(checkEgress("vsb", settings, "203.0.113.7").message).toBe(
      "deny-by-default: bootstrap may reach registry.npmjs.org, github.com, 203.0.113.7/32, 10.0.0.0/8; " +
        "once enrolled only github.com, 203.0.113.7/32, 10.0.0.0/8",
    );
  });

  it("warns on allow-all with the setting to change", () => {
    const check = checkEgress("vsb", parseSettings({ networkPolicy: "allow-all" }), undefined);
    expect(check.status).toBe("warn");
    expect(check.remedy).toContain("cloudWorkers.profiles.vsb.settings.networkPolicy");
  });
});

describe("checkHeartbeat", () => {
  const sleeping = (suspend: Record<string, unknown>, rest: Record<string, unknown> = {}) => ({
    ...rest,
    plugins: {
      entries: { "vercel-sandbox": { config: { suspend: { notifyUrl: "https://host/notify", ...suspend } } } },
    },
  });

  it("skips when sleep is not configured", () => {
    expect(checkHeartbeat({ agents: { defaults: { heartbeat: { every: "5m" } } } }).status).toBe("skip");
  });

  it("warns that OpenClaw's default heartbeat wakes VM1 every 30m under scheduled wake, with the setting to change", () => {
    const check = checkHeartbeat(sleeping({ wakeLead: "45s" }));
    expect(check.status).toBe("warn");
    expect(check.message).toBe(
      "the agent heartbeat runs every 30m (OpenClaw's default): scheduled wake (suspend.wakeLead) wakes VM1 for every beat, so VM1 never sleeps longer",
    );
    expect(check.remedy).toContain("openclaw config set agents.defaults.heartbeat.every 0m");
  });

  it("warns that a sleeping VM1 skips the beats without scheduled wake", () => {
    const check = checkHeartbeat(sleeping({}, { agents: { defaults: { heartbeat: { every: "2h" } } } }));
    expect(check.status).toBe("warn");
    expect(check.message).toBe(
      "the agent heartbeat runs every 2h: a sleeping VM1 skips it (suspend.wakeLead is unset, so no cron run wakes VM1)",
    );
  });

  it("passes when every beating agent is off, and counts only agents with a heartbeat block once one has it", () => {
    const off = { agents: { defaults: { heartbeat: { every: "0m" } } } };
    expect(checkHeartbeat(sleeping({ wakeLead: "45s" }, off)).status).toBe("ok");
    // An agent's block turns heartbeats on for that agent alone, at the defaults' cadence unless it sets its own.
    const ops = { agents: { entries: { ops: { heartbeat: {} }, main: {} } } };
    expect(checkHeartbeat(sleeping({ wakeLead: "45s" }, ops)).message).toMatch(
      /^the agent heartbeat runs every 30m \(agent ops\): /,
    );
    const opsOff = {
      agents: { defaults: { heartbeat: { every: "1h" } }, entries: { ops: { heartbeat: { every: "0m" } } } },
    };
    expect(checkHeartbeat(sleeping({ wakeLead: "45s" }, opsOff)).status).toBe("ok");
  });
});

describe("worst", () => {
  it("orders fail over warn over ok over skip", () => {
    const c = (status: "ok" | "warn" | "fail" | "skip") => ({ id: "x", status, message: "" });
    expect(worst([c("ok"), c("fail"), c("warn")])).toBe("fail");
    expect(worst([c("ok"), c("warn"), c("skip")])).toBe("warn");
    expect(worst([c("skip"), c("ok")])).toBe("ok");
    expect(worst([c("skip")])).toBe("skip");
  });
});
