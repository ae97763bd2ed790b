// Transparent egress to the host's own addresses, for clients that ignore proxy variables (the OpenClaw
// node's WebSocket is one). When a policy names an address of the host explicitly (egress-policy.ts
// `directDestinations`: an IP literal or a subnet in any spelling, read canonically as the proxy reads
// them, so `::ffff:10.0.0.1` routes 10.0.0.1; e.g. a gateway bound to a test host's address), the
// session's network namespace gets a veth link to the host (egress-link.ts) and a /32 route to each such
// address, and nothing else: no default route, no address on the host's end. Routes alone do not confine a
// socket bound to the link (SO_BINDTODEVICE), so the host end is filtered on the host (egress-filter.ts): what
// comes from the link reaches the named addresses and nothing else, and is never forwarded. The filter is in
// place before the link exists and changes before the routes do; a filter the host refuses fails the command
// or policy update that needed it, and a failed change removes the link rather than leave it half-applied.
// A policy update replaces routes and filter at once, for running commands too; a policy that names no address
// any more (deny-all, allow-all, names only) removes the link, a later one that names an address makes a new
// one. Session stop removes it. Everything else still leaves only through the session's proxy (isolation.ts).
// An address whose allow entry has request rules (transform, forwardURL, response) gets no direct route: as on
// Vercel, where every connection passes the firewall, its traffic must go through the proxy that applies them
// (egress-intercept.ts).
import { hostAddresses } from "../infra/index.js";
import { changeLinkFilter } from "./egress-filter.js";
import {
  deleteLink,
  inSandboxNet,
  type LinkEnds,
  linkNames,
  makeLink,
  openNamespace,
  routeCommands,
} from "./egress-link.js";
import { directDestinations, egressRules, namesAnyAddress } from "./egress-policy.js";
import { rulesFor } from "./egress-rules.js";
import type { SessionRecord } from "./registry.js";

interface DirectLink extends LinkEnds {
  sandboxIp: string;
  /** The addresses routed in the sandbox and allowed by the filter. */
  routes: Set<string>;
}

const links = new WeakMap<SessionRecord, DirectLink>();
const updates = new WeakMap<SessionRecord, Promise<void>>();

async function createLink(session: SessionRecord, wanted: Set<string>): Promise<DirectLink> {
  const holder = session.holder!;
  const ns = await openNamespace(holder.netns, () => session.holder === holder && !holder.start.isGone());
  const link: DirectLink = { ns, ...linkNames(), sandboxIp: "", routes: new Set() };
  try {
    // The filter first: the host end's name is in it before the interface exists.
    await changeLinkFilter({ link: link.hostEnd, join: true, add: wanted });
  } catch (error) {
    await ns.close();
    throw error;
  }
  link.routes = new Set(wanted);
  try {
    link.sandboxIp = await makeLink(link, wanted);
  } catch (error) {
    await discard(link);
    throw error;
  }
  return link;
}

async function update(session: SessionRecord, link: DirectLink, wanted: Set<string>): Promise<void> {
  const add = [...wanted].filter((a) => !link.routes.has(a));
  const remove = [...link.routes].filter((a) => !wanted.has(a));
  if (add.length === 0 && remove.length === 0) return;
  try {
    await changeLinkFilter({ link: link.hostEnd, add, remove });
    link.routes = new Set(wanted);
    await inSandboxNet(link.ns, routeCommands(link.peer, link.sandboxIp, add, remove));
  } catch (error) {
    // Filter and routes may disagree now: no link is better than one that is not what the policy says.
    links.delete(session);
    await discard(link);
    throw error;
  }
}

/** Removes a link for good: the pair first (nothing passes once it is gone), then its filter entries. */
async function remove(session: SessionRecord, link: DirectLink): Promise<void> {
  try {
    await deleteLink(link.hostEnd);
  } catch (error) {
    // The pair stays: its filter then admits nothing (its name stays in `links`, its addresses leave).
    await changeLinkFilter({ link: link.hostEnd, remove: link.routes });
    link.routes.clear();
    throw error;
  }
  links.delete(session);
  await link.ns.close().catch(() => undefined);
  await changeLinkFilter({ link: link.hostEnd, remove: link.routes, leave: true });
}

/** Best-effort removal after a failure or at stop: a filter entry left behind only ever drops traffic. */
async function discard(link: DirectLink): Promise<void> {
  await deleteLink(link.hostEnd).catch(() => undefined);
  await link.ns.close().catch(() => undefined);
  await changeLinkFilter({ link: link.hostEnd, remove: link.routes, leave: true }).catch(() => undefined);
}

async function apply(session: SessionRecord): Promise<void> {
  if (!session.holder || session.status !== "running") return;
  const link = links.get(session);
  const rules = egressRules(session.networkPolicy);
  // Most policies name no address: no need to ask the kernel for the host's addresses then.
  const wanted = new Set(
    namesAnyAddress(rules)
      ? directDestinations(rules, await hostAddresses()).filter(
          (address) => rulesFor(session.networkPolicy, address).length === 0,
        )
      : [],
  );
  if (wanted.size === 0) {
    if (link) await remove(session, link);
  } else if (link) {
    await update(session, link, wanted);
  } else {
    links.set(session, await createLink(session, wanted));
  }
}

function enqueue(session: SessionRecord, step: () => Promise<void>): Promise<void> {
  const previous = updates.get(session) ?? Promise.resolve();
  const current = previous.catch(() => undefined).then(step);
  updates.set(session, current);
  return current;
}

/** Brings the session's direct link in line with its current policy; calls are applied in order. */
export function syncDirectRoutes(session: SessionRecord): Promise<void> {
  return enqueue(session, () => apply(session));
}

/** At session stop: the link and its filter entries go (after any change in flight); never fails. */
export function closeDirectRoutes(session: SessionRecord): Promise<void> {
  return enqueue(session, async () => {
    const link = links.get(session);
    links.delete(session);
    if (link) await discard(link);
  }).catch(() => undefined);
}

/** The addresses a session currently reaches directly (diagnostics and NO_PROXY). */
export async function directRoutesOf(session: SessionRecord): Promise<string[]> {
  await updates.get(session)?.catch(() => undefined);
  return [...(links.get(session)?.routes ?? [])].sort();
}
