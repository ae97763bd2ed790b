// Nothing the host runs as root may be reachable from a sandbox, and nothing a client or a sandbox's settings say
// may choose what the host runs (issue 42, items 1 and 2). (a) Sandbox root runs an attacker's loop: it seizes
// (PTRACE_SEIZE) each new pid of its PID namespace as soon as `ns_last_pid` names it, stops it and reads its ids;
// a process whose host uid is outside the sandbox's range shows as the overflow uid 65534 there. While the loop
// runs, interactive shells open: none of their processes (nor any other) may be caught with such an id. (b) The
// start frame's env and the sandbox's own env name a PATH whose first directory holds a fake `nsenter`, `sh`,
// `python3` and `setpriv` of the host's, and an LD_PRELOAD library of the host's: none of them ever runs, and the
// shell inside sees both values as asked (the env applies inside the sandbox only).
import { execFileSync } from "node:child_process";
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { connect, SDKS, sh, useEmulator } from "./harness.js";
import { attach } from "./interactive-client.js";

const emulator = useEmulator();
const { Sandbox } = SDKS[1]![1];

// Sandbox root's probe: until the file it names exists (at most `seconds`), every pid its PID namespace hands out is seized at once, stopped, and its
// `Uid:` line read (the ids as the sandbox sees them); one line per pid whose ids include 65534 (unmapped: a
// host id outside the sandbox's range, such as the host's root). Each process is looked at once, then let go.
const PROBE_C = String.raw`#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
static char seen[1 << 22];
int main(int argc, char **argv) {
  time_t end = time(NULL) + atoi(argv[1]);
  unsigned long rounds = 0;
  int last = open("/proc/sys/kernel/ns_last_pid", O_RDONLY);
  long seized = 0;
  char buf[32], path[64], line[256];
  while (time(NULL) < end && (++rounds % 256 || access(argv[2], F_OK) != 0)) {
    ssize_t n = pread(last, buf, sizeof buf - 1, 0);
    buf[n > 0 ? n : 0] = 0;
    int top = atoi(buf);
    for (int pid = top - 1; pid <= top + 2; pid++) {
      if (pid <= 1 || pid >= (1 << 22) || seen[pid] || pid == getpid()) continue;
      if (ptrace(PTRACE_SEIZE, pid, 0, 0) != 0) continue;
      seen[pid] = 1;
      seized++;
      ptrace(PTRACE_INTERRUPT, pid, 0, 0);
      int status;
      waitpid(pid, &status, __WALL);
      snprintf(path, sizeof path, "/proc/%d/status", pid);
      FILE *f = fopen(path, "r");
      while (f && fgets(line, sizeof line, f)) {
        if (strncmp(line, "Uid:", 4) == 0 && strstr(line, "65534")) printf("caught %d %s", pid, line);
      }
      if (f) fclose(f);
      ptrace(PTRACE_DETACH, pid, 0, 0);
    }
  }
  printf("seized %ld\n", seized);
  return 0;
}
`;

const planted: string[] = [];
afterAll(() => {
  for (const dir of planted) rmSync(dir, { recursive: true, force: true });
});

/** A host dir of fakes (nsenter, sh, python3, setpriv, and an LD_PRELOAD library) that leave a marker if run. */
function plantFakes(): { dir: string; marker: string; preload: string } {
  const dir = mkdtempSync(path.join(tmpdir(), "vsb-evil-"));
  planted.push(dir);
  const marker = path.join(dir, "ran");
  for (const name of ["nsenter", "sh", "python3", "setpriv", "setsid", "unshare"]) {
    writeFileSync(path.join(dir, name), `#!/bin/sh\necho "${name} $*" >> ${marker}\nexit 99\n`);
    chmodSync(path.join(dir, name), 0o755);
  }
  const source = path.join(dir, "evil.c");
  writeFileSync(
    source,
    `#include <stdio.h>\n__attribute__((constructor)) static void ran(void) {\n  FILE *f = fopen("${marker}", "a");\n  if (f) { fputs("preload\\n", f); fclose(f); }\n}\n`,
  );
  const preload = path.join(dir, "evil.so");
  execFileSync("/usr/bin/gcc", ["-shared", "-fPIC", "-o", preload, source], { env: { PATH: "/usr/bin:/bin" } });
  return { dir, marker, preload };
}

describe("host root and interactive shells", () => {
  it("no process in a sandbox is ever the host's root, not even while shells start", async () => {
    const sandbox = await Sandbox.create(connect(emulator()));
    try {
      const built = await sh(
        sandbox,
        `cat > /var/tmp/probe.c <<'EOF'\n${PROBE_C}EOF\ngcc -O2 -o /var/tmp/probe /var/tmp/probe.c`,
        true,
      );
      expect(built).toMatchObject({ code: 0, err: "" });
      const stop = "/var/tmp/probe.stop";
      const probe = await sandbox.runCommand({ cmd: "/var/tmp/probe", args: ["60", stop], sudo: true, detached: true });
      // Shells open one after another, each running a command and exiting (before the fix, the probe caught a
      // host-root process in about one start of six: twenty make a miss unlikely), then the probe is told to stop.
      await new Promise((r) => setTimeout(r, 300));
      for (let i = 0; i < 20; i++) {
        const { url, token } = await sandbox.openInteractive();
        const shell = await attach(url, token, { command: "/bin/sh", args: ["-c", `echo "sh""ell${i}"`] });
        await shell.waitFor(new RegExp(`shell${i}`));
        await shell.exit;
      }
      await sh(sandbox, `touch ${stop}`);
      const done = await probe.wait();
      const out = await done.stdout();
      // The probe saw the shells' processes (it is not blind), and none of them had a host id.
      expect(Number(/seized (\d+)/.exec(out)?.[1])).toBeGreaterThanOrEqual(20);
      expect(out.split("\n").filter((l) => l.startsWith("caught"))).toEqual([]);
    } finally {
      await sandbox.delete();
    }
  });

  it("the start frame's and the sandbox's env apply inside only: no fake tool or preload of the host's runs", async () => {
    const fake = plantFakes();
    const evilPath = `${fake.dir}:/usr/local/bin:/usr/bin:/bin`;
    for (const where of ["start frame", "sandbox"] as const) {
      const env = { PATH: evilPath, LD_PRELOAD: fake.preload };
      const sandbox = await Sandbox.create({ ...connect(emulator()), ...(where === "sandbox" ? { env } : {}) });
      try {
        const { url, token } = await sandbox.openInteractive();
        const shell = await attach(url, token, {
          command: "/bin/bash",
          args: ["-c", 'echo "path=$PATH preload=$LD_PRELOAD".'],
          env: where === "start frame" ? ["TERM=xterm", `PATH=${evilPath}`, `LD_PRELOAD=${fake.preload}`] : [],
        });
        const exit = await shell.exit;
        expect(existsSync(fake.marker) ? readFileSync(fake.marker, "utf8") : "", where).toBe("");
        expect(shell.output(), where).toContain(`path=${evilPath} preload=${fake.preload}.`);
        expect(exit, where).toBe(0);
      } finally {
        await sandbox.delete();
      }
    }
  });
});
