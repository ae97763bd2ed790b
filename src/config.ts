// Plugin-level configuration (`plugins.entries.vercel-sandbox.config`). The manifest's `configSchema` is
// generated from this TypeBox schema (`npm run build` writes it; a test keeps them equal). Profile settings
// live in src/provider/settings.ts: core hands those to the provider, not to the plugin.
import { type Static, Type } from "@sinclair/typebox";

export const PluginConfigSchema = Type.Object(
  {
    scope: Type.Optional(
      Type.String({
        pattern: "^[a-z0-9][a-z0-9-]{0,31}$",
        description:
          "Gateway scope mixed into sandbox names and tags; defaults to a hash of the gateway state directory",
      }),
    ),
  },
  { additionalProperties: false },
);
export type PluginConfig = Static<typeof PluginConfigSchema>;

/** The schema as plain JSON (TypeBox adds symbol keys that JSON drops). */
export function pluginConfigJsonSchema(): unknown {
  return JSON.parse(JSON.stringify(PluginConfigSchema));
}
