// Layered snapshots. A sandbox's `/` is an overlay of its own upper layer over a chain of frozen layers
// (top first) over the image. A snapshot freezes the upper layer by moving it (a rename, no copy) to
// `snapshots/<id>/fs/upper`; its chain is that layer over the sandbox's own chain, and the sandbox goes on
// over that chain with a fresh, empty upper layer. A sandbox created from a snapshot gets a fresh upper
// layer over the snapshot's chain: cost independent of the filesystem's size.
// - Owners: a frozen layer's files keep the host ids of the sandbox that wrote them (its id range,
//   id-ranges.ts). A sandbox of another range sees such a layer through an idmapped mount (open_tree +
//   mount_setattr(MOUNT_ATTR_IDMAP) + move_mount, made in the holder's private mount namespace, read-only)
//   that shows that range's ids as its own; nothing is copied or chowned, and no two live sandboxes share a
//   range. Host root's files stay host root's; other ids show as the overflow id (`nobody`).
// - Immutability: a frozen layer is only ever an overlay lower layer (or an idmapped read-only mount of
//   one); writes go to the upper layer of the sandbox that makes them, so they never reach the snapshot or
//   a sibling sandbox standing on it.
// - Lifetime: a deleted (or expired) snapshot's layer stays while a sandbox or a live snapshot stands on it;
//   `sweepLayers` (mark and sweep from the registry's sandboxes and live snapshots) removes it once none does.
//   A persistent sandbox's stop is a snapshot like any other (Vercel takes one then). A restored chain's layer
//   whose own snapshot was not restored (persisted-snapshots.ts) has no record (the registry's
//   `unrecordedLayers`) and is swept the same way.
//   The registry lives in memory and the data dir goes with the emulator (data-dir.ts), so nothing outlives it.
// - Depth: a chain longer than MAX_LAYERS is flattened into one new layer (a host-side merge that keeps
//   whiteouts and opaque directories, as the overlay reads them; host-tree.ts `mergeLayers`, by file descriptor),
//   which costs a copy once per MAX_LAYERS snapshots.
import { existsSync } from "node:fs";
import { rm } from "node:fs/promises";
import path from "node:path";
import { runHost } from "./host-spawn.js";

/**
 * The host's own Python for the idmap and merge helpers, started isolated and without `site` (a shim on
 * PATH, e.g. pyenv's, costs half a second per start on a loaded machine).
 */
export const PYTHON = ["/usr/bin/python3", "/usr/local/bin/python3"].find((p) => existsSync(p)) ?? "python3";
export const PYTHON_FLAGS = ["-I", "-S"];

/** Frozen layers a chain may hold before a snapshot flattens it (well under overlayfs's lower-layer limit). */
export const MAX_LAYERS = 32;

/** One frozen layer: its directory (relative to the data dir), the id range its files are owned in, its size. */
export interface LayerRef {
  dir: string;
  idBase: number;
  bytes: number;
}

/** The snapshot directory (relative to the data dir) that holds a layer: `snapshots/<id>`. */
export function layerHome(layer: LayerRef): string {
  return layer.dir.split("/").slice(0, 2).join("/");
}

/** Bytes under a frozen layer (`du`; 0 when it cannot be read). */
export async function layerBytes(dir: string): Promise<number> {
  const { stdout } = await runHost("du", ["-sb", dir]).catch(() => ({ stdout: "0" }));
  return Number.parseInt(stdout, 10) || 0;
}

/**
 * Removes the snapshot directories (`snapshots/<id>`) whose snapshot is gone and whose layer no sandbox
 * and no live snapshot stands on. `roots` are the chains still in use; `gone` the directories that may
 * go. Answers the directories it removed.
 */
export async function sweepLayers(
  dataDir: string,
  roots: Iterable<readonly LayerRef[]>,
  gone: Iterable<string>,
): Promise<string[]> {
  const used = new Set<string>();
  for (const chain of roots) for (const layer of chain) used.add(layerHome(layer));
  const removed: string[] = [];
  for (const home of gone) {
    if (used.has(home)) continue;
    await rm(path.join(dataDir, home), { recursive: true, force: true });
    removed.push(home);
  }
  return removed;
}

