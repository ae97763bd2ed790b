// A copy of a directory tree that keeps everything (owners, modes, device nodes, xattrs, links as links); `cp`
// runs by its absolute path with a fixed environment. Between caches of the specs (`links: true`) its files are
// hard links to the original where the file system allows, since nothing writes them in place. A tree a sandbox
// will see (a snapshot's layer in an emulator's data dir) is always a full copy: a sandbox sees a file's link
// count, and OpenClaw's node refuses to install a worker bundle from a hard-linked path.
import { execFile } from "node:child_process";
import { rm } from "node:fs/promises";
import { promisify } from "node:util";

const run = promisify(execFile);

export async function copyTree(from: string, to: string, options: { links?: boolean } = {}): Promise<void> {
  const cp = (flags: string) => run("/bin/cp", [flags, "--", from, to], { env: { PATH: "/usr/bin:/bin" } });
  if (options.links) {
    try {
      await cp("-al");
      return;
    } catch {
      await rm(to, { recursive: true, force: true });
    }
  }
  await cp("-a");
}
