// Host id ranges of sandboxes. Each sandbox's user namespace maps its ids 0–65535 to a range of unused
// host ids of its own, so `vercel-sandbox` of one sandbox is never the host user of another's (no shared
// RLIMIT_NPROC, no common owner of files or processes). A sandbox keeps its range for its whole life,
// across stop and resume; the range is free again once the sandbox is deleted. Ranges are slots of
// SANDBOX_ID_COUNT ids from SANDBOX_ID_BASE up, below the kernel's invalid id (2^32 - 1). Each emulator
// starts its search at a random slot, so two emulators on one host rarely hand out the same range (they
// do not coordinate: within one emulator ranges never collide, across emulators they only seldom do).

/** Host uid/gid of sandbox uid/gid 0 in the first range. */
export const SANDBOX_ID_BASE = 1_879_048_192;
/** Ids a sandbox's namespace maps: sandbox id N is host id `idBase + N`. */
export const SANDBOX_ID_COUNT = 65_536;
/** Slots that fit between SANDBOX_ID_BASE and the largest valid id. */
export const ID_SLOTS = Math.floor((0xffff_fffe - SANDBOX_ID_BASE) / SANDBOX_ID_COUNT);

/** Thrown when every id range is held by a live sandbox. */
export class IdRangesExhaustedError extends Error {
  constructor() {
    super(`All ${ID_SLOTS} sandbox id ranges are in use; delete a sandbox first`);
    this.name = "IdRangesExhaustedError";
  }
}

/** The host id of sandbox id 0 in range `slot`. */
export function idBaseOf(slot: number): number {
  return SANDBOX_ID_BASE + slot * SANDBOX_ID_COUNT;
}

/** The first range from slot `start` on (wrapping around) that no id base in `used` holds. */
export function freeIdBase(used: Iterable<number>, start = 0): number {
  const taken = new Set(used);
  for (let i = 0; i < ID_SLOTS; i++) {
    const base = idBaseOf((start + i) % ID_SLOTS);
    if (!taken.has(base)) return base;
  }
  throw new IdRangesExhaustedError();
}

/** Where host id `id` of range `from` lands in range `to`; ids outside `from` (host root…) stay as they are. */
export function shiftId(id: number, from: number, to: number): number {
  return id >= from && id < from + SANDBOX_ID_COUNT ? id - from + to : id;
}
