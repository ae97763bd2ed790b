// Profile settings (`cloudWorkers.profiles.<id>.settings`): the TypeBox schema, and the pure parse that turns
// a frozen settings object into normalized values or a named error. Nothing here reads the environment or
// talks to Vercel, so an invalid profile is rejected before any request.

import { isIPv4, isIPv6 } from "node:net";
import { isAbsolute } from "node:path";
import { type Static, type TSchema, Type } from "@sinclair/typebox";
import { Value, ValueErrorType } from "@sinclair/typebox/value";
import { durationMs } from "./duration.js";

const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const EnvName = Type.String({ pattern: ENV_NAME.source, description: "environment variable name" });
const Duration = Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: "^[0-9]+(ms|s|m|h|d)$" })], {
  description: 'milliseconds, or a duration such as "45m"',
});
// Dot-separated labels of letters, digits and inner hyphens (so no empty label, no leading or trailing hyphen).
const LABEL = "[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?";
const Domain = Type.String({
  pattern: `^(\\*\\.)?${LABEL}(\\.${LABEL})*$`,
  maxLength: 253,
  description: "domain name, `*.` allowed",
});
// The shape only; whether the address and prefix make a block is checked in `checkCidrs`.
const Cidr = Type.String({ pattern: "^[0-9a-fA-F:.]+/[0-9]{1,3}$", description: "CIDR block" });
/** Vercel team and project ids (`team_…`, `prj_…`) and team slugs. */
const VercelId = Type.String({
  pattern: "^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$",
  description: "a Vercel id such as team_… or prj_…",
});

/** A SecretRef as OpenClaw core requires for secret-looking settings keys. Only `env` and `file` resolve here. */
export const SecretRefSchema = Type.Object(
  {
    source: Type.Union([Type.Literal("env"), Type.Literal("file"), Type.Literal("exec")]),
    provider: Type.String({ minLength: 1 }),
    id: Type.String({ minLength: 1 }),
  },
  { additionalProperties: false },
);
export type SecretRef = Static<typeof SecretRefSchema>;

export const RUNTIMES = ["node22", "node24", "node26"] as const;
export const VCPU_CHOICES = [1, 2, 4, 8] as const;

