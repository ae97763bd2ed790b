// Which cgroup layout the emulator limits sandboxes with, decided from the texts the kernel shows a
// process (/proc/self/cgroup, /proc/self/mountinfo, the own group's cgroup.subtree_control), for every
// machine shape: v2 only, hybrid (v1 controllers beside an empty unified tree), and none.
import { existsSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  chooseCgroupLayout,
  limitSettings,
  MEMORY_BYTES_PER_VCPU,
  SANDBOX_PIDS_MAX,
} from "../../src/emulator/cgroup-layout.js";
import { SandboxCgroups } from "../../src/emulator/cgroups.js";

/** A reader over fixture files; anything else is missing. */
const files = (texts: Record<string, string>) => (file: string) => texts[file];

const SYSTEMD_V2_MOUNTS = `22 28 0:21 / /sys rw,nosuid,nodev,noexec,relatime shared:7 - sysfs sysfs rw
25 22 0:23 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate,memory_recursiveprot
28 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw
`;
const OWN_V2 = "/user.slice/user-1000.slice/user@1000.service/app.slice/gateway.service";
/** A systemd machine (v2 only) whose gateway service's group delegates `subtreeControl` to its children. */
const systemdV2 = (subtreeControl: string) =>
  files({
    "/proc/self/cgroup": `0::${OWN_V2}\n`,
    "/proc/self/mountinfo": SYSTEMD_V2_MOUNTS,
    [`/sys/fs/cgroup${OWN_V2}/cgroup.subtree_control`]: subtreeControl,
  });

// This machine's shape: v1 controllers, each its own hierarchy, and a unified tree without them.
const HYBRID_CGROUP = `9:name=systemd:/
8:pids:/
7:blkio:/
4:memory:/process_api/afbdca632e378b9fbc5c38f7f08b1433
3:cpuset:/
2:cpuacct:/
1:cpu:/
0::/
`;
const HYBRID_MOUNTS = `31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755
32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu
33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct
35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory
39 31 0:36 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
40 31 0:37 / /sys/fs/cgroup/systemd rw,relatime - cgroup cgroup rw,name=systemd
41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
`;

describe("choosing the cgroup layout", () => {
  it("v2 only: the emulator's own group, when it delegates memory, pids and cpu to its children", () => {
    const layout = chooseCgroupLayout(systemdV2("cpu io memory pids\n"));
    expect(layout).toEqual({ kind: "v2", dir: `/sys/fs/cgroup${OWN_V2}` });
  });

  it("v2 only without delegation: no limits, naming the controllers the group does not delegate", () => {
    const layout = chooseCgroupLayout(systemdV2("memory\n"));
    expect(layout.kind).toBe("none");
    expect(layout.kind === "none" && layout.reason).toMatch(/does not delegate pids, cpu .*gateway\.service/);
    expect(layout.kind === "none" && layout.reason).toMatch(/no writable cgroup v1 hierarchy for memory, pids, cpu/);
  });

  it("v2 in a container's cgroup namespace: the group is found through the mount's root", () => {
    const layout = chooseCgroupLayout(
      files({
        "/proc/self/cgroup": "0::/\n",
        "/proc/self/mountinfo":
          "600 590 0:26 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime - cgroup2 cgroup rw,nsdelegate\n",
        "/sys/fs/cgroup/cgroup.subtree_control": "cpuset cpu io memory hugetlb pids rdma misc\n",
      }),
    );
    expect(layout).toEqual({ kind: "v2", dir: "/sys/fs/cgroup" });
  });

  it("hybrid: the v1 memory, pids and cpu hierarchies at the emulator's own group in each", () => {
    const layout = chooseCgroupLayout(
      files({
        "/proc/self/cgroup": HYBRID_CGROUP,
        "/proc/self/mountinfo": HYBRID_MOUNTS,
        "/sys/fs/cgroup/unified/cgroup.subtree_control": "\n",
      }),
    );
    expect(layout).toEqual({
      kind: "v1",
      dirs: {
        memory: "/sys/fs/cgroup/memory/process_api/afbdca632e378b9fbc5c38f7f08b1433",
        pids: "/sys/fs/cgroup/pids",
        cpu: "/sys/fs/cgroup/cpu",
      },
    });
  });

  it("v1 with cpu co-mounted beside cpuacct, an escaped mount point, and a container's mount root", () => {
    const layout = chooseCgroupLayout(
      files({
        "/proc/self/cgroup": "5:pids:/docker/abc/app\n4:memory:/docker/abc/app\n3:cpu,cpuacct:/docker/abc/app\n",
        "/proc/self/mountinfo": [
          "40 31 0:36 /docker/abc /cg/pids rw - cgroup cgroup rw,pids",
          "41 31 0:37 /docker/abc /cg/mem\\040ory rw - cgroup cgroup rw,memory",
          "42 31 0:38 /docker/abc /cg/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct",
        ].join("\n"),
      }),
    );
    expect(layout).toEqual({
      kind: "v1",
      dirs: { pids: "/cg/pids/app", memory: "/cg/mem ory/app", cpu: "/cg/cpu,cpuacct/app" },
    });
  });

  it("hybrid with a read-only or missing v1 controller: no limits, naming it", () => {
    const layout = chooseCgroupLayout(
      files({
        "/proc/self/cgroup": HYBRID_CGROUP,
        "/proc/self/mountinfo": HYBRID_MOUNTS.replace(
          "/sys/fs/cgroup/pids rw,relatime",
          "/sys/fs/cgroup/pids ro,relatime",
        ).replace(/.*\/sys\/fs\/cgroup\/cpu rw.*\n/, ""),
      }),
    );
    expect(layout.kind).toBe("none");
    expect(layout.kind === "none" && layout.reason).toMatch(/no writable cgroup v1 hierarchy for pids, cpu$/);
  });

  it("none: no cgroup filesystem mounted at all", () => {
    const layout = chooseCgroupLayout(
      files({ "/proc/self/cgroup": "0::/\n", "/proc/self/mountinfo": SYSTEMD_V2_MOUNTS.split("\n")[0]! }),
    );
    expect(layout).toEqual({
      kind: "none",
      reason: "no writable cgroup v2 (unified) hierarchy; no writable cgroup v1 hierarchy for memory, pids, cpu",
    });
  });
});

