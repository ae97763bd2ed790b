// The sandbox image: the lowest layer of every sandbox's root, built once per emulator data dir.
// It holds only what a Vercel sandbox has of its own (a sanitised /etc with the `vercel-sandbox`
// account, empty /root, /home/vercel-sandbox, /vercel/sandbox, /tmp, /var…) and the `sudo` of the
// emulated image; the runtime's system directories (/usr and the merged-/usr links) are mounted
// read-only over it by the holder (isolation.ts). Nothing else of the host is copied: no host
// account, no host home, no host config beyond the files listed in ETC_FROM_HOST.
//
// Sandboxes run in a user namespace (Vercel's user model): uid/gid N inside is SANDBOX_ID_BASE + N
// on the host, so sandbox root is root inside the sandbox only. The image's files are owned by those
// host ids, which is why they appear owned by root (or vercel-sandbox) inside.
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, lstatSync, readFileSync, readlinkSync } from "node:fs";
import { chmod, chown, copyFile, cp, mkdir, rename, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { SUDO_HELPER, SUDO_SCRIPT } from "./sudo.js";

const run = promisify(execFile);

/** Where the runtime's Node install is seen inside every sandbox; its `bin` is first on PATH. */
export const SANDBOX_NODE_PREFIX = "/opt/vercel-sandbox-node";
/** Host uid/gid of sandbox uid/gid 0; the namespace maps SANDBOX_ID_COUNT ids from here. */
export const SANDBOX_ID_BASE = 1_879_048_192;
export const SANDBOX_ID_COUNT = 65_536;
export const SANDBOX_USER = { name: "vercel-sandbox", uid: 1000, gid: 1000, home: "/home/vercel-sandbox" };
/** Members of this group may use sudo, as on Vercel's image (Amazon Linux's `wheel`). */
export const WHEEL_GID = 10;
/** Trusted by every sandbox: the emulator's route CA, the host's system bundle and NODE_EXTRA_CA_CERTS, if set. */
export const SANDBOX_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";
/** Directories of the host that are mounted read-only into every sandbox when they are real directories. */
export const SYSTEM_DIRS = ["bin", "sbin", "lib", "lib32", "lib64", "libx32"];
const IMAGE_VERSION = "2";

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
  /** The root skeleton: the lowest overlay layer of every sandbox's `/`. */
  root: string;
  /** Stacked over the host's /usr (read-only): the image's own `sudo`. */
  usr: string;
}

const host = (id: number) => SANDBOX_ID_BASE + id;

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

async function copyEtcFromHost(etc: string): Promise<void> {
  for (const name of ETC_FROM_HOST) {
    const from = path.join("/etc", name);
    if (!existsSync(from) && !isLink(from)) continue;
    const to = path.join(etc, name);
    await mkdir(path.dirname(to), { recursive: true });
    if (isLink(from)) await symlink(readlinkSync(from), to);
    else await cp(from, to, { recursive: true, verbatimSymlinks: true });
  }
}

function isLink(p: string): boolean {
  try {
    return lstatSync(p).isSymbolicLink();
  } catch {
    return false;
  }
}

async function buildRoot(root: string, extraCa: string): Promise<void> {
  for (const dir of [
    "dev",
    "proc",
    "usr",
    "tmp",
    "run",
    "mnt",
    "srv",
    "opt/vercel-sandbox-node",
    "var/tmp",
    "var/cache",
    "var/lib",
  ]) {
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
  // Everything is sandbox root's; then the few things that are not.
  await run("chown", ["-R", "-h", `${host(0)}:${host(0)}`, root]);
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

async function buildUsr(usr: string): Promise<void> {
  const libexec = path.join(usr, "libexec/vercel-sandbox");
  await mkdir(path.join(usr, "bin"), { recursive: true });
  await mkdir(libexec, { recursive: true });
  await writeFile(path.join(usr, "bin/sudo"), SUDO_SCRIPT, { mode: 0o755 });
  // The privileged half of sudo: util-linux's setpriv, set-user-ID sandbox root, runnable by wheel only.
  const helper = path.join(usr, SUDO_HELPER.replace(/^\/usr\//, ""));
  await copyFile("/usr/bin/setpriv", helper);
  await run("chown", ["-R", "-h", `${host(0)}:${host(0)}`, usr]);
  await chown(helper, host(0), host(WHEEL_GID));
  await chmod(helper, 0o4750);
}

/**
 * The runtime's Node, at /opt/vercel-sandbox-node: hard-linked when the data dir shares its filesystem
 * (else copied), and left owned by the host's root, so the sandbox can run it but never change it. A
 * bind mount would show the host's path in the sandbox's mount table.
 */
async function addNode(root: string, nodeBinDir: string): Promise<void> {
  const target = path.join(root, SANDBOX_NODE_PREFIX);
  await rm(target, { recursive: true, force: true });
  const source = path.dirname(nodeBinDir);
  await run("cp", ["-al", source, target]).catch(async () => {
    await rm(target, { recursive: true, force: true });
    await run("cp", ["-a", source, target]);
  });
  await run("chown", ["-R", "-h", "0:0", target]);
}

/** Builds the image under `<dataDir>/image` once (atomically: a half-built image is never used). */
export async function ensureSandboxImage(dataDir: string, nodeBinDir?: string, extraCa = ""): Promise<SandboxImage> {
  const key = createHash("sha256")
    .update(`${IMAGE_VERSION}\0${nodeBinDir ?? ""}\0${extraCa}`)
    .digest("hex")
    .slice(0, 12);
  const dir = path.join(dataDir, "image", key);
  const image = { root: path.join(dir, "root"), usr: path.join(dir, "usr") };
  if (existsSync(path.join(dir, "complete"))) return image;
  const staging = `${dir}.building-${process.pid}-${Date.now()}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  try {
    await buildRoot(path.join(staging, "root"), extraCa);
    if (nodeBinDir) await addNode(path.join(staging, "root"), nodeBinDir);
    await buildUsr(path.join(staging, "usr"));
    await writeFile(path.join(staging, "complete"), `${new Date().toISOString()}\n`);
    await rm(dir, { recursive: true, force: true });
    await rename(staging, dir);
  } catch (error) {
    await rm(staging, { recursive: true, force: true });
    throw error;
  }
  return image;
}
