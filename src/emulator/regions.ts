// Region settings of a sandbox: the primary `region` and the ordered `failoverRegions` (both SDK
// versions send them on create, fork and patch). The SDK's own docs say failover regions "must
// not include `region`": as Vercel does (vercel/sandbox's own tests), that is a 400 only when the
// request names that region; failover regions that include only the default (or the stored) region
// are accepted. A region listed twice is contradictory either way. Any region name is accepted.
import { badRequest } from "./http.js";

export interface RegionSettings {
  region: string;
  failoverRegions?: string[];
  /** Whether the request itself names `region` (default true); only then may the failovers not include it. */
  regionNamed?: boolean;
}

/** Why these settings conflict, or undefined when they do not. Pure, so it is tested directly. */
export function regionConflict({
  region,
  failoverRegions = [],
  regionNamed = true,
}: RegionSettings): string | undefined {
  if (region.trim() === "") return "`region` must not be empty";
  if (failoverRegions.some((r) => r.trim() === "")) return "`failoverRegions` must not contain an empty region";
  if (regionNamed && failoverRegions.includes(region)) {
    return `\`failoverRegions\` must not include the primary region \`${region}\``;
  }
  const duplicate = failoverRegions.find((r, i) => failoverRegions.indexOf(r) !== i);
  if (duplicate !== undefined) return `\`failoverRegions\` lists \`${duplicate}\` more than once`;
  return undefined;
}

/** Throws the 400 for conflicting settings; returns the pair otherwise. */
export function checkedRegions(settings: RegionSettings): { region: string; failoverRegions?: string[] } {
  const conflict = regionConflict(settings);
  if (conflict) throw badRequest(conflict);
  return { region: settings.region, failoverRegions: settings.failoverRegions };
}