describe("limits of a sandbox", () => {
  it("gives 2 GB of memory and no swap per vCPU, vcpus cores of CPU time, and the process limit", () => {
    const v1 = Object.fromEntries(limitSettings("v1", 4).map((s) => [s.file, s.value]));
    expect(v1).toEqual({
      "memory.limit_in_bytes": String(4 * MEMORY_BYTES_PER_VCPU),
      "memory.memsw.limit_in_bytes": String(4 * MEMORY_BYTES_PER_VCPU),
      "memory.oom_control": "0",
      "pids.max": String(SANDBOX_PIDS_MAX),
      "cpu.cfs_period_us": "100000",
      "cpu.cfs_quota_us": "400000",
    });
    const v2 = Object.fromEntries(limitSettings("v2", 1).map((s) => [s.file, s.value]));
    expect(v2).toEqual({
      "memory.max": String(2 * 1024 ** 3),
      "memory.swap.max": "0",
      "memory.oom.group": "0",
      "pids.max": String(SANDBOX_PIDS_MAX),
      "cpu.max": "100000 100000",
    });
  });

  it("v1 sets the memory limit before memory+swap, which may never be below it", () => {
    const order = limitSettings("v1", 2).map((s) => s.file);
    expect(order.indexOf("memory.limit_in_bytes")).toBeLessThan(order.indexOf("memory.memsw.limit_in_bytes"));
  });
});

describe("an emulator's sandbox groups", () => {
  it("without usable cgroups: warns once, at start, with the reason, and runs sandboxes unlimited", () => {
    const warnings: string[] = [];
    const cgroups = new SandboxCgroups({
      read: files({ "/proc/self/cgroup": "0::/\n", "/proc/self/mountinfo": "" }),
      warn: (m) => warnings.push(m),
    });
    expect(cgroups.create("sbx_a", 1)).toEqual([]);
    expect(cgroups.create("sbx_b", 2)).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/WITHOUT CPU, memory or process limits \(no writable cgroup v2/);
    expect(cgroups.enforced).toBe(false);
  });

  it("with hierarchies it cannot create a group in: warns once at start, naming where", () => {
    const warnings: string[] = [];
    const cgroups = new SandboxCgroups({
      read: files({
        "/proc/self/cgroup": "3:pids:/\n2:memory:/\n1:cpu:/\n",
        "/proc/self/mountinfo": ["pids", "memory", "cpu"]
          .map((c, i) => `${40 + i} 31 0:3${i} / /proc/no-such-${c} rw - cgroup cgroup rw,${c}`)
          .join("\n"),
      }),
      warn: (m) => warnings.push(m),
    });
    expect(cgroups.create("sbx_a", 1)).toEqual([]);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/cannot create a group under \/proc\/no-such-memory/);
  });

  it("on this machine (writable v1 controllers) limits are enforced and nothing is said", async () => {
    const warnings: string[] = [];
    const cgroups = new SandboxCgroups({ warn: (m) => warnings.push(m) });
    expect(warnings).toEqual([]);
    const procs = cgroups.create("sbx_spec", 1);
    try {
      expect(procs.length).toBeGreaterThan(0);
      expect(procs.filter((p) => existsSync(p))).toEqual(procs);
    } finally {
      await cgroups.remove("sbx_spec");
    }
    // The session's group goes with its session; the emulator's parent stays for the next one, until close.
    const groups = procs.map((p) => path.dirname(p));
    const parents = groups.map((g) => path.dirname(g));
    expect(groups.filter((d) => existsSync(d))).toEqual([]);
    expect(parents.filter((d) => existsSync(d))).toEqual(parents);
    await cgroups.close();
    expect(parents.filter((d) => existsSync(d))).toEqual([]);
  });
});
