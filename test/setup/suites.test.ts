// The split behind `npm run test:fast`: which spec files need a real OpenClaw gateway, read from their text.
import { describe, expect, it } from "vitest";
import { realGatewaySpecFiles, realGatewaySpecs, specFiles } from "./suites.js";

/** The real-gateway spec files on 2026-12 (test/setup/sequencer.ts times most of them). */
const KNOWN_REAL_GATEWAY = [
  ...[
    "cli",
    "codex-remote-exec",
    "embedded",
    "enrollment",
    "images-warm",
    "images-warm-newest",
    "plugin",
    "ready-workers",
    "scheduled-wake",
    "suspend-host",
    "suspend-notify",
    "suspend-turns",
    "suspend-workers",
    "suspend",
    "versions",
    "versions-enrollment",
    "worker-cap",
    "worker-turn",
  ].map((name) => `test/gateway/${name}.test.ts`),
  "test/main-job.test.ts",
  "test/bench.test.ts",
];

describe("the repository's spec files", () => {
  const all = specFiles();
  const real = realGatewaySpecFiles();

  it("are those of vitest.config.ts's include, repository-relative", () => {
    expect(all.length).toBeGreaterThan(100);
    expect(all).toContain("test/setup/suites.test.ts");
    expect(all.every((file) => /^test\/.+\.test\.ts$/.test(file))).toBe(true);
  });

  it("that start a real gateway are the known ones, and scratch specs at most besides", () => {
    const present = KNOWN_REAL_GATEWAY.filter((file) => all.includes(file));
    expect(present.length).toBe(KNOWN_REAL_GATEWAY.length);
    expect(real).toEqual(expect.arrayContaining(present));
    expect(real.filter((file) => !KNOWN_REAL_GATEWAY.includes(file) && !file.startsWith("test/scratch/"))).toEqual([]);
  });

  it("leave out the emulator, devcontainer and setup specs and the gateway specs of helpers only", () => {
    const fast = all.filter((file) => !real.includes(file));
    for (const dir of ["emulator", "devcontainer", "setup", "provider", "conformance"]) {
      const inDir = all.filter((file) => file.startsWith(`test/${dir}/`));
      expect(inDir.length, dir).toBeGreaterThan(0);
      expect(fast).toEqual(expect.arrayContaining(inDir));
    }
    // harness.test.ts imports freePort and parseCliJson from harness.ts, not the harness.
    expect(fast).toEqual(
      expect.arrayContaining(["test/gateway/harness.test.ts", "test/gateway/processes.test.ts", "test/demo.test.ts"]),
    );
  });
});

describe("a spec file's text", () => {
  const classify = (files: Record<string, string>) => realGatewaySpecs(new Map(Object.entries(files)));

  it("starts a gateway when it imports a starter by value, on one line or several, from wherever", () => {
    expect(
      classify({
        "test/gateway/a.test.ts": 'import { GatewayHarness, waitFor } from "./harness.js";\n',
        "test/scratch/b.test.ts":
          'import { it } from "vitest";\nimport {\n  type X,\n  WorkerGateway,\n} from "../gateway/worker-gateway.js";\n',
        "test/c.test.ts": 'import { type MainJob, startMainJob } from "../src/main-job/run.js";\n',
        "test/gateway/d.test.ts": 'import * as harness from "./gateway-harness.js";\n',
      }),
    ).toEqual(["test/c.test.ts", "test/gateway/a.test.ts", "test/gateway/d.test.ts", "test/scratch/b.test.ts"]);
  });

  it("does not for types, helpers of the harness module, another harness or a commented import", () => {
    expect(
      classify({
        "test/gateway/a.test.ts": 'import { freePort, parseCliJson, REPO_ROOT } from "./harness.js";\n',
        "test/gateway/b.test.ts": 'import type { GatewayHarness } from "./gateway-harness.js";\n',
        "test/gateway/c.test.ts": 'import { type WorkerGateway, PROFILE } from "./worker-gateway.js";\n',
        "test/emulator/d.test.ts":
          'import { connect, useEmulator } from "./harness.js";\nimport * as h from "./harness.js";\n',
        "test/gateway/e.test.ts":
          '// import { GatewayHarness } from "./harness.js";\n/*\n * await import("./harness.js")\n */\n',
        "test/f.test.ts": "// runs like bench/run.mjs, without a gateway\n",
      }),
    ).toEqual([]);
  });

  // Spelt in pieces: the literal itself in this file's text would make this spec one that runs the bench.
  const benchEntry = ["bench", "run.mjs"].join("/");

  it("starts one when it runs the bench", () => {
    expect(
      classify({ "test/bench.test.ts": `await run(process.execPath, ["${benchEntry}"], { cwd: REPO_ROOT });\n` }),
    ).toEqual(["test/bench.test.ts"]);
  });

  it("starts one when it imports a spec file that does, through any chain, and a cycle ends", () => {
    expect(
      classify({
        "test/gateway/enrollment.test.ts": 'import { GatewayHarness } from "./harness.js";\n',
        "test/gateway/versions-enrollment.test.ts": 'useVersion("x");\nawait import("./enrollment.test.js");\n',
        "test/other/again.test.ts": 'import "../gateway/versions-enrollment.test.js";\n',
        "test/a.test.ts": 'import "./b.test.js";\n',
        "test/b.test.ts": 'import "./a.test.js";\n',
        "test/c.test.ts": 'await import("./missing.test.js");\n',
      }),
    ).toEqual([
      "test/gateway/enrollment.test.ts",
      "test/gateway/versions-enrollment.test.ts",
      "test/other/again.test.ts",
    ]);
  });

  it("starts one when a helper module it imports does, however deep; a helper alone is no spec", () => {
    expect(
      classify({
        "test/gateway/images-warm.ts": 'import { PROFILE, WorkerGateway } from "./worker-gateway.js";\n',
        "test/gateway/warm-more.ts": 'import { defineSpec } from "./images-warm.js";\n',
        "test/gateway/images-warm.test.ts": 'import { defineSpec } from "./warm-more.js";\ndefineSpec("x");\n',
        "test/gateway/pure.ts": 'import { parseCliJson } from "./cli-output.js";\n',
        "test/gateway/pure.test.ts": 'import { x } from "./pure.js";\n',
      }),
    ).toEqual(["test/gateway/images-warm.test.ts"]);
  });
});
