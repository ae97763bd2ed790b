// The memory figure's measurement, wherever it runs (a Node process of its own, or inside a real gateway):
// after one warm-up lease, `leases` leases are provisioned with the stand-in enrollment and stay tracked
// (keepalive armed); heap and RSS are read after forced collections before and after, and the leases are
// destroyed again whatever happens; the heap is read once more after that (what they left behind). `gc` is the process's collector (--expose-gc, or v8's flag set at run time).
import { operationId, standInOptions } from "./stand-in.mjs";

/** Heap and RSS once garbage is collected; turns of the event loop between collections let finalizers run. */
async function settled(gc) {
  for (let i = 0; i < 4; i += 1) {
    gc();
    await new Promise((resolve) => setImmediate(resolve));
  }
  gc();
  const { heapUsed, rss } = process.memoryUsage();
  return { heapUsed, rss };
}

export async function leaseMemory(provider, profile, leases, gc) {
  const warm = await provider.provision(profile, operationId(), standInOptions());
  await provider.destroy({ leaseId: warm.leaseId, profile });
  const before = await settled(gc);
  const held = [];
  let figures;
  try {
    for (let i = 0; i < leases; i += 1) held.push(await provider.provision(profile, operationId(), standInOptions()));
    const after = await settled(gc);
    figures = {
      leases: held.length,
      tracked: provider.keepaliveLeases().length,
      heapGrowthBytes: after.heapUsed - before.heapUsed,
      rssGrowthBytes: after.rss - before.rss,
      heapUsedBytes: after.heapUsed,
      rssBytes: after.rss,
    };
  } finally {
    for (const { leaseId } of held.splice(0)) await provider.destroy({ leaseId, profile });
  }
  // What the destroyed leases left behind: near zero unless something of theirs is still referenced.
  const released = await settled(gc);
  return {
    ...figures,
    trackedAfterRelease: provider.keepaliveLeases().length,
    heapRetainedAfterReleaseBytes: released.heapUsed - before.heapUsed,
  };
}
