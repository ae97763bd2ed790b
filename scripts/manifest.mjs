#!/usr/bin/env node
// Writes openclaw.plugin.json from the built plugin-config schema (run after tsup, by `npm run build`).
import { writeFileSync } from "node:fs";
import { pluginConfigJsonSchema } from "../dist/config.js";

const manifest = {
  id: "vercel-sandbox",
  name: "Vercel Sandbox",
  description: "Runs OpenClaw cloud workers on Vercel Sandbox (worker provider `vercel-sandbox`).",
  // Startup: the sleep/wake routes and the resident timer must exist before the first request (onConfigPaths
  // activates only bundled plugins in 2026.9.2). Registration without a `suspend` block stays inert.
  activation: { onStartup: true },
  // gatewayMethodDispatch: the /vercel-sandbox/v1 routes dispatch gateway.suspend.* inside the authenticated request.
  contracts: { workerProviders: ["vercel-sandbox"], gatewayMethodDispatch: ["authenticated-request"] },
  // Root help and routing read this instead of importing the plugin (src/cli/index.ts has the same text).
  cliCommands: [
    {
      name: "vercel-sandbox",
      description: "Inspect and tidy Vercel Sandbox workers: status, images, gc, doctor",
      hasSubcommands: true,
    },
  ],
  configSchema: pluginConfigJsonSchema(),
};
writeFileSync(new URL("../openclaw.plugin.json", import.meta.url), `${JSON.stringify(manifest, null, 2)}\n`);
