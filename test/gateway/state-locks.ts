// The one thing the gateway writes outside the run dir: its lock coordinators, at a path hard-coded to
// /tmp/openclaw-state-locks-<uid>/<family>.<sha256(dbPath)[0,8]>.lock.sqlite. dispose() removes exactly the
// ones that belong to this run's databases, leaving any other gateway's locks alone.

import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { walkEntries } from "./files.js";

export async function removeLockCoordinators(stateDir: string): Promise<void> {
  if (process.platform === "win32") return;
  const uid = typeof process.getuid === "function" ? process.getuid() : undefined;
  const lockDir = path.join("/tmp", uid === undefined ? "openclaw-state-locks" : `openclaw-state-locks-${uid}`);
  const databases: string[] = [];
  for await (const { entry, full } of walkEntries(stateDir)) {
    // Coordinator names hash the database's resolved path, so resolve it before hashing.
    if (/\.(sqlite|db)$/.test(entry.name)) databases.push(await fs.realpath(full).catch(() => full));
  }
  for (const database of databases) {
    const hash = createHash("sha256").update(database).digest("hex").slice(0, 8);
    for (const family of ["state-lifecycle", "gateway-lifecycle", "state-handles"]) {
      for (const suffix of ["", "-wal", "-shm", "-journal"]) {
        await fs.rm(path.join(lockDir, `${family}.${hash}.lock.sqlite${suffix}`), { force: true });
      }
    }
  }
}
