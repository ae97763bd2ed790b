// Pure decisions about a sandbox's shape: the create request for an allocation, the egress policy, and
// machine classes. Deny-by-default egress: the package registry and whatever the profile adds; the gateway's
// origin is added once enrollment reveals it.
import type { NetworkPolicy } from "@vercel/sandbox";
import { type Allocation, ownershipTags } from "./allocation.js";
import { type ProfileSettings, VCPU_CHOICES } from "./settings.js";

export const PACKAGE_REGISTRY_HOST = "registry.npmjs.org";
const MEMORY_GB_PER_VCPU = 2;

export function egressPolicy(settings: ProfileSettings, extraHosts: readonly string[] = []): NetworkPolicy {
  if (settings.networkPolicy === "allow-all") return "allow-all";
  const allow = [...new Set([PACKAGE_REGISTRY_HOST, ...extraHosts, ...settings.networkPolicy.allow])];
  const cidrs = settings.networkPolicy.allowCidrs;
  return cidrs.length > 0 ? { allow, subnets: { allow: cidrs } } : { allow };
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
    networkPolicy: egressPolicy(settings),
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
