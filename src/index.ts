// The OpenClaw plugin entry (the `vercel-sandbox` worker provider is registered here; see src/provider).
export const PLUGIN_ID = "vercel-sandbox";
