// The door of the CLI room: registers `openclaw vercel-sandbox …` with the gateway's CLI. OpenClaw runs plugin
// commands in the CLI process, not in the gateway: it first registers plugins in "cli-metadata" mode (no
// runtime) to find who owns the command, then registers the owner fully and calls its registrar with the
// commander program, the config and a logger. The commands themselves load only when invoked.
import type { OpenClawPluginApi } from "openclaw/plugin-sdk/plugin-entry";

export const CLI_COMMAND = "vercel-sandbox";
export const CLI_DESCRIPTION = "Inspect and tidy Vercel Sandbox workers: status, images, gc, doctor";

export interface CliRegistration {
  /** The plugin's scope when its config names none (a hash of the state dir, as the entry computes it). */
  defaultScope(stateDir: string): string;
}

/** Safe in every registration mode: it touches neither `api.runtime` nor anything outside the API object. */
export function registerVercelSandboxCli(api: OpenClawPluginApi, registration: CliRegistration): void {
  const pluginScope = (api.pluginConfig as { scope?: unknown } | undefined)?.scope;
  api.registerCli(
    async ({ program, config }) => {
      const { addCommands } = await import("./commands.js");
      addCommands(program, {
        config,
        scopeOf: (stateDir) => (typeof pluginScope === "string" ? pluginScope : registration.defaultScope(stateDir)),
      });
    },
    { descriptors: [{ name: CLI_COMMAND, description: CLI_DESCRIPTION, hasSubcommands: true }] },
  );
}
