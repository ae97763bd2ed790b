// VM1's gateway config in each mode of the main job: worker-turn keeps OpenClaw's agent on the scripted model;
// Codex mode makes Codex own the turns against the same scripted model and lets the gateway launch its exec-server.
import { describe, expect, it } from "vitest";
import { CODEX_MODEL, EXEC_SERVER_COMMAND } from "../../src/main-job/codex-config.js";
import { type AgentMode, DEMO_TIMERS, gatewayVersionFor, jobConfigPatch } from "../../src/main-job/topology.js";

const BASE_URL = "http://10.0.0.7:4000/v1";

function patchFor(mode?: AgentMode) {
  return jobConfigPatch({
    port: 18789,
    publicOrigin: "https://vm1-18789.vercel.run",
    modelBaseUrl: BASE_URL,
    teamId: "team_x",
    projectId: "prj_x",
    notifyUrl: "http://10.0.0.6:1/notify",
    timers: DEMO_TIMERS,
    logFile: "/tmp/openclaw.log",
    ...(mode ? { mode } : {}),
  }) as unknown as {
    gateway?: { nodes?: { commands?: { allow?: string[] } } };
    agents: { defaults: { model: unknown; heartbeat: unknown } };
    models: { providers: Record<string, { agentRuntime?: unknown; baseUrl?: string }> };
    plugins: { entries: Record<string, { enabled?: boolean; config?: { appServer?: { args?: string[] } } }> };
    cloudWorkers: { profiles: { vsb: { readyWorkers?: number } } };
  };
}

describe("jobConfigPatch", () => {
  it("worker-turn (the default): the scripted chat model, no Codex, on the pinned gateway", () => {
    const patch = patchFor();
    expect(patch.agents.defaults.model).toEqual({ primary: "scripted/script" });
    expect(patch.gateway).toBeUndefined();
    expect(patch.plugins.entries.codex).toBeUndefined();
    expect(patch.models.providers.openai).toBeUndefined();
    // 2026.9.2 has no ready workers: the key would not validate there.
    expect(patch.cloudWorkers.profiles.vsb).not.toHaveProperty("readyWorkers");
    expect(gatewayVersionFor("worker-turn")).toBe("2026.9.2");
  });

  it("codex: Codex owns the turns, its app-server's model requests go to the scripted model, the exec-server is allowed", () => {
    const patch = patchFor("codex");
    expect(patch.agents.defaults.model).toBe(CODEX_MODEL);
    expect(patch.models.providers.openai?.agentRuntime).toEqual({ id: "codex" });
    expect(patch.gateway?.nodes?.commands?.allow).toEqual([EXEC_SERVER_COMMAND]);
    const codex = patch.plugins.entries.codex;
    expect(codex?.enabled).toBe(true);
    const args = codex?.config?.appServer?.args ?? [];
    expect(args.slice(-3)).toEqual(["app-server", "--listen", "stdio://"]);
    expect(args.join(" ")).toContain(`base_url="${BASE_URL}"`);
    // What the worker-turn patch also sets stays: our plugin's idle clock, the gateway's own jobs off.
    expect(patch.plugins.entries["vercel-sandbox"]).toBeDefined();
    expect(patch.agents.defaults.heartbeat).toEqual({ every: "0m" });
    expect(patch.models.providers.scripted?.baseUrl).toBe(BASE_URL);
    expect(JSON.stringify(patch)).not.toMatch(/apiKey/);
    expect(patch.cloudWorkers.profiles.vsb.readyWorkers).toBe(0);
    expect(gatewayVersionFor("codex")).toBe("2026.9.4");
  });
});
