// Recipe resolution (seed 002 "Recipe precedence"): one recipe from the files of the admitted commit.
// A devcontainer file wins even when it declares nothing; an invalid one throws rather than falling back,
// because a silent fallback would run commands the owner never chose.
import type { Node } from "jsonc-parser";
import { PHASE_NAMES, type PhaseName, type Phases, readLifecycleCommand } from "./commands.js";
import { detectInstaller, type RepoFiles } from "./detect.js";
import { ENV_PROPERTIES, readLifecycleEnv } from "./env.js";
import { RecipeError } from "./errors.js";
import { gitBlobId, identityOf } from "./identity.js";
import { decodeText, locate, members, parseJsonc } from "./jsonc.js";

export type RecipeSource = "devcontainer" | "script" | "detected" | "none";

export interface ResolveInput {
  /** Repository-relative paths (no leading `./`) to committed contents at the admitted commit. */
  readonly files: RepoFiles;
  /** Paths committed with the executable bit. */
  readonly executables?: readonly string[];
  /** Whether the target machine has a command on PATH; absent means nothing optional is assumed. */
  readonly hasCommand?: (name: string) => boolean;
  /** The caller chose to skip setup: no repository command runs and the identity is its own. */
  readonly skipSetup?: boolean;
}

export interface Recipe {
  readonly source: RecipeSource;
  /** The recipe file or lockfile that decided the recipe, if any. */
  readonly file: string | undefined;
  /** Hex preparation identity; see identity.ts and detect.ts for the inputs of each source. */
  readonly identity: string;
  readonly phases: Phases;
  /** Environment for lifecycle commands only; session processes never receive it. */
  readonly env: Readonly<Record<string, string>>;
  /** Variables removed from the lifecycle environment by a null value. */
  readonly unset: readonly string[];
  /** Devcontainer properties outside the host-mode subset, sorted. */
  readonly ignored: readonly string[];
  /** One concise note summarising `ignored`, or undefined when nothing was ignored. */
  readonly ignoredNote: string | undefined;
  readonly notes: readonly string[];
}

export const DEVCONTAINER_FILES = [".devcontainer/devcontainer.json", ".devcontainer.json"] as const;
export const FALLBACK_SCRIPT = ".openclaw/worktree-setup.sh";

// Descriptive metadata with no effect on a host: accepted silently rather than reported as ignored.
const METADATA_PROPERTIES = new Set(["name", "$schema"]);
// The note stays one short line even for files written for a full container setup.
const NOTE_NAME_LIMIT = 6;
// The properties seed 002 "Ignored properties" names, in the seed's order.
const SEED_IGNORED = [
  "image",
  "build",
  "dockerComposeFile",
  "runArgs",
  "mounts",
  "remoteUser",
  "features",
  "hostRequirements",
  "secrets",
  "customizations",
];

// A fresh object per recipe, so a caller that mutates one recipe never changes another.
const empty = () => ({ phases: {}, env: {}, unset: [], ignored: [], ignoredNote: undefined, notes: [] });

export function resolveRecipe(input: ResolveInput): Recipe {
  if (input.skipSetup) {
    return {
      ...empty(),
      source: "none",
      file: undefined,
      identity: identityOf("skip-setup", []),
      notes: ["setup skipped explicitly; no repository command runs"],
    };
  }
  const { files } = input;
  for (const file of DEVCONTAINER_FILES) {
    const content = files[file];
    if (content !== undefined) return resolveDevcontainer(file, content);
  }
  const script = files[FALLBACK_SCRIPT];
  // Only an executable script counts, matching OpenClaw's local worktree setup contract.
  if (script !== undefined && (input.executables ?? []).includes(FALLBACK_SCRIPT)) {
    return {
      ...empty(),
      source: "script",
      file: FALLBACK_SCRIPT,
      identity: identityOf("script", [gitBlobId(script)]),
      // Run as a path, not through PATH lookup; it reruns on every checkout refresh like the update phase.
      phases: { updateContentCommand: { kind: "exec", argv: [`./${FALLBACK_SCRIPT}`] } },
    };
  }
  const detection = detectInstaller(files, input.hasCommand ?? (() => false));
  if (detection) {
    return {
      ...empty(),
      source: "detected",
      file: detection.file,
      identity: identityOf("detected", detection.identityParts),
      phases: detection.install ? { updateContentCommand: detection.install } : {},
      notes: detection.notes,
    };
  }
  return { ...empty(), source: "none", file: undefined, identity: identityOf("none", []) };
}

function resolveDevcontainer(file: string, content: string | Uint8Array): Recipe {
  const source = decodeText(file, content);
  const root = parseJsonc(source);
  if (root.type !== "object") {
    throw new RecipeError({
      file,
      location: locate(source.text, root.offset),
      problem: "the file must hold a JSON object",
      remedy: 'Wrap the settings in { } (for example { "postCreateCommand": "npm run build" }) and commit again.',
    });
  }
  const properties = members(root);
  const phaseEntries: [PhaseName, NonNullable<Phases[PhaseName]>][] = [];
  for (const phase of PHASE_NAMES) {
    const node = properties.get(phase)?.value;
    const command = node && readLifecycleCommand(source, node, phase);
    if (command) phaseEntries.push([phase, command]);
  }
  const envNodes: Partial<Record<(typeof ENV_PROPERTIES)[number], Node>> = {};
  for (const property of ENV_PROPERTIES) envNodes[property] = properties.get(property)?.value;
  const { env, unset } = readLifecycleEnv(source, envNodes);

  const known = new Set<string>([...PHASE_NAMES, ...ENV_PROPERTIES, ...METADATA_PROPERTIES]);
  const ignored = [...properties.keys()].filter((name) => !known.has(name)).sort();
  const phases: Phases = Object.fromEntries(phaseEntries);
  return {
    source: "devcontainer",
    file,
    identity: identityOf("devcontainer", [gitBlobId(content)]),
    phases,
    env,
    unset,
    ignored,
    ignoredNote: ignoredNote(ignored),
    notes:
      phaseEntries.length === 0
        ? [`${file} declares no lifecycle commands; the fallback script and detected installer do not run`]
        : [],
  };
}

function ignoredNote(ignored: readonly string[]): string | undefined {
  if (ignored.length === 0) return undefined;
  // The properties seed 002 names lead, in its order, so an unfamiliar property never pushes them into "N more".
  const named = SEED_IGNORED.filter((name) => ignored.includes(name));
  const ordered = [...named, ...ignored.filter((name) => !named.includes(name))];
  const shown = ordered.slice(0, NOTE_NAME_LIMIT).join(", ");
  const more = ordered.length > NOTE_NAME_LIMIT ? ` and ${ordered.length - NOTE_NAME_LIMIT} more` : "";
  return `devcontainer ${shown}${more} ignored on cloud machines`;
}
