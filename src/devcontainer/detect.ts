// Built-in JavaScript dependency detection (seed 002 "Built-in detection"): the first matching root lockfile
// picks one install command. Detection never installs Node or Bun; Corepack shims go to a user-writable
// directory so no step needs sudo.
import type { LifecycleCommand } from "./commands.js";
import { gitBlobId, type IdentityPart } from "./identity.js";

/** Bump when any detected command below changes, so prepared snapshots from older commands are not reused. */
export const DETECTION_VERSION = 1;

export type RepoFiles = Readonly<Record<string, string | Uint8Array>>;

export interface Detection {
  /** The lockfile that decided the installer. */
  readonly file: string;
  /** The install, run as the update phase; absent when the installer is unavailable. */
  readonly install: LifecycleCommand | undefined;
  /** Every input that shapes what the install does, for the preparation identity. */
  readonly identityParts: readonly IdentityPart[];
  readonly notes: readonly string[];
}

// Corepack writes shims for one manager into ~/.local/bin (user-owned, commonly on PATH for later sessions);
// the prompt is disabled because a preparation has no terminal to answer Corepack's download question.
function corepackInstall(manager: "pnpm" | "yarn", install: string): LifecycleCommand {
  const shims = '"$HOME/.local/bin"';
  return {
    kind: "shell",
    command: [
      "export COREPACK_ENABLE_DOWNLOAD_PROMPT=0",
      `mkdir -p ${shims}`,
      `corepack enable --install-directory ${shims} ${manager}`,
      `export PATH=${shims}:"$PATH"`,
      install,
    ].join(" && "),
  };
}

/** Finds the first recognised lockfile; undefined means no dependency setup. */
export function detectInstaller(files: RepoFiles, hasCommand: (name: string) => boolean): Detection | undefined {
  const packageManager = readPackageManager(files["package.json"]);
  const lock = (file: string) => {
    const content = files[file];
    return content === undefined ? undefined : { file, blob: gitBlobId(content) };
  };

  const pnpm = lock("pnpm-lock.yaml");
  if (pnpm) {
    return {
      file: pnpm.file,
      install: corepackInstall("pnpm", "pnpm install --frozen-lockfile"),
      // Corepack runs the exact pnpm that packageManager pins, so the pin shapes the installed tree.
      identityParts: [DETECTION_VERSION, "pnpm", pnpm.blob, packageManager ?? null],
      notes: [],
    };
  }

  const yarn = lock("yarn.lock");
  if (yarn) {
    const berry = isYarnBerry(packageManager, files[".yarnrc.yml"] !== undefined);
    return {
      file: yarn.file,
      install: corepackInstall("yarn", berry ? "yarn install --immutable" : "yarn install --frozen-lockfile"),
      identityParts: [DETECTION_VERSION, berry ? "yarn-berry" : "yarn-classic", yarn.blob, packageManager ?? null],
      notes: [],
    };
  }

  const npm = lock("package-lock.json");
  if (npm) {
    return {
      file: npm.file,
      install: { kind: "exec", argv: ["npm", "ci"] },
      identityParts: [DETECTION_VERSION, "npm", npm.blob],
      notes: [],
    };
  }

  // The text lockfile is Bun's current format; the binary one is what older Bun versions committed.
  const bun = lock("bun.lock") ?? lock("bun.lockb");
  if (bun) {
    const onPath = hasCommand("bun");
    return {
      file: bun.file,
      install: onPath ? { kind: "exec", argv: ["bun", "install", "--frozen-lockfile"] } : undefined,
      identityParts: [DETECTION_VERSION, "bun", bun.file, bun.blob, onPath],
      notes: onPath
        ? []
        : [`${bun.file} found but bun is not on PATH; dependency install skipped (Bun is never installed)`],
    };
  }
  return undefined;
}

/**
 * Berry is chosen by a `packageManager` pin of yarn 2 or later; a pin of yarn 1 means Classic even beside a
 * `.yarnrc.yml`, because the pin is what Corepack will run. Without a yarn pin, `.yarnrc.yml` (a Berry-only
 * file) means Berry.
 */
function isYarnBerry(packageManager: string | undefined, hasYarnrcYml: boolean): boolean {
  const pinned = packageManager?.match(/^yarn@(\d+)/);
  if (pinned) return Number(pinned[1]) >= 2;
  return hasYarnrcYml;
}

// package.json is read only for its `packageManager` pin; a missing or unreadable one simply has no pin, since
// detection is a best-effort default and the install itself will report a broken manifest.
function readPackageManager(content: string | Uint8Array | undefined): string | undefined {
  if (content === undefined) return undefined;
  try {
    const text = typeof content === "string" ? content : new TextDecoder().decode(content);
    const manifest: unknown = JSON.parse(text.startsWith("\uFEFF") ? text.slice(1) : text);
    const pin = (manifest as { packageManager?: unknown } | null)?.packageManager;
    return typeof pin === "string" ? pin.trim() : undefined;
  } catch {
    return undefined;
  }
}
