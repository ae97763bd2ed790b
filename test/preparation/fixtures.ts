// What the warm-image specs share: real Git repositories built in the test, OpenClaw 2026.9.2's own project
// preparation (core's seed script and pack builder, loaded from the installed package: nothing of it is
// re-implemented here), and the provision options a gateway passes for a preparable project.
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { pathToFileURL } from "node:url";
import type { ProvisionOptions } from "../../src/infra/worker-types.js";
import { type Artifact, artifactOf } from "../provider/fixtures/artifact.js";
import type { Harness } from "../provider/fixtures/enrollment-harness.js";
import { removeAfterwards } from "../setup/remove-afterwards.js";

const DIST = join(process.cwd(), "node_modules", "openclaw", "dist");

interface CoreProject {
  key: string;
  root: string;
  baseCommit: string;
}
interface CorePreparation {
  project: NonNullable<ProvisionOptions["project"]>;
  close(): void;
}

/** Core's chunk that exports `name` (the chunk file names carry a content hash of the pinned version). */
async function coreChunk(prefix: string): Promise<Record<string, unknown>> {
  const file = readdirSync(DIST).find((name) => name.startsWith(`${prefix}-`) && name.endsWith(".js"));
  if (!file) throw new Error(`openclaw 2026.9.2 has no dist/${prefix}-*.js; was the package updated?`);
  return import(pathToFileURL(join(DIST, file)).href);
}

/** Core's `prepareWorkerProjectSnapshot` and `createWorkerProjectPreparation` (minified export names). */
export async function loadCorePreparation() {
  const base = await coreChunk("workspace-git-base");
  const preparation = await coreChunk("project-preparation");
  const snapshot = base.t as (p: { localPath: string; namespace: string }) => Promise<CoreProject | undefined>;
  const create = preparation.t as (p: {
    namespace: string;
    project: CoreProject;
    requireCurrent: () => void;
  }) => CorePreparation;
  if (typeof snapshot !== "function" || typeof create !== "function") {
    throw new Error("openclaw's project preparation chunks no longer export what these specs load");
  }
  return {
    /** What the gateway passes as `options.project` for the repository's current commit. */
    async projectOf(repo: Repo, namespace = "specs"): Promise<CorePreparation> {
      const project = await snapshot({ localPath: repo.root, namespace });
      if (!project) throw new Error(`${repo.root} has no commit`);
      return create({ namespace, project, requireCurrent: () => undefined });
    },
  };
}

export interface Repo {
  root: string;
  commit(files: Record<string, string>, options?: { executable?: string[] }): string;
}

/**
 * A real repository with one commit per `commit` call, removed when the test (or, in a describe body, its suite)
 * ends; code outside vitest (the bench) passes its own `remove`, which it must then do itself.
 */
export function createRepo(remove: (root: string) => void = removeAfterwards): Repo {
  const root = mkdtempSync(join(tmpdir(), "vsb-repo-"));
  remove(root);
  const git = (...args: string[]) =>
    execFileSync("git", ["-C", root, ...args], {
      encoding: "utf8",
      env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
    }).trim();
  git("init", "--quiet");
  git("config", "user.email", "specs@example.invalid");
  git("config", "user.name", "specs");
  return {
    root,
    commit(files, options = {}) {
      for (const [name, content] of Object.entries(files)) {
        mkdirSync(dirname(join(root, name)), { recursive: true });
        writeFileSync(join(root, name), content, { mode: options.executable?.includes(name) ? 0o755 : 0o644 });
      }
      git("add", "--all");
      git("commit", "--quiet", "--allow-empty", "-m", `commit ${randomBytes(3).toString("hex")}`);
      return git("rev-parse", "HEAD");
    },
  };
}

/** A worker archive as core publishes it (its bytes do not matter to the provider, only its digest). */
export function workerArchive(): Artifact {
  return artifactOf(randomBytes(4096), "2026.9.2");
}

/**
 * `prepareNodeRuntime` as core hands it over: the runtime and the worker archive, each with its own token (the
 * gateway's enrollment token for both unless `tokens` names others).
 */
export function runtimePreparation(
  h: Harness,
  runtime: Artifact,
  worker: Artifact,
  tokens = { runtime: h.gateway.token, worker: h.gateway.token },
) {
  return async () => ({
    nodeBootstrap: {
      url: h.gateway.urlOf(runtime.sha256),
      token: tokens.runtime,
      sha256: runtime.sha256,
      bytes: runtime.bytes.length,
      openclawVersion: runtime.version,
      enabledPluginIds: [],
      tlsFingerprint: h.gateway.fingerprint,
    },
    workerBundle: {
      url: h.gateway.urlOf(worker.sha256),
      token: tokens.worker,
      sha256: worker.sha256,
      bytes: worker.bytes.length,
      tlsFingerprint: h.gateway.fingerprint,
      packageRelativePath: `worker-archives/${worker.sha256}.tgz`,
    },
  });
}
