// Region settings of a sandbox: the primary `region` and the ordered `failoverRegions` (both SDK
// versions send them on create, fork and patch). The SDK's own docs say failover regions "must
// not include `region`". As Vercel's server does (vercel/sandbox's mock mirrors it): a create is a
// 400 only when the request names that region (an overlap with the default region is not the
// caller's to act on); an update whose region or failover regions change checks the pair it leaves,
// the stored region included; a fork checks the pair it makes, the inherited side included. The list
// is kept exactly as given (order and repeats). Any region name is accepted.
import { badRequest } from "./http.js";

export interface RegionSettings {
  region: string;
  failoverRegions?: string[];
  /** Whether `region` is one the caller sent or can read (default true); only then may the failovers not include it. */
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
  return undefined;
}

/** Throws the 400 for conflicting settings; returns the pair otherwise. */
export function checkedRegions(settings: RegionSettings): { region: string; failoverRegions?: string[] } {
  const conflict = regionConflict(settings);
  if (conflict) throw badRequest(conflict);
  return { region: settings.region, failoverRegions: settings.failoverRegions };
}
