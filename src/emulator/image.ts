// The sandbox image: the lower layers of every sandbox's root, built under the emulator's data dir. They
// hold only what a Vercel sandbox has of its own (a sanitised /etc with the `vercel-sandbox` account,
// empty /root, /home/vercel-sandbox, /vercel/sandbox, /tmp, /var…), the `sudo` of the emulated image,
// and a copy of the runtime's Node; the host's system directories (/usr and the merged-/usr links) are
// mounted read-only over it by the holder (isolation.ts). Nothing else of the host is copied: no host
// account, no host home, no host config beyond the files listed in ETC_FROM_HOST.
//
// Building the image never changes a host file: everything taken from the host is a COPY (new inodes,
// never a hard link), and owners and modes are set on those copies only, never through a symbolic link.
//
// Sandboxes run in a user namespace (Vercel's user model): uid/gid N inside is `idBase + N` on the host,
// where each sandbox has a range of its own (id-ranges.ts). The root skeleton and the usr layer are owned
// by the ids of one range, which is why they appear owned by root (or vercel-sandbox) inside; they are a
// under 1 MB, so each range in use gets its own. The Node copy is shared by all sandboxes and owned
// by the host's root, so a sandbox can run it but never change it.
import { createHash } from "node:crypto";
import { constants, existsSync, lstatSync, readFileSync, readlinkSync } from "node:fs";
import {
  chmod,
  chown,
  copyFile,
  cp,
  mkdir,
  readlink,
  realpath,
  rename,
  rm,
  symlink,
  writeFile,
} from "node:fs/promises";
import path from "node:path";
import { runHost } from "./host-spawn.js";
import { ownByHostRoot } from "./host-tree.js";
import { SUDO_HELPER, SUDO_SCRIPT } from "./sudo.js";

/** The host's cp and chown by absolute path, with the fixed host environment, without a time limit. */
const run = (tool: string, args: string[], options: { cwd?: string } = {}) =>
  runHost(tool, args, { ...options, timeoutMs: 0 });

/** Where the runtime's Node install is seen inside every sandbox; its `bin` is first on PATH. */
export const SANDBOX_NODE_PREFIX = "/opt/vercel-sandbox-node";
export const SANDBOX_USER = { name: "vercel-sandbox", uid: 1000, gid: 1000, home: "/home/vercel-sandbox" };
/** Members of this group may use sudo, as on Vercel's image (Amazon Linux's `wheel`). */
export const WHEEL_GID = 10;
/** Trusted by every sandbox: the emulator's route CA, the host's system bundle and NODE_EXTRA_CA_CERTS, if set. */
export const SANDBOX_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";
/** Directories of the host that are mounted read-only into every sandbox when they are real directories. */
export const SYSTEM_DIRS = ["bin", "sbin", "lib", "lib32", "lib64", "libx32"];
const IMAGE_VERSION = "3";

/** Harmless host files the image copies (dynamic linker cache, login defaults, alternatives links). */
const ETC_FROM_HOST = [
  "ld.so.cache",
  "ld.so.conf",
  "ld.so.conf.d",
  "alternatives",
  "os-release",
  "debian_version",
  "login.defs",
  "default/useradd",
  "skel",
  "protocols",
  "services",
  "localtime",
  "bash.bashrc",
  "profile",
  "inputrc",
];

export interface SandboxImage {
  /** The root skeleton, owned by one id range: the top lower layer of a sandbox's `/`. */
  root: string;
  /** Stacked over the host's /usr (read-only): the image's own `sudo`, owned by one id range. */
  usr: string;
  /** Under the skeleton: the runtime's Node at SANDBOX_NODE_PREFIX (empty without one), host root's. */
  node: string;
  /** Host id of sandbox id 0 for the sandboxes this image is for (id-ranges.ts). */
  idBase: number;
}

