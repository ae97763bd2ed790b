// Which Node a node runtime of a given OpenClaw release needs on the box (its package.json `engines.node`, which
// its node-version.mjs enforces at run time from 2026.9.3), decided before anything is installed, so a box whose
// Node is too old fails with the range instead of a runtime that refuses to start. Pure.

export interface EngineRange {
  min: readonly [number, number, number];
  belowMajor?: number;
}

export interface NodeEngines {
  ranges: readonly EngineRange[];
  text: string;
}

/** OpenClaw 2026.9.2's engines: `>=22.22.3 <23 || >=24.15.0 <25 || >=25.9.0`. */
export const NODE_ENGINES_2026_9_2: NodeEngines = {
  ranges: [{ min: [22, 22, 3], belowMajor: 23 }, { min: [24, 15, 0], belowMajor: 25 }, { min: [25, 9, 0] }],
  text: ">=22.22.3 <23, >=24.15.0 <25 or >=25.9.0",
};

/** OpenClaw 2026.9.3 to 2026.9.6: `>=24.16.0 <25 || >=26.1.0` (Node 22 and 25 are no longer accepted). */
export const NODE_ENGINES_2026_9_3: NodeEngines = {
  ranges: [{ min: [24, 16, 0], belowMajor: 25 }, { min: [26, 1, 0] }],
  text: ">=24.16.0 <25 or >=26.1.0",
};

/** `2026.9.3` → [2026, 9, 3]; a prerelease or build suffix is ignored; undefined when it is not a version. */
export function releaseOf(version: string): [number, number, number] | undefined {
  const match = /^v?(\d+)\.(\d+)\.(\d+)(?:[-+].*)?$/.exec(version.trim());
  if (!match) return undefined;
  return [Number(match[1]), Number(match[2]), Number(match[3])];
}

/** Whether release `version` is at least `min` (false when it is not a version). */
export function atLeastRelease(version: string, min: readonly [number, number, number]): boolean {
  const release = releaseOf(version);
  if (!release) return false;
  for (let i = 0; i < 3; i++) if (release[i] !== min[i]) return release[i]! > min[i]!;
  return true;
}

/**
 * The engines of the node runtime for `openclawVersion` (the gateway's version, which its node bootstrap
 * carries). Releases after 2026.9.2 keep 2026.9.3's floor until one is known to change it; an unreadable
 * version gets the stricter floor.
 */
export function enginesFor(openclawVersion: string): NodeEngines {
  const release = releaseOf(openclawVersion);
  if (release && !atLeastRelease(openclawVersion, [2026, 9, 3])) return NODE_ENGINES_2026_9_2;
  return NODE_ENGINES_2026_9_3;
}

/** Whether a Node version (`v24.22.3`) satisfies the ranges; the program makes the same comparison on the box. */
export function satisfiesEngines(
  version: string,
  engines: readonly EngineRange[] = NODE_ENGINES_2026_9_2.ranges,
): boolean {
  const parts = version.replace(/^v/, "").split(/[.-]/).slice(0, 3).map(Number);
  if (parts.length < 3 || parts.some((n) => !Number.isInteger(n))) return false;
  const [major, minor, patch] = parts as [number, number, number];
  return engines.some(({ min, belowMajor }) => {
    const atLeast = major !== min[0] ? major > min[0] : minor !== min[1] ? minor > min[1] : patch >= min[2];
    return atLeast && (belowMajor === undefined || major < belowMajor);
  });
}

export interface PluginActivation {
  /** The id lists of the `openclaw plugins enable` calls, in order. */
  batches: string[][];
  /** Whether the runtime pointer is published before the plugins are enabled. */
  pointerFirst: boolean;
}

/**
 * How the node's plugins are enabled, as each release's own Crabbox does it: up to 2026.9.4 the runtime pointer
 * is published, then one `openclaw plugins enable <id>` per id (that CLI takes one id); from 2026.9.5 one call
 * enables them all (the CLI takes several) before the pointer is published ("publishing this pointer earlier
 * makes fresh state look like a legacy installation").
 */
export function pluginActivation(openclawVersion: string, ids: readonly string[]): PluginActivation {
  if (atLeastRelease(openclawVersion, [2026, 9, 5])) {
    return { batches: ids.length > 0 ? [[...ids]] : [], pointerFirst: false };
  }
  return { batches: ids.map((id) => [id]), pointerFirst: true };
}
