// Plugin-level configuration (`plugins.entries.vercel-sandbox.config`). The manifest's `configSchema` is
// generated from this TypeBox schema (`npm run build` writes it; a test keeps them equal). Profile settings
// live in src/settings/profile.ts: core hands those to the provider, not to the plugin.
import { type Static, Type } from "@sinclair/typebox";

const Duration = (description: string) =>
  Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: "^[0-9]+(ms|s|m|h|d)$" })], { description });

/** Sleep and wake (src/suspend): present → the idle clock, the resident timer and the /vercel-sandbox/v1 routes. */
export const SuspendConfigSchema = Type.Object(
  {
    idleAfter: Type.Optional(Duration("Idle interval before the host is asked to sleep this gateway; default 45m")),
    pollInterval: Type.Optional(Duration("How often the resident timer polls the idle clock; default 30s")),
    renotifyAfter: Type.Optional(Duration("Repeat an unanswered notification after this long; default 1m")),
    sessionLimit: Type.Optional(Duration("The platform's session limit, counted from gateway start (Hobby: 45m)")),
    deadlineAtMs: Type.Optional(Type.Integer({ minimum: 0, description: "Absolute session deadline, epoch ms" })),
    deadlineMargin: Type.Optional(Duration("Ask for graceful shutdown this long before the deadline; default 5m")),
    notifyUrl: Type.Optional(
      Type.String({ pattern: "^https?://", description: "Host URL notified (signed POST) when sleep is due" }),
    ),
    secretEnv: Type.Optional(
      Type.String({
        pattern: "^[A-Za-z_][A-Za-z0-9_]{0,127}$",
        description: "Name of the gateway env var holding the HMAC-SHA256 notification secret; never the secret",
      }),
    ),
    wakeLead: Type.Optional(
      Duration("Scheduled wake: project cron run times to the host, which wakes VM1 this long before a job is due"),
    ),
  },
  { additionalProperties: false },
);

export const PluginConfigSchema = Type.Object(
  {
    scope: Type.Optional(
      Type.String({
        pattern: "^[a-z0-9][a-z0-9-]{0,31}$",
        description:
          "Gateway scope mixed into sandbox names and tags; defaults to a hash of the gateway state directory",
      }),
    ),
    suspend: Type.Optional(SuspendConfigSchema),
  },
  { additionalProperties: false },
);
export type PluginConfig = Static<typeof PluginConfigSchema>;

/** The schema as plain JSON (TypeBox adds symbol keys that JSON drops). */
export function pluginConfigJsonSchema(): unknown {
  return JSON.parse(JSON.stringify(PluginConfigSchema));
}
