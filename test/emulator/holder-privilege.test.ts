// A sandbox's PID 1 runs the sandbox's own files (its shell, their loader, whatever its /etc/ld.so.preload
// names), so it must hold no privilege of the host's by the time it execs them. Sandbox root writes a preload
// library that records, in every process that loads it, its pid and user namespace map; after a stop and a
// resume, PID 1 of the new session has loaded it, inside the sandbox's user namespace (never the host's
// identity map), and the host sees that PID 1 run as the sandbox's host ids, never as host root. Since the
// sandbox's root may trace PID 1 (as in a VM), PID 1 and every program hold no descriptor of the host's.
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { connect, SDKS, sh, useEmulator } from "./harness.js";
import { holderOf, hostPidOf, uniqueSleep } from "./host-processes.js";

const emulator = useEmulator();
const { Sandbox } = SDKS[1]![1];

const PRELOAD_C = `#include <stdio.h>
#include <string.h>
#include <unistd.h>
__attribute__((constructor)) static void record(void) {
  FILE *out = fopen("/var/tmp/loaded", "a"), *map = fopen("/proc/self/uid_map", "r");
  char line[256];
  if (!out || !map) return;
  fprintf(out, "pid %d map", (int)getpid());
  while (fgets(line, sizeof line, map)) {
    line[strcspn(line, "\\n")] = 0;
    fprintf(out, " [%s]", line);
  }
  fputc('\\n', out);
  fclose(map);
  fclose(out);
}
`;

/** The host uid of process `pid` (real, effective, saved and filesystem ids). */
const hostUids = (pid: number) =>
  /^Uid:\t(.*)$/m
    .exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]!
    .split("\t")
    .map(Number);

describe("the holder's privilege", () => {
  it("PID 1 runs the sandbox's files as the sandbox's root in its user namespace, never as host root", async () => {
    const sandbox = await Sandbox.create({ ...connect(emulator()), persistent: true });
    try {
      const built = await sh(
        sandbox,
        `cat > /var/tmp/record.c <<'EOF'\n${PRELOAD_C}EOF\n` +
          "gcc -shared -fPIC -o /var/tmp/record.so /var/tmp/record.c && echo /var/tmp/record.so > /etc/ld.so.preload",
        true,
      );
      expect(built).toMatchObject({ code: 0, err: "" });
      await sandbox.stop();
      const after = await sh(sandbox, "rm /etc/ld.so.preload; cat /var/tmp/loaded", true);
      expect(after.code).toBe(0);
      const records = after.out.split("\n").filter(Boolean);
      const first = records.find((line) => line.startsWith("pid 1 map "));
      // PID 1 of the resumed session loaded the library, inside a user namespace that maps root to a range of
      // the host's ids other than the host's own root.
      expect(first).toMatch(/^pid 1 map \[\s*0\s+(\d+)\s+65536\]$/);
      expect(Number(/^pid 1 map \[\s*0\s+(\d+)/.exec(first!)![1])).toBeGreaterThan(0);
      // No process that loaded it ran with the host's identity map (the initial user namespace).
      expect(records.filter((line) => /\[\s*0\s+0\s+4294967295\]/.test(line))).toEqual([]);
      // Seen from the host, PID 1 runs as the sandbox's root's host uid, never as host root.
      const marker = uniqueSleep(60);
      const running = await sandbox.runCommand({ cmd: marker[0]!, args: marker.slice(1), detached: true });
      const holder = holderOf(await hostPidOf(marker));
      const uids = hostUids(holder);
      expect(uids[0]).toBeGreaterThan(0);
      expect(new Set(uids).size).toBe(1);
      await running.kill();
    } finally {
      await sandbox.delete();
    }
  });

  it("PID 1 holds only /dev/null and its user namespace, and a program only its three streams", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    try {
      const init = await sh(sandbox, 'cd /proc/1/fd && for f in *; do echo "$f $(readlink $f)"; done', true);
      expect(init.out.replace(/user:\[\d+\]/, "user:[n]")).toBe("0 /dev/null\n1 /dev/null\n2 /dev/null\n9 user:[n]\n");
      for (const sudo of [false, true]) {
        // The shell's own descriptors, listed by a child with no pipeline beside it: in `ls … | paste` the shell
        // still holds the pipe's ends for a moment after forking, and a loaded machine shows them (3 and 4). The
        // second command keeps bash from exec'ing ls in its own place (ls would list its directory's descriptor).
        const own = await sh(sandbox, "ls /proc/$$/fd; true", sudo);
        expect(own.out.trim().split(/\s+/)).toEqual(["0", "1", "2"]);
      }
    } finally {
      await sandbox.delete();
    }
  });
});