export const ProfileSettingsSchema = Type.Object(
  {
    backend: Type.Optional(
      Type.Union([Type.Literal("vercel"), Type.Literal("embedded")], {
        description: '"vercel" or "embedded" (the local emulator, started inside the gateway)',
      }),
    ),
    apiUrl: Type.Optional(
      Type.String({ pattern: "^https?://", description: "Vercel API base URL (an emulator's URL for local runs)" }),
    ),
    auth: Type.Optional(
      Type.Union([Type.Literal("token"), Type.Literal("oidc")], { description: '"token" or "oidc"' }),
    ),
    tokenEnv: Type.Optional(EnvName),
    token: Type.Optional(SecretRefSchema),
    teamId: Type.Optional(VercelId),
    teamIdEnv: Type.Optional(EnvName),
    projectId: Type.Optional(VercelId),
    projectIdEnv: Type.Optional(EnvName),
    runtime: Type.Optional(
      Type.Union(
        RUNTIMES.map((r) => Type.Literal(r)),
        { description: `one of ${RUNTIMES.join(", ")}` },
      ),
    ),
    vcpus: Type.Optional(
      Type.Union(
        VCPU_CHOICES.map((n) => Type.Literal(n)),
        { description: `one of ${VCPU_CHOICES.join(", ")}` },
      ),
    ),
    timeout: Type.Optional(Duration),
    region: Type.Optional(Type.String({ pattern: "^[a-z]{3}[0-9]$" })),
    networkPolicy: Type.Optional(
      Type.Union(
        [
          Type.Literal("allow-all"),
          Type.Object(
            {
              allow: Type.Optional(Type.Array(Domain, { maxItems: 64, uniqueItems: true })),
              allowCidrs: Type.Optional(Type.Array(Cidr, { maxItems: 64, uniqueItems: true })),
            },
            { additionalProperties: false },
          ),
        ],
        { description: '"allow-all" or { allow?: domains, allowCidrs?: CIDRs }' },
      ),
    ),
    ports: Type.Optional(Type.Array(Type.Integer({ minimum: 1, maximum: 65535 }), { maxItems: 15, uniqueItems: true })),
    tags: Type.Optional(
      Type.Record(Type.String({ pattern: "^(?!openclaw-)[A-Za-z0-9_.-]{1,64}$" }), Type.String({ maxLength: 256 }), {
        maxProperties: 2,
        additionalProperties: false,
        description: "at most 2 tags; keys must not start with openclaw-",
      }),
    ),
    snapshots: Type.Optional(
      Type.Object(
        {
          expiration: Type.Optional(Duration),
          keepLast: Type.Optional(Type.Integer({ minimum: 1, maximum: 10 })),
        },
        { additionalProperties: false },
      ),
    ),
    scope: Type.Optional(Type.String({ pattern: "^[a-z0-9][a-z0-9-]{0,31}$" })),
    maxWorkers: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 1000,
        description:
          "most workers of this provider running at once on this gateway; at the cap the least recently active idle one is reclaimed first; default unbounded",
      }),
    ),
    capWait: Type.Optional(
      Type.Union([Type.Integer({ minimum: 0 }), Type.String({ pattern: "^[0-9]+(ms|s|m|h|d)$" })], {
        description:
          "with maxWorkers: how long a message in a conversation without a worker waits for a busy worker to become idle (then reclaimed for it) before it fails naming the cap; milliseconds or a duration; default 5m, at most 30m",
      }),
    ),
    warmImage: Type.Optional(
      Type.Boolean({ description: "prepare projects once and start later workers from a snapshot; default true" }),
    ),
    images: Type.Optional(
      Type.Object(
        {
          keep: Type.Optional(Type.Integer({ minimum: 1, maximum: 10, description: "images kept per key; default 2" })),
          unusedFor: Type.Optional(Duration),
          shareBy: Type.Optional(
            Type.Union([Type.Literal("project"), Type.Literal("commit")], {
              description:
                "which workers an image serves: project (default; a new commit refreshes on top of the project's image) or commit (only workers of the commit that built it, each commit's image built cold)",
            }),
          ),
        },
        { additionalProperties: false },
      ),
    ),
  },
  { additionalProperties: false },
);
export type ProfileSettingsInput = Static<typeof ProfileSettingsSchema>;

/** Settings after defaults, with durations in milliseconds. */
export interface ProfileSettings {
  /** `embedded` runs sandboxes on the local emulator inside the gateway process (no Vercel account). */
  backend: "vercel" | "embedded";
  apiUrl?: string;
  credentials: CredentialSource;
  runtime: (typeof RUNTIMES)[number];
  vcpus: number;
  timeoutMs: number;
  region?: string;
  networkPolicy: "allow-all" | { allow: string[]; allowCidrs: string[] };
  ports: number[];
  tags: Record<string, string>;
  snapshots: { expirationMs?: number; keepLast?: number };
  scope?: string;
  /** The worker cap (src/provider/cap); undefined: unbounded. */
  maxWorkers?: number;
  /** With a cap: how long a turn's message waits at a cap of busy workers for one to become idle. */
  capWaitMs: number;
  /** Warm images (src/preparation): on unless the profile says `warmImage: false`. */
  warmImage: boolean;
  /** Image retention: keep the newest `keep` per key, delete images unused for `unusedForMs`. */
  images: { keep: number; unusedForMs: number };
  /**
   * `images.shareBy`: `project` lets an image built at one commit (and refreshed on top for the next) serve
   * every worker of the project; `commit` serves an image only to workers of the very commit whose recipe built
   * it from a clean sandbox, for repositories not trusted to share what their recipe leaves behind.
   */
  imageSharing: ImageSharing;
}

export type ImageSharing = "project" | "commit";

export const DEFAULT_IMAGES_KEPT = 2;
/** How long a turn waits at a cap of busy workers by default (`capWait`), and at most. */
export const DEFAULT_CAP_WAIT_MS = 5 * 60_000;
export const MAX_CAP_WAIT_MS = 30 * 60_000;
export const DEFAULT_IMAGE_UNUSED_MS = 14 * 24 * 60 * 60_000;