// Python the holder (holder-script.ts) runs before its pivot, as one process with everything else it does.
// userns(map): a user namespace with the given uid/gid map, made by a forked child that only unshares and
// waits; its fd is all that keeps it (userns_begin forks the child, userns_end maps it and opens the fd, so a
// holder made ahead forks it before it knows the map). idmap_mounts(lines, count): each "src\tdst\tfrom\tto"
// line mounts src read-only at dst, idmapped so host ids [from, from + count) show as [to, to + count) and host
// root stays host root (one user namespace per mapping).
export const IDMAP_PY = `NR_OPEN_TREE, NR_MOVE_MOUNT, NR_MOUNT_SETATTR = 428, 429, 442
OPEN_TREE_CLONE, O_CLOEXEC, AT_FDCWD, AT_EMPTY_PATH = 1, 0o2000000, -100, 0x1000
MOVE_MOUNT_F_EMPTY_PATH, MOUNT_ATTR_RDONLY, MOUNT_ATTR_IDMAP, CLONE_NEWUSER = 4, 1, 0x100000, 0x10000000
class Attr(ctypes.Structure):
    _fields_ = [(n, ctypes.c_uint64) for n in ("set", "clr", "propagation", "userns_fd")]
def check(r, what):
    if r < 0:
        e = ctypes.get_errno()
        sys.exit(f"{what}: {os.strerror(e)}")
    return r
def userns_begin():
    # The child unshares and names itself by /proc/self (the /proc the parent then writes through), then waits.
    r, w = os.pipe()
    back_r, back_w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(w)
        os.close(back_r)
        ok = libc.unshare(CLONE_NEWUSER) == 0
        os.write(back_w, (os.readlink("/proc/self") if ok else "-").encode())
        os.close(back_w)
        os.read(r, 1)
        os._exit(0 if ok else 1)
    os.close(r)
    os.close(back_w)
    return pid, w, back_r
def userns_end(begun, mapping):
    pid, w, back_r = begun
    proc = os.read(back_r, 64).decode()
    os.close(back_r)
    if not proc or proc == "-":
        sys.exit("could not make a user namespace")
    for f in ("uid_map", "gid_map"):
        with open(f"/proc/{proc}/{f}", "w") as h:
            h.write(mapping)
    fd = os.open(f"/proc/{proc}/ns/user", os.O_RDONLY | O_CLOEXEC)
    os.close(w)
    os.waitpid(pid, 0)
    return fd
def userns(mapping):
    return userns_end(userns_begin(), mapping)
def idmap_mounts(lines, count):
    spaces = {}
    for line in lines.splitlines():
        if not line:
            continue
        src, dst, frm, to = line.split("\\t")
        key = (int(frm), int(to))
        if key not in spaces:
            spaces[key] = userns(f"0 0 1\\n{key[0]} {key[1]} {count}\\n")
        t = check(libc.syscall(NR_OPEN_TREE, AT_FDCWD, src.encode(), OPEN_TREE_CLONE | O_CLOEXEC), "open_tree " + src)
        attr = Attr(MOUNT_ATTR_IDMAP | MOUNT_ATTR_RDONLY, 0, 0, spaces[key])
        check(libc.syscall(NR_MOUNT_SETATTR, t, b"", AT_EMPTY_PATH, ctypes.byref(attr), ctypes.sizeof(attr)), "mount_setattr " + src)
        check(libc.syscall(NR_MOVE_MOUNT, t, b"", AT_FDCWD, dst.encode(), MOVE_MOUNT_F_EMPTY_PATH), "move_mount " + dst)
        os.close(t)
    for fd in spaces.values():
        os.close(fd)
`;

/** What the holder needs to stack a chain for a sandbox of range `idBase` (paths relative to the data dir). */
export interface LayerStack {
  /** Overlay lower layers, top first, relative to the sandbox's layer dir (where the holder mounts). */
  lowers: string[];
  /** IDMAP_SCRIPT's input lines: layers of another range, mounted idmapped at `<i>` in the layer dir. */
  idmaps: string[];
}

/** How the holder stacks `chain` for a sandbox of range `idBase` whose layer dir is `layerDir` (absolute). */
export function stackPlan(dataDir: string, chain: readonly LayerRef[], idBase: number, layerDir: string): LayerStack {
  const idmaps: string[] = [];
  const lowers = chain.map((layer, i) => {
    const source = path.relative(layerDir, path.join(dataDir, layer.dir));
    if (layer.idBase === idBase) return source;
    idmaps.push([source, String(i), layer.idBase, idBase].join("\t"));
    return String(i);
  });
  return { lowers, idmaps };
}
