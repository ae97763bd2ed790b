// Region settings of a sandbox: the primary `region` and the ordered `failoverRegions` (both SDK
// versions send them on create, fork and patch). The SDK's own docs say failover regions "must
// not include `region`"; a region listed twice is just as contradictory. Either answers 400
// before anything is stored. Any region name is accepted, as the reference says Vercel does.
import { badRequest } from "./http.js";

export interface RegionSettings {
  region: string;
  failoverRegions?: string[];
}

/** Why these settings conflict, or undefined when they do not. Pure, so it is tested directly. */
export function regionConflict({ region, failoverRegions = [] }: RegionSettings): string | undefined {
  if (region.trim() === "") return "`region` must not be empty";
  if (failoverRegions.some((r) => r.trim() === "")) return "`failoverRegions` must not contain an empty region";
  if (failoverRegions.includes(region)) {
    return `\`failoverRegions\` must not include the primary region \`${region}\``;
  }
  const duplicate = failoverRegions.find((r, i) => failoverRegions.indexOf(r) !== i);
  if (duplicate !== undefined) return `\`failoverRegions\` lists \`${duplicate}\` more than once`;
  return undefined;
}

/** Throws the 400 for conflicting settings; returns them unchanged otherwise. */
export function checkedRegions(settings: RegionSettings): RegionSettings {
  const conflict = regionConflict(settings);
  if (conflict) throw badRequest(conflict);
  return settings;
}
