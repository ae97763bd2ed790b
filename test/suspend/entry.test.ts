// The entry's suspend wiring against a stand-in for the gateway's plugin API (the host's object, not ours):
// nothing without a `suspend` block; with one, the three routes (gateway auth, trusted-operator surface), the
// resident service, and hooks that feed the clock: a failed turn fences, and while fenced an inbound message
// is answered with a refusal instead of starting a turn.
import type { WorkerProvider } from "openclaw/plugin-sdk/plugin-entry";
import { describe, expect, it } from "vitest";
import entry from "../../src/index.js";
import { ROUTES } from "../../src/protocol/protocol.js";
import { FENCED_REPLY } from "../../src/suspend/plugin.js";

type Handler = (event: Record<string, unknown>, ctx?: unknown) => unknown;

function fakeApi(pluginConfig: Record<string, unknown>) {
  const hooks = new Map<string, Handler[]>();
  const routes: Array<{ path: string; auth: string; match?: string; gatewayRuntimeScopeSurface?: string }> = [];
  const services: Array<{ id: string; start: () => unknown; stop?: () => unknown }> = [];
  const providers: WorkerProvider[] = [];
  const methods = new Map<string, (request: { respond: (ok: boolean, payload: unknown) => void }) => unknown>();
  let agentListener: ((event: Record<string, unknown>) => void) | undefined;
  const api = {
    id: "vercel-sandbox",
    pluginConfig,
    registrationMode: "full",
    logger: { info: () => undefined, warn: () => undefined, error: () => undefined },
    runtime: {
      state: { resolveStateDir: () => "/tmp/openclaw-suspend-entry-test-state" },
      events: {
        onAgentEvent: (listener: typeof agentListener) => {
          agentListener = listener;
          return () => {
            agentListener = undefined;
          };
        },
      },
    },
    registerWorkerProvider: (provider: WorkerProvider) => providers.push(provider),
    registerService: (service: (typeof services)[number]) => services.push(service),
    registerHttpRoute: (route: (typeof routes)[number]) => routes.push(route),
    registerCli: () => undefined,
    registerGatewayMethod: (name: string, handler: Parameters<typeof methods.set>[1]) => methods.set(name, handler),
    on: (name: string, handler: Handler) => hooks.set(name, [...(hooks.get(name) ?? []), handler]),
  };
  const fire = (name: string, event: Record<string, unknown> = {}) => hooks.get(name)?.map((h) => h(event, {}));
  const call = (name: string) => {
    let answer: unknown;
    methods.get(name)?.({ respond: (_ok, payload) => (answer = payload) });
    return answer as Record<string, unknown> | undefined;
  };
  return {
    api,
    providers,
    hooks,
    routes,
    services,
    fire,
    call,
    agentEvent: (event: Record<string, unknown>) => agentListener?.(event),
  };
}

describe("plugin entry: suspend wiring", () => {
  it("a worker provision in flight is activity the idle clock counts until it settles", async () => {
    const fake = fakeApi({ suspend: { idleAfter: "10m" } });
    entry.register(fake.api as never);
    const provider = fake.providers[0] as WorkerProvider;
    const idle = () => (fake.call("vercelSandbox.status") as { idle: Record<string, unknown> }).idle;
    const profile = { tokenEnv: "VSB_ENTRY_SPEC_UNSET_TOKEN", teamId: "team_a", projectId: "prj_a" };
    const attempt = provider.provision(profile, "provision:entry-activity-spec");
    expect(idle()).toMatchObject({ activeProvisions: 1 });
    await expect(attempt).rejects.toThrow(/VSB_ENTRY_SPEC_UNSET_TOKEN/);
    expect(idle()).toMatchObject({ activeProvisions: 0 });
  });

  it("the read-only status method shows the idle clock only when sleep and wake is configured", () => {
    const without = fakeApi({});
    entry.register(without.api as never);
    expect(without.call("vercelSandbox.status")).toMatchObject({ idle: null });
    const withSuspend = fakeApi({ suspend: { idleAfter: "10m" } });
    entry.register(withSuspend.api as never);
    withSuspend.fire("message_received");
    const idle = (withSuspend.call("vercelSandbox.status") as { idle: Record<string, unknown> }).idle;
    expect(idle).toMatchObject({ idleAfterMs: 600_000, activeTurns: 0 });
  });

  it("without a suspend block registers no routes, hooks or resident", () => {
    const fake = fakeApi({});
    entry.register(fake.api as never);
    expect(fake.routes).toEqual([]);
    expect(fake.hooks.size).toBe(0);
    expect(fake.services.map((s) => s.id)).toEqual(["vercel-sandbox-emulator", "vercel-sandbox-keepalive"]);
  });

  it("with one registers the three routes with gateway auth on the trusted-operator surface, and the resident", () => {
    const fake = fakeApi({ suspend: {} });
    entry.register(fake.api as never);
    expect(
      fake.routes.map(({ path, auth, match, gatewayRuntimeScopeSurface }) => ({
        path,
        auth,
        match,
        gatewayRuntimeScopeSurface,
      })),
    ).toEqual(
      Object.values(ROUTES).map((path) => ({
        path,
        auth: "gateway",
        match: "exact",
        gatewayRuntimeScopeSurface: "trusted-operator",
      })),
    );
    expect(fake.services.map((s) => s.id)).toEqual([
      "vercel-sandbox-emulator",
      "vercel-sandbox-keepalive",
      "vercel-sandbox-resident",
    ]);
    expect([...fake.hooks.keys()].sort()).toEqual(
      ["after_tool_call", "before_dispatch", "message_received", "model_call_ended", "model_call_started"].sort(),
    );
  });

  it("a turn that ends in error fences: inbound messages are then refused; a turn that ends well does not", async () => {
    const fake = fakeApi({ suspend: {} });
    entry.register(fake.api as never);
    const resident = fake.services.find((s) => s.id === "vercel-sandbox-resident")!;
    await resident.start();
    try {
      fake.agentEvent({ runId: "r1", stream: "lifecycle", data: { phase: "start" } });
      fake.agentEvent({ runId: "r1", stream: "lifecycle", data: { phase: "end" } });
      expect(fake.fire("before_dispatch")).toEqual([undefined]);
      fake.agentEvent({ runId: "r2", stream: "lifecycle", data: { phase: "start" } });
      fake.agentEvent({ runId: "r2", stream: "lifecycle", data: { phase: "error" } });
      expect(fake.fire("before_dispatch")).toEqual([{ handled: true, text: FENCED_REPLY }]);
    } finally {
      await resident.stop?.();
    }
  });
});