export type CredentialSource =
  | { kind: "oidc" }
  | {
      kind: "token";
      token: { env: string } | { ref: SecretRef };
      teamId: { value: string } | { env: string };
      projectId: { value: string } | { env: string };
    };

export const DEFAULT_TIMEOUT_MS = 30 * 60_000;
const MIN_TIMEOUT_MS = 60_000;
const MAX_TIMEOUT_MS = 24 * 60 * 60_000;

/** Why a profile was rejected; `key` is the settings path at fault (for example `networkPolicy.allow`). */
export class SettingsError extends Error {
  override readonly name = "SettingsError";
  constructor(
    readonly key: string,
    readonly reason: string,
  ) {
    super(`vercel-sandbox profile setting \`${key}\` ${reason}`);
  }
}

function keyOf(instancePath: string): string {
  return instancePath.replace(/^\//, "").split("/").filter(Boolean).join(".") || "settings";
}

/**
 * Reports the first schema violation by key. Values are never echoed: a misplaced token must not leak. An
 * object that matches no member of a union (`networkPolicy`) is reported by what is wrong inside it, against
 * the union's object member, so the key named is the one to fix (`networkPolicy.allow.0`).
 */
function firstSchemaError(schema: TSchema, value: unknown, base = ""): SettingsError | undefined {
  for (const error of Value.Errors(schema, value)) {
    const path = base + error.path;
    const description = (error.schema as { description?: string }).description;
    if (error.type === ValueErrorType.Union && isRecord(error.value)) {
      const members = (error.schema as { anyOf?: TSchema[] }).anyOf ?? [];
      const objectMember = members.find((member) => (member as { type?: unknown }).type === "object");
      const inner = objectMember && firstSchemaError(objectMember, error.value, path);
      if (inner) return inner;
    }
    if (error.type === ValueErrorType.ObjectAdditionalProperties) {
      const reason = description ? `is not allowed: ${description}` : "is not a known setting; check its spelling";
      return new SettingsError(keyOf(path), reason);
    }
    const expected = description ? `expected ${description}` : error.message.toLowerCase();
    return new SettingsError(keyOf(path), `is invalid: ${expected}`);
  }
  return undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function toMs(key: string, value: number | string): number {
  const ms = durationMs(value);
  if (ms === undefined) throw new SettingsError(key, "is not a valid duration");
  return ms;
}

function credentialsOf(input: ProfileSettingsInput): CredentialSource {
  const tokenGiven = input.token !== undefined || input.tokenEnv !== undefined;
  const auth = input.auth ?? (tokenGiven ? "token" : "oidc");
  if (auth === "oidc") {
    for (const key of ["token", "tokenEnv", "teamId", "teamIdEnv", "projectId", "projectIdEnv"] as const) {
      if (input[key] !== undefined) throw new SettingsError(key, 'is only used with `auth: "token"`');
    }
    return { kind: "oidc" };
  }
  if (input.token && input.tokenEnv) throw new SettingsError("token", "and `tokenEnv` are exclusive; keep one");
  if (input.token && input.token.source === "exec") {
    throw new SettingsError("token.source", 'must be "env" or "file"; exec SecretRefs are not supported');
  }
  if (input.token?.source === "env" && !ENV_NAME.test(input.token.id)) {
    throw new SettingsError("token.id", "must be an environment variable name for an env SecretRef");
  }
  if (input.token?.source === "file" && !isAbsolute(input.token.id)) {
    throw new SettingsError("token.id", "must be an absolute path for a file SecretRef");
  }
  const pick = (value: string | undefined, env: string | undefined, key: string, defaultEnv: string) => {
    if (value !== undefined && env !== undefined) throw new SettingsError(key, `and \`${key}Env\` are exclusive`);
    return value !== undefined ? { value } : { env: env ?? defaultEnv };
  };
  return {
    kind: "token",
    token: input.token ? { ref: input.token } : { env: input.tokenEnv ?? "VERCEL_TOKEN" },
    teamId: pick(input.teamId, input.teamIdEnv, "teamId", "VERCEL_TEAM_ID"),
    projectId: pick(input.projectId, input.projectIdEnv, "projectId", "VERCEL_PROJECT_ID"),
  };
}

/** Validates and normalizes profile settings; throws `SettingsError` naming the key at fault. */
export function parseSettings(profile: unknown): ProfileSettings {
  const input = profile ?? {};
  if (typeof input !== "object" || Array.isArray(input)) {
    throw new SettingsError("settings", "must be an object");
  }
  const error = firstSchemaError(ProfileSettingsSchema, input);
  if (error) throw error;
  const settings = input as ProfileSettingsInput;
  if (settings.backend === "embedded") {
    for (const key of [
      "apiUrl",
      "auth",
      "token",
      "tokenEnv",
      "teamId",
      "teamIdEnv",
      "projectId",
      "projectIdEnv",
    ] as const) {
      if (settings[key] !== undefined)
        throw new SettingsError(key, 'is not used with `backend: "embedded"`; remove it');
    }
  }
  const timeoutMs = settings.timeout === undefined ? DEFAULT_TIMEOUT_MS : toMs("timeout", settings.timeout);
  if (timeoutMs < MIN_TIMEOUT_MS || timeoutMs > MAX_TIMEOUT_MS) {
    throw new SettingsError("timeout", "must be between 1 minute and 24 hours");
  }
  if (settings.apiUrl !== undefined) checkApiUrl(settings.apiUrl);
  const policy = settings.networkPolicy;
  if (policy !== undefined && policy !== "allow-all") checkCidrs(policy.allowCidrs ?? []);
  const expiration = settings.snapshots?.expiration;
  const capWaitMs = settings.capWait === undefined ? DEFAULT_CAP_WAIT_MS : toMs("capWait", settings.capWait);
  if (capWaitMs > MAX_CAP_WAIT_MS) throw new SettingsError("capWait", "must be at most 30 minutes");
  return {
    backend: settings.backend ?? "vercel",
    apiUrl: settings.apiUrl?.replace(/\/+$/, ""),
    credentials: credentialsOf(settings),
    runtime: settings.runtime ?? "node24",
    vcpus: settings.vcpus ?? 2,
    timeoutMs,
    region: settings.region,
    networkPolicy:
      policy === "allow-all" ? "allow-all" : { allow: policy?.allow ?? [], allowCidrs: policy?.allowCidrs ?? [] },
    ports: settings.ports ?? [],
    tags: settings.tags ?? {},
    snapshots: {
      expirationMs: expiration === undefined ? undefined : toMs("snapshots.expiration", expiration),
      keepLast: settings.snapshots?.keepLast,
    },
    scope: settings.scope,
    ...(settings.maxWorkers !== undefined ? { maxWorkers: settings.maxWorkers } : {}),
    capWaitMs,
    warmImage: settings.warmImage ?? true,
    images: {
      keep: settings.images?.keep ?? DEFAULT_IMAGES_KEPT,
      unusedForMs:
        settings.images?.unusedFor === undefined
          ? DEFAULT_IMAGE_UNUSED_MS
          : toMs("images.unusedFor", settings.images.unusedFor),
    },
    imageSharing: settings.images?.shareBy ?? "project",
  };
}

/** Plain http is only for a loopback emulator; anything remote must be https without credentials. */
function checkApiUrl(raw: string): void {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SettingsError("apiUrl", "is not a valid URL");
  }
  if (url.username || url.password || url.search || url.hash) {
    throw new SettingsError("apiUrl", "must not carry credentials, a query or a fragment");
  }
  const loopback = ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
  if (url.protocol === "http:" && !loopback) throw new SettingsError("apiUrl", "must use https unless it is loopback");
}

/** An address of its family and a prefix that fits it; the value is never echoed, only its position. */
function checkCidrs(cidrs: readonly string[]): void {
  cidrs.forEach((cidr, index) => {
    const [address = "", prefix = ""] = cidr.split("/");
    const bits = isIPv4(address) ? 32 : isIPv6(address) ? 128 : 0;
    if (bits === 0 || Number(prefix) > bits) {
      throw new SettingsError(`networkPolicy.allowCidrs.${index}`, "is not a valid CIDR block (address/prefix)");
    }
  });
}
