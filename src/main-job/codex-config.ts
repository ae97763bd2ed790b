// The pure half of the main job's Codex mode (codex.ts is the half that acts on VM1): the gateway release, the
// Codex plugin, and the config that makes Codex own the agent's turns against the scripted model.
/**
 * The newest gateway whose matching @openclaw/codex can bootstrap a cloud node. Not 2026.9.5: its core packs a
 * registry-installed plugin for the node skipping every dot-entry, and @openclaw/codex@2026.9.5 keeps its chunks in
 * `dist/.setup/`, so core refuses the node distribution ("incomplete built import closure"). 2026.9.4 ships flat
 * chunks.
 */
export const CODEX_GATEWAY_VERSION = "2026.9.4";
/** Core carries a plugin to the node only when it is an official registry install (never a path or npm-pack one). */
export const CODEX_PLUGIN_SPEC = `@openclaw/codex@${CODEX_GATEWAY_VERSION}`;
/** The node command Codex's remote-exec placement needs (the gateway must allow it explicitly). */
export const EXEC_SERVER_COMMAND = "codex.exec-server.stdio.v1";
/** The agent model: an OpenAI ref whose runtime is pinned to Codex; Codex itself sends it to the scripted server. */
export const CODEX_MODEL = "openai/gpt-6-astra";
/** The model provider id the Codex overrides define. */
export const SCRIPTED_PROVIDER = "scripted";
/**
 * What OpenClaw's OpenAI auth profile holds on VM1 (Codex remote-exec on a cloud placement refuses to run without
 * one): not a key. The model's real key is added by VM1's firewall on the way out, as for the worker-turn model.
 */
export const FIREWALL_KEY_PLACEHOLDER = "sk-none-the-firewall-adds-the-key";

/**
 * Codex `-c` overrides that send every model request to `baseUrl` (a scripted Responses server) with no key and no
 * login, and keep Codex off the network otherwise (no analytics). `openai_base_url` also points Codex's built-in
 * `openai` provider there, for a caller (OpenClaw's harness) that names it.
 */
export function scriptedCodexArgs(baseUrl: string): string[] {
  const provider = `{name="${SCRIPTED_PROVIDER}",base_url="${baseUrl}",wire_api="responses"}`;
  return [
    "-c",
    `model_provider="${SCRIPTED_PROVIDER}"`,
    "-c",
    `model_providers.${SCRIPTED_PROVIDER}=${provider}`,
    "-c",
    `openai_base_url="${baseUrl}"`,
    "-c",
    "analytics.enabled=false",
  ];
}

/** Gateway config that makes Codex own the agent's turns against `baseUrl`, and lets it launch the exec-server. */
export function codexConfig(baseUrl: string) {
  return {
    gateway: { nodes: { commands: { allow: [EXEC_SERVER_COMMAND] } } },
    plugins: {
      entries: {
        codex: {
          enabled: true,
          config: { appServer: { args: [...scriptedCodexArgs(baseUrl), "app-server", "--listen", "stdio://"] } },
        },
      },
    },
    models: { providers: { openai: { agentRuntime: { id: "codex" } } } },
    agents: { defaults: { model: CODEX_MODEL } },
  };
}