function etcFiles(): Record<string, { text: string; mode: number; gid?: number }> {
  const u = SANDBOX_USER;
  return {
    passwd: {
      text: `root:x:0:0:root:/root:/bin/bash\n${u.name}:x:${u.uid}:${u.gid}::${u.home}:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n`,
      mode: 0o644,
    },
    group: {
      text: `root:x:0:\nwheel:x:${WHEEL_GID}:${u.name}\n${u.name}:x:${u.gid}:\nnogroup:x:65534:\n`,
      mode: 0o644,
    },
    shadow: { text: `root:*:20000:0:99999:7:::\n${u.name}:!:20000:0:99999:7:::\n`, mode: 0o600 },
    gshadow: { text: `root:*::\nwheel:!::${u.name}\n${u.name}:!::\n`, mode: 0o600 },
    hosts: { text: "127.0.0.1 localhost\n::1 localhost ip6-localhost\n", mode: 0o644 },
    hostname: { text: "sandbox\n", mode: 0o644 },
    "nsswitch.conf": { text: "passwd: files\ngroup: files\nshadow: files\nhosts: files dns\n", mode: 0o644 },
    "resolv.conf": { text: "", mode: 0o644 },
  };
}

function caBundle(extraCa: string): string {
  const parts: string[] = [extraCa.trim()].filter(Boolean);
  for (const file of [SANDBOX_CA_BUNDLE, process.env.NODE_EXTRA_CA_CERTS]) {
    if (!file) continue;
    try {
      parts.push(readFileSync(file, "utf8").trim());
    } catch {
      // No bundle at that path: the sandbox trusts what the others give it.
    }
  }
  return `${parts.join("\n")}\n`;
}

/**
 * The host's files of ETC_FROM_HOST that exist, copied under `etc` at their paths by one `cp` (links as links, modes
 * kept): Node's recursive copy took about 250 ms here for /etc/alternatives' few hundred links, on every new id range.
 */
async function copyEtcFromHost(etc: string): Promise<void> {
  const names = ETC_FROM_HOST.filter((name) => existsSync(path.join("/etc", name)) || isLink(path.join("/etc", name)));
  if (names.length === 0) return;
  await run("cp", ["-R", "-P", "--preserve=mode,timestamps", "--parents", "-t", etc, "--", ...names], { cwd: "/etc" });
}

function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

async function buildRoot(root: string, extraCa: string, idBase: number): Promise<void> {
  const host = (id: number) => idBase + id;
  for (const dir of ["dev", "proc", "usr", "tmp", "run", "mnt", "srv", "opt", "var/tmp", "var/cache", "var/lib"]) {
    await mkdir(path.join(root, dir), { recursive: true });
  }
  // Merged-/usr links stay links; real system directories become mount points for read-only binds.
  for (const dir of SYSTEM_DIRS) {
    const from = `/${dir}`;
    if (isLink(from)) await symlink(readlinkSync(from), path.join(root, dir));
    else if (existsSync(from)) await mkdir(path.join(root, dir));
  }
  const etc = path.join(root, "etc");
  await mkdir(path.join(etc, "ssl/certs"), { recursive: true });
  await copyEtcFromHost(etc);
  for (const [name, file] of Object.entries(etcFiles())) {
    await writeFile(path.join(etc, name), file.text, { mode: file.mode });
  }
  await writeFile(path.join(root, SANDBOX_CA_BUNDLE), caBundle(extraCa), { mode: 0o644 });
  // Everything (copies made above; chown -R never descends into a link) is sandbox root's; then the few
  // things that are not.
  await run("chown", ["-R", "-P", "-h", `${host(0)}:${host(0)}`, root]);
  await mkdir(path.join(root, "root"), { mode: 0o700 });
  await chown(path.join(root, "root"), host(0), host(0));
  for (const [dir, mode] of [
    [SANDBOX_USER.home, 0o755],
    ["/vercel/sandbox", 0o755],
  ] as const) {
    await mkdir(path.join(root, dir), { recursive: true });
    await chmod(path.join(root, dir), mode);
    await chown(path.join(root, dir), host(SANDBOX_USER.uid), host(SANDBOX_USER.gid));
  }
  await chown(path.join(root, "vercel"), host(0), host(0));
  await chown(path.join(root, "home"), host(0), host(0));
  for (const dir of ["tmp", "var/tmp"]) await chmod(path.join(root, dir), 0o1777);
}

