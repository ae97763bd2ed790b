// Pure decisions about a sandbox's shape: the create request for an allocation, the egress policy, and
// machine classes. Egress is deny-by-default and follows the worker's life (seed 000: "gateway-only
// egress"): at create, only what the profile adds; while the node bootstraps, also the gateway's host and
// the package registry (the runtime artifact is installed with npm); once enrolled, the gateway and the
// profile's additions only (a replay that must reinstall a runtime gone from the box reopens the bootstrap
// stage for that alone: steps/enroll.ts). `networkPolicy: "allow-all"` opts out of all of it.
import { isIP } from "node:net";
import type { NetworkPolicy } from "@vercel/sandbox";
import ipaddr from "ipaddr.js";
import { type ProfileSettings, VCPU_CHOICES } from "../settings/index.js";
import { type Allocation, ownershipTags } from "./allocation.js";

export const PACKAGE_REGISTRY_HOST = "registry.npmjs.org";
const MEMORY_GB_PER_VCPU = 2;

export type EgressStage = "create" | "bootstrap" | "enrolled";

/**
 * The egress of a worker at one stage of its life. `gatewayHosts` are names or IP literals; an IP literal is
 * allowed as a /32 (/128) subnet, the form Vercel's firewall matches addresses in. Nothing to allow is
 * `deny-all`.
 */
/** An IP literal in its one spelling (an IPv4-mapped IPv6 address is its IPv4 address), so the firewall matches it. */
function canonicalHost(host: string): string {
  return isIP(host) === 0 ? host : ipaddr.process(host).toString();
}

export function egressPolicy(
  settings: ProfileSettings,
  gatewayHosts: readonly string[] = [],
  stage: EgressStage = "bootstrap",
): NetworkPolicy {
  if (settings.networkPolicy === "allow-all") return "allow-all";
  const hosts = stage === "create" ? [] : gatewayHosts.map((h) => canonicalHost(h.replace(/^\[(.*)\]$/, "$1")));
  const names = hosts.filter((h) => isIP(h) === 0);
  const addresses = hosts.filter((h) => isIP(h) !== 0).map((h) => `${h}/${isIP(h) === 4 ? 32 : 128}`);
  const registry = stage === "bootstrap" ? [PACKAGE_REGISTRY_HOST] : [];
  const allow = [...new Set([...registry, ...names, ...settings.networkPolicy.allow])];
  const cidrs = [...new Set([...addresses, ...settings.networkPolicy.allowCidrs])];
  if (allow.length === 0 && cidrs.length === 0) return "deny-all";
  return { ...(allow.length > 0 ? { allow } : {}), ...(cidrs.length > 0 ? { subnets: { allow: cidrs } } : {}) };
}

export function createRequest(allocation: Allocation, settings: ProfileSettings, rawSettings: unknown, vcpus: number) {
  const { expirationMs, keepLast } = settings.snapshots;
  return {
    name: allocation.sandboxName,
    runtime: settings.runtime,
    resources: { vcpus },
    timeout: settings.timeoutMs,
    ports: settings.ports,
    region: settings.region,
    // VM2 is disposable: nothing should be snapshotted behind our back when it stops.
    persistent: false,
    networkPolicy: egressPolicy(settings, [], "create"),
    tags: ownershipTags(allocation, rawSettings, settings.tags),
    ...(expirationMs !== undefined ? { snapshotExpiration: expirationMs } : {}),
    ...(keepLast !== undefined ? { keepLastSnapshots: { count: keepLast } } : {}),
  };
}

export function machineOptions(settings: ProfileSettings) {
  return VCPU_CHOICES.map((cpu) => ({
    id: `vcpu-${cpu}`,
    label: `${cpu} vCPU, ${cpu * MEMORY_GB_PER_VCPU} GB`,
    cpu,
    memoryGb: cpu * MEMORY_GB_PER_VCPU,
    ...(cpu === settings.vcpus ? { default: true } : {}),
  }));
}

/** The vCPU count a machine class names, or undefined when it names none of ours. */
export function vcpusOfMachineClass(machineClass: string): number | undefined {
  const match = /^vcpu-([0-9]+)$/.exec(machineClass);
  const cpu = match ? Number(match[1]) : Number.NaN;
  return (VCPU_CHOICES as readonly number[]).includes(cpu) ? cpu : undefined;
}

/** The host a node must reach: the gateway origin of the bootstrap URL. */
export function gatewayHostOf(bootstrapUrl: string): string | undefined {
  try {
    return new URL(bootstrapUrl).hostname || undefined;
  } catch {
    return undefined;
  }
}
