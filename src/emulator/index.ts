// The loopback Vercel Sandbox API: the door of the emulator. `startLocalSandboxApi` serves the
// REST API the UNMODIFIED `@vercel/sandbox` SDK speaks, reached through the SDK's documented
// `fetch` option (`api.fetch` rewrites https://vercel.com/api to the loopback URL and forwards
// `init` untouched, keeping the SDK's own undici dispatcher). Sandboxes are real directory
// trees and commands real processes, isolated per sandbox (see isolation.ts). Every request needs
// `api.credentials` (auth.ts): the token is random per instance unless `token` is given. A data dir it creates
// itself is its own to remove (data-dir.ts): on close, on exit and on SIGTERM/SIGINT, or by the next start's sweep.
import type { ChildProcess } from "node:child_process";
import { mkdir } from "node:fs/promises";
import path from "node:path";
import { type Dispatcher, fetch as undiciFetch } from "undici";
import { createOwnedTempDir, type OwnedTempDir } from "../infra/index.js";
import { type ApiScope, tokenFrom } from "./auth.js";
import { DATA_DIR_PREFIX } from "./data-dir.js";
import { DriveStore } from "./drives.js";
import { closeEgressFilter, openEgressFilter } from "./egress-filter.js";
import { type Faults, FaultTable } from "./faults.js";
import { InteractiveShells } from "./interactive.js";
import { assertIsolationAvailable, resolveNodeBinDir } from "./isolation.js";
import { Lifecycle } from "./lifecycle.js";
import { type IssueOptions, OidcIssuer } from "./oidc.js";
import { restoreSnapshots, saveSnapshot } from "./persisted-snapshots.js";
import { type CommandLogEntry, Registry } from "./registry.js";
import { RequestLog, type RequestLogEntry } from "./request-log.js";
import { RouteClient } from "./route-client.js";
import { createApiServer, listen } from "./server.js";

export { EmulatorTokenError } from "./auth.js";
export type { FaultRule, Faults } from "./faults.js";
export { EmulatorIsolationError } from "./isolation.js";
export type { IssueOptions as OidcIssueOptions } from "./oidc.js";
export type { CommandLogEntry } from "./registry.js";
export type { RequestLogEntry } from "./request-log.js";

export interface LocalSandboxApiOptions {
  /**
   * Where sandbox filesystems and snapshots live (the caller's to remove). Default: a fresh temp dir
   * (`vercel-sandbox-emulator-<pid>-XXXXXX`) removed on close, on exit, on SIGTERM/SIGINT/SIGHUP, or, after a
   * SIGKILL, by the next emulator's start.
   */
  dataDir?: string;
  /** TCP port on 127.0.0.1; default a free one. */
  port?: number;
  /** Directory of a Node >= 22.22.3 put first on the sandbox PATH (default: this Node's, if new enough). */
  nodeBinDir?: string;
  /**
   * The bearer token every request must carry; default a random one per instance. At least 16
   * printable characters, and not JWT-shaped (the SDK would rewrite it).
   */
  token?: string;
  /** Lifetime of the OIDC tokens the emulator issues (`credentials.oidcToken`); default 12 hours, as `vercel env pull`. */
  oidcLifetimeSeconds?: number;
  /**
   * CA certificates (PEM) the egress trusts, besides Node's bundled roots, when it re-originates TLS to
   * a destination whose network-policy entry has request rules (e.g. a local HTTPS server in a test).
   */
  egressTrust?: string[];
  /**
   * Snapshots an earlier emulator on this same `dataDir` saved (`saveSnapshot`) to load at start; every other
   * sandbox and snapshot directory under `dataDir` is removed (persisted-snapshots.ts). Default: none, nothing removed.
   */
  restoreSnapshots?: string[];
}

/** The opaque credentials, and (not enumerable, so `{...credentials}` never copies it) an OIDC token. */
export interface EmulatorCredentials {
  token: string;
  teamId: string;
  projectId: string;
  /**
   * A JWT the emulator signed for its team and project, as `vercel env pull` writes to
   * VERCEL_OIDC_TOKEN: with it there, the SDK needs no credentials. A fresh one is minted
   * when the last is within 5 minutes of expiry (the SDK's own refresh margin).
   */
  readonly oidcToken: string;
}

export interface LocalSandboxApi {
  url: string;
  /** Pass as the SDK's `fetch` option. */
  fetch: typeof globalThis.fetch;
  /** Opaque (non-JWT) credentials to pass to every static SDK call; requests without them are refused. */
  credentials: EmulatorCredentials;
  /** Mints an emulator-signed OIDC token (another project or a past expiry mint ones it refuses, for tests). */
  issueOidcToken(options?: IssueOptions): string;
  /**
   * The authorized requests, oldest first: the last 10,000 at most (fewer when long paths fill its 4 MiB),
   * paths over 512 characters cut (request-log.ts).
   */
  requests(): RequestLogEntry[];
  /** Every command sandboxes were asked to run (argv as received), oldest first. */
  commands(): CommandLogEntry[];
  faults: Faults;
  /** Exposed ports: `sandbox.domain(port)` URLs are served by the emulator (route-server.ts). */
  routes: {
    /** PEM of the CA the route certificates chain to (every sandbox trusts it). */
    ca(): Promise<string>;
    /** An undici dispatcher that reaches `*.vercel.run` routes (fetch, WebSocket); `api.fetch` uses it too. */
    dispatcher(): Promise<Dispatcher>;
    /** Where the route server listens (loopback): connect there with the route's name as TLS SNI. */
    address(): Promise<{ host: string; port: number }>;
  };
  /** The ids of `restoreSnapshots` that were loaded (live, unexpired, their layers on disk). */
  restored: string[];
  /** Keeps a live snapshot's record next to its layer so a later emulator on this data dir can restore it. */
  saveSnapshot(id: string): Promise<void>;
  /** Stops every session, ends every process the emulator started, and closes the server. */
  close(): Promise<void>;
}

