#!/usr/bin/env node
// Writes openclaw.plugin.json from the built plugin-config schema (run after tsup, by `npm run build`).
import { writeFileSync } from "node:fs";
import { pluginConfigJsonSchema } from "../dist/config.js";

const manifest = {
  id: "vercel-sandbox",
  name: "Vercel Sandbox",
  description: "Runs OpenClaw cloud workers on Vercel Sandbox (worker provider `vercel-sandbox`).",
  activation: { onStartup: false },
  contracts: { workerProviders: ["vercel-sandbox"] },
  configSchema: pluginConfigJsonSchema(),
};
writeFileSync(new URL("../openclaw.plugin.json", import.meta.url), `${JSON.stringify(manifest, null, 2)}\n`);