async function buildUsr(usr: string, idBase: number): Promise<void> {
  const libexec = path.join(usr, "libexec/vercel-sandbox");
  await mkdir(path.join(usr, "bin"), { recursive: true });
  await mkdir(libexec, { recursive: true });
  await writeFile(path.join(usr, "bin/sudo"), SUDO_SCRIPT, { mode: 0o755 });
  // The privileged half of sudo: a copy of util-linux's setpriv, set-user-ID sandbox root, runnable by
  // wheel only.
  const helper = path.join(usr, SUDO_HELPER.replace(/^\/usr\//, ""));
  await copyFile("/usr/bin/setpriv", helper);
  await run("chown", ["-R", "-P", "-h", `${idBase}:${idBase}`, usr]);
  await chown(helper, idBase, idBase + WHEEL_GID);
  await chmod(helper, 0o4750);
}

/** What the sandbox needs of the runtime's Node install (paths under its prefix); the rest is not copied. */
const NODE_TREES = ["lib/node_modules/npm", "lib/node_modules/corepack"];
const NODE_LINKS = ["bin/npm", "bin/npx", "bin/corepack"];

/**
 * A copy of the runtime's Node at SANDBOX_NODE_PREFIX: the `node` binary, npm (and corepack, when the
 * install has it) and their `bin` entries as the links or scripts they are. Never hard links, never the
 * whole prefix (a system Node's prefix is /usr): the copy is made of new files, and only the copy is
 * given to the host's root. A bind mount would show the host's path in the sandbox's mount table.
 */
async function buildNode(layer: string, nodeBinDir: string | undefined): Promise<void> {
  const target = path.join(layer, SANDBOX_NODE_PREFIX);
  await mkdir(path.join(target, "bin"), { recursive: true });
  if (nodeBinDir) {
    const source = path.dirname(nodeBinDir);
    // The binary itself, wherever a `bin/node` link (e.g. the alternatives system) leads.
    await copyFile(
      await realpath(path.join(nodeBinDir, "node")),
      path.join(target, "bin/node"),
      constants.COPYFILE_FICLONE,
    );
    for (const tree of NODE_TREES) {
      if (!existsSync(path.join(source, tree))) continue;
      await cp(path.join(source, tree), path.join(target, tree), { recursive: true, verbatimSymlinks: true });
    }
    for (const entry of NODE_LINKS) {
      const from = path.join(source, entry);
      if (isLink(from)) {
        const to = await readlink(from);
        // Only links into what was copied make sense in the sandbox.
        const inside = path.resolve(path.dirname(path.join(target, entry)), to);
        if (!path.isAbsolute(to) && existsSync(inside)) await symlink(to, path.join(target, entry));
      } else if (existsSync(from)) {
        await copyFile(from, path.join(target, entry));
      }
    }
  }
  await ownByHostRoot(path.join(layer, "opt"));
}

/** Per layer dir, the last build of this process: builds of one layer run one after another, so a layer
 * in use is never rebuilt (and replaced) by a concurrent boot. */
const building = new Map<string, Promise<void>>();

/** Builds `dir` with `build` unless it is complete, atomically: a half-built layer is never used. */
function buildOnce(dir: string, build: (staging: string) => Promise<void>): Promise<void> {
  const next = (building.get(dir) ?? Promise.resolve()).catch(() => undefined).then(() => buildLayer(dir, build));
  building.set(dir, next);
  return next;
}

async function buildLayer(dir: string, build: (staging: string) => Promise<void>): Promise<void> {
  if (existsSync(path.join(dir, "complete"))) return;
  const staging = `${dir}.building-${process.pid}-${Date.now()}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  try {
    await build(staging);
    await writeFile(path.join(staging, "complete"), `${new Date().toISOString()}\n`);
    await rm(dir, { recursive: true, force: true });
    await rename(staging, dir);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
}

/**
 * The image for sandboxes of the id range at `idBase`, under `<dataDir>/image`: the Node copy is built
 * once, the skeleton and usr layers once per range.
 */
export async function ensureSandboxImage(
  dataDir: string,
  idBase: number,
  nodeBinDir?: string,
  extraCa = "",
): Promise<SandboxImage> {
  const key = createHash("sha256")
    .update(`${IMAGE_VERSION}\0${nodeBinDir ?? ""}\0${extraCa}`)
    .digest("hex")
    .slice(0, 12);
  const dir = path.join(dataDir, "image", key);
  const node = path.join(dir, "node");
  const ids = path.join(dir, `ids-${idBase}`);
  await mkdir(dir, { recursive: true });
  await buildOnce(node, (staging) => buildNode(path.join(staging, "layer"), nodeBinDir));
  await buildOnce(ids, async (staging) => {
    await buildRoot(path.join(staging, "root"), extraCa, idBase);
    await buildUsr(path.join(staging, "usr"), idBase);
  });
  return { root: path.join(ids, "root"), usr: path.join(ids, "usr"), node: path.join(node, "layer"), idBase };
}