const VERCEL_API = /^https:\/\/vercel\.com\/api/;
const ROUTE_URL = /^https:\/\/[^/]+\.vercel\.run(?::443)?(\/|$)/i;

export async function startLocalSandboxApi(options: LocalSandboxApiOptions = {}): Promise<LocalSandboxApi> {
  assertIsolationAvailable();
  const teamId = "team_emulator";
  const projectId = "prj_emulator";
  const oidc = new OidcIssuer(teamId, projectId, options.oidcLifetimeSeconds);
  const scope: ApiScope = { token: tokenFrom(options.token), teamId, projectId, oidc };
  const owned = options.dataDir ? undefined : await createOwnedTempDir(DATA_DIR_PREFIX);
  // The direct-egress filter's table (egress-filter.ts): stale ones of dead emulators go now, ours at close.
  await openEgressFilter();
  try {
    return await serve(options, scope, path.resolve(options.dataDir ?? owned!.path), owned);
  } catch (error) {
    await closeEgressFilter();
    await owned?.remove();
    throw error;
  }
}

async function serve(
  options: LocalSandboxApiOptions,
  scope: ApiScope,
  dataDir: string,
  owned: OwnedTempDir | undefined,
): Promise<LocalSandboxApi> {
  await mkdir(path.join(dataDir, "sandboxes"), { recursive: true });
  await mkdir(path.join(dataDir, "snapshots"), { recursive: true });
  await mkdir(path.join(dataDir, "drives"), { recursive: true });

  const children = new Set<ChildProcess>();
  const track = (child: ChildProcess) => {
    children.add(child);
    child.once("close", () => children.delete(child));
  };
  const registry = new Registry();
  const restored = options.restoreSnapshots ? await restoreSnapshots(registry, dataDir, options.restoreSnapshots) : [];
  const nodeBinDir = resolveNodeBinDir(options.nodeBinDir);
  const lifecycle = new Lifecycle(registry, dataDir, track, nodeBinDir);
  lifecycle.egressTrust = [...(options.egressTrust ?? [])];
  const routeClient = new RouteClient(lifecycle.routes);
  const faults = new FaultTable();
  const log = new RequestLog();
  const interactive = new InteractiveShells();
  // A session holds its drives until it is stopped: booting, running, stopping and snapshotting ones all do.
  const drives = new DriveStore(dataDir, (id) => {
    const status = registry.sessions.get(id)?.status;
    return status !== undefined && status !== "stopped" && status !== "failed" && status !== "aborted";
  });
  lifecycle.drives = drives;
  const server = createApiServer({ scope, registry, lifecycle, nodeBinDir, track, interactive, drives }, faults, log);
  const port = await listen(server, options.port ?? 0);
  const url = `http://127.0.0.1:${port}`;

  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= (async () => {
      server.close();
      server.closeAllConnections();
      interactive.close();
      await Promise.all([...registry.sessions.values()].map((s) => lifecycle.stop(s)));
      await lifecycle.close();
      await closeEgressFilter();
      for (const child of children) child.kill("SIGKILL");
      await Promise.all(
        [...children].map(
          (c) => new Promise((r) => (c.exitCode !== null || c.signalCode !== null ? r(0) : c.once("close", r))),
        ),
      );
      await Promise.all([lifecycle.routes.close(), routeClient.close()]);
      await owned?.remove();
    })();
    return closing;
  };

  return {
    url,
    fetch: (async (input: string | URL | Request, init?: RequestInit) => {
      const target = typeof input === "string" || input instanceof URL ? String(input) : input.url;
      if (ROUTE_URL.test(target)) {
        const dispatcher = await routeClient.dispatcher();
        return (await undiciFetch(target, { ...(init as object), dispatcher })) as unknown as Response;
      }
      return globalThis.fetch(target.replace(VERCEL_API, url), init);
    }) as typeof globalThis.fetch,
    routes: {
      ca: async () => (await lifecycle.routes.ca()).ca,
      dispatcher: () => routeClient.dispatcher(),
      address: async () => ({ host: "127.0.0.1", port: await lifecycle.routes.listenPort() }),
    },
    credentials: credentialsOf(scope, scope.oidc!),
    issueOidcToken: (issue) => scope.oidc!.issue(issue),
    requests: () => log.list(),
    commands: () => registry.commandLog.map((e) => ({ ...e, args: [...e.args] })),
    faults: { inject: (rule) => faults.inject(rule), clear: () => faults.clear() },
    restored,
    saveSnapshot: (id) => saveSnapshot(registry, dataDir, id),
    close,
  };
}

/** SDK refresh margin: `@vercel/oidc` treats a token expiring within 5 minutes as expired. */
const REFRESH_MARGIN_SECONDS = 5 * 60;

function credentialsOf(scope: ApiScope, oidc: OidcIssuer): EmulatorCredentials {
  const credentials = { token: scope.token, teamId: scope.teamId, projectId: scope.projectId };
  let current: { token: string; exp: number } | undefined;
  Object.defineProperty(credentials, "oidcToken", {
    enumerable: false,
    get() {
      if (!current || current.exp - Date.now() / 1000 <= REFRESH_MARGIN_SECONDS) {
        const token = oidc.issue();
        const verdict = oidc.verify(token);
        current = { token, exp: verdict.ok ? verdict.claims.exp : 0 };
      }
      return current.token;
    },
  });
  return credentials as EmulatorCredentials;
}
