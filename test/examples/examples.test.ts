// The examples build against the published package, not the source tree: every file under examples/ imports only
// `openclaw-vercel-sandbox` entries (package.json `exports`), its own files and Node's built-ins; each example is
// installed in a temp dir from the packed tarball and type-checked and compiled there with the repo's TypeScript,
// and the host example runs and answers over HTTP without reaching a gateway or Vercel.
// Installing is cheap on purpose: the tarball is unpacked into the example's node_modules and the package's
// dependencies (and the example's own, e.g. typescript) are links into the repo's node_modules, never an npm install.
import type { ChildProcess } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { cp, mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { signNotification } from "../../src/protocol/index.js";
import { describeFailure } from "../gateway/cli-output.js";
import { REPO_ROOT } from "../gateway/openclaw.js";
import { packPlugin } from "../gateway/plugin-package.js";
import { ChildProcesses, type RunOptions } from "../gateway/processes.js";

const EXAMPLES = path.join(REPO_ROOT, "examples");
const PACKAGE = "openclaw-vercel-sandbox";
const TSC = path.join(REPO_ROOT, "node_modules", "typescript", "bin", "tsc");
/** The import the host example had when it ran the source tree: in an installed copy it resolves to nothing. */
const SOURCE_TREE_IMPORT = 'export { FileWakeStore } from "../../src/host/index.js";\n';

const exampleNames = readdirSync(EXAMPLES, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

/** Every source file of an example (what a user copies), relative to examples/. */
function sourcesOf(name: string): string[] {
  return readdirSync(path.join(EXAMPLES, name), { recursive: true, encoding: "utf8" })
    .filter((file) => /\.(ts|mts|js|mjs)$/.test(file) && !/(^|\/)(node_modules|dist)\//.test(file))
    .map((file) => path.join(name, file));
}

/** The module specifiers a source imports or re-exports (static and literal dynamic). */
function specifiersOf(text: string): string[] {
  return [
    ...text.matchAll(/^\s*(?:import|export)\s[^;]*?\bfrom\s*["']([^"']+)["']/gms),
    ...text.matchAll(/^\s*import\s*["']([^"']+)["']/gm),
    ...text.matchAll(/\bimport\(\s*["']([^"']+)["']\s*\)/g),
  ].map((match) => match[1]!);
}

/** Why `specifier` in examples/`file` is not something a copied example can import, or undefined when it can. */
function refused(file: string, specifier: string, exported: readonly string[]): string | undefined {
  if (specifier.startsWith("node:")) return undefined;
  if (specifier.startsWith(".")) {
    const example = file.split("/")[0]!;
    const target = path.normalize(path.join(path.dirname(file), specifier));
    return target.startsWith(`${example}/`) ? undefined : `${file} imports "${specifier}", outside its example`;
  }
  if (specifier === PACKAGE || exported.some((subpath) => specifier === `${PACKAGE}/${subpath.slice(2)}`)) {
    return undefined;
  }
  return `${file} imports "${specifier}", which is not a ${PACKAGE} entry, its own file or a node: built-in`;
}

const rootPackage = JSON.parse(readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")) as {
  exports: Record<string, unknown>;
};
const EXPORTED = Object.keys(rootPackage.exports).filter((subpath) => subpath !== "./package.json");

describe("what the examples import", () => {
  it("is only the package's entries, their own files and Node's built-ins", () => {
    const files = exampleNames.flatMap(sourcesOf);
    expect(files).toContain("host/server.ts");
    const found = files.flatMap((file) =>
      specifiersOf(readFileSync(path.join(EXAMPLES, file), "utf8")).map((specifier) => ({ file, specifier })),
    );
    expect(found).toContainEqual({ file: "host/server.ts", specifier: `${PACKAGE}/reference-host` });
    expect(found.map(({ file, specifier }) => refused(file, specifier, EXPORTED)).filter(Boolean)).toEqual([]);
  });

  it("a source-tree import, a private package or another example's file is refused", () => {
    expect(refused("host/server.ts", "../../src/host/index.js", EXPORTED)).toMatch(/outside its example/);
    expect(refused("host/server.ts", "../other/x.js", EXPORTED)).toMatch(/outside its example/);
    expect(refused("host/server.ts", `${PACKAGE}/private`, EXPORTED)).toMatch(/not a openclaw-vercel-sandbox/);
    expect(refused("host/server.ts", "undici", EXPORTED)).toMatch(/not a/);
    expect(refused("host/server.ts", "./host.js", EXPORTED)).toBeUndefined();
    expect(refused("host/server.ts", `${PACKAGE}/host`, EXPORTED)).toBeUndefined();
    expect(specifiersOf('import { a,\n b } from "x";\nexport * from "./y.js";\nawait import("z");')).toEqual([
      "x",
      "./y.js",
      "z",
    ]);
  });
});

describe("the examples installed from the packed plugin", () => {
  const processes = new ChildProcesses((text) => text);
  const runner = {
    run: (command: string, args: string[], options: RunOptions) =>
      processes.run(command, args, {
        timeoutMs: options.timeoutMs,
        cwd: options.cwd ?? REPO_ROOT,
        env: { ...process.env, ...options.env },
      }),
    describeFailure,
  };
  let dir: string;
  let tarball: string;
  /** Examples installed and compiled by the spec above, by name. */
  const compiled = new Map<string, string>();

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "vsb-examples-"));
    // Builds first when dist/ is stale (ensureBuilt), as the packaging specs do.
    tarball = await packPlugin(runner, path.join(dir, "pack"), REPO_ROOT, 120_000);
  }, 300_000);
  afterAll(async () => {
    await processes.terminateAll();
    await rm(dir, { recursive: true, force: true });
  });

  /** The example copied to `<dir>/<name>` with the tarball unpacked into its node_modules and its dependencies linked. */
  async function install(name: string): Promise<string> {
    const target = path.join(dir, name);
    await cp(path.join(EXAMPLES, name), target, {
      recursive: true,
      filter: (source) => !/(^|\/)(node_modules|dist)$/.test(source),
    });
    const installed = path.join(target, "node_modules", PACKAGE);
    await mkdir(installed, { recursive: true });
    const untar = await runner.run("tar", ["-xzf", tarball, "-C", installed, "--strip-components=1"], {
      timeoutMs: 30_000,
    });
    expect(untar.code, describeFailure("tar", untar)).toBe(0);
    const manifest = (file: string) =>
      JSON.parse(readFileSync(file, "utf8")) as Record<string, Record<string, string> | undefined>;
    const own = manifest(path.join(target, "package.json"));
    expect(own.dependencies?.[PACKAGE], `examples/${name}/package.json depends on ${PACKAGE}`).toBeDefined();
    const needed = new Set([
      ...Object.keys(manifest(path.join(installed, "package.json")).dependencies ?? {}),
      ...Object.keys(own.dependencies ?? {}),
      ...Object.keys(own.devDependencies ?? {}),
    ]);
    needed.delete(PACKAGE);
    for (const dependency of needed) {
      const link = path.join(target, "node_modules", dependency);
      await mkdir(path.dirname(link), { recursive: true });
      await symlink(path.join(REPO_ROOT, "node_modules", dependency), link);
    }
    return target;
  }

  it.each(exampleNames)(
    "%s type-checks and compiles against the package, and a source-tree import does not",
    async (name) => {
      const target = await install(name);
      // A file as the example's server.ts was before it moved to the package: tsc must report it, and only it.
      await writeFile(path.join(target, "from-source.ts"), SOURCE_TREE_IMPORT);
      const tsc = await runner.run(process.execPath, [TSC, "-p", "tsconfig.json", "--listFiles", "--pretty", "false"], {
        timeoutMs: 60_000,
        cwd: target,
      });
      const lines = tsc.stdout.split("\n").filter(Boolean);
      const errors = lines.filter((line) => /error TS\d+/.test(line));
      expect(errors, describeFailure("tsc", tsc)).toEqual([
        expect.stringMatching(
          /^from-source\.ts\(1,\d+\): error TS2307: Cannot find module '\.\.\/\.\.\/src\/host\/index\.js'/,
        ),
      ]);
      expect(tsc.code).toBe(2); // errors reported, output still emitted
      const checked = lines.filter((line) => line.startsWith("/"));
      // The example's own files, and the package's types from the installed tarball, never the repo's sources.
      for (const file of sourcesOf(name).filter((f) => f.endsWith(".ts"))) {
        expect(checked).toContain(path.join(dir, file));
      }
      expect(checked).toContain(path.join(target, "node_modules", PACKAGE, "dist", "reference-host", "index.d.ts"));
      expect(checked.filter((file) => file.startsWith(path.join(REPO_ROOT, "src")))).toEqual([]);
      expect(checked.filter((file) => file.startsWith(path.join(REPO_ROOT, "dist")))).toEqual([]);
      compiled.set(name, target);
    },
    120_000,
  );

  it("the host example runs from its compiled output and answers without a gateway or Vercel", async () => {
    const target = compiled.get("host");
    if (!target)
      throw new Error("the host example was not installed and compiled (the spec above failed or did not run)");
    const secret = "example-notify-secret";
    const env = {
      PATH: process.env.PATH,
      GATEWAY_URL: "http://127.0.0.1:9",
      GATEWAY_TOKEN: "example-gateway-token",
      NOTIFY_SECRET: secret,
      MESSAGE_SECRET: "example-message-secret",
      VERCEL_TOKEN: "example-vercel-token",
      VERCEL_TEAM_ID: "team_example",
      VERCEL_PROJECT_ID: "prj_example",
      VM1_NAME: "example-vm1",
      GATEWAY_START_COMMAND: "true",
      HOST: "127.0.0.1",
      PORT: "0",
    };
    const server = processes.spawn(process.execPath, ["dist/server.js"], { cwd: target, env });
    const output = collect(server);
    const origin = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no listening line:\n${output.text()}`)), 20_000);
      server.once("exit", (code) => reject(new Error(`the host exited ${code}:\n${output.text()}`)));
      output.onLine((line) => {
        const match = line.match(/listening on (http:\/\/\S+)/);
        if (match) {
          clearTimeout(timer);
          resolve(match[1]!);
        }
      });
    });
    const post = (route: string, body: string, headers: Record<string, string> = {}) =>
      fetch(new URL(route, origin), {
        method: "POST",
        body,
        headers: { "content-type": "application/json", ...headers },
      });
    const runAtMs = Date.now() + 24 * 3_600_000;
    const wake = (revision: number) =>
      JSON.stringify({
        version: 1,
        kind: "wake",
        instanceId: "example-gateway",
        sentAtMs: Date.now(),
        leadMs: 120_000,
        snapshot: { revision, wakes: [{ jobId: "nightly", runAtMs }] },
      });

    expect((await fetch(new URL("/notify", origin))).status).toBe(405);
    const unsigned = wake(1);
    expect((await post("/notify", unsigned)).status).toBe(401);
    const first = wake(2);
    const accepted = await post("/notify", first, signNotification(secret, first));
    expect(await accepted.json()).toEqual({ accepted: true, revision: 2 });
    const stale = wake(2);
    expect((await post("/notify", stale, signNotification(secret, stale))).status).toBe(409);
    expect((await post("/message", "hello")).status).toBe(401);
    expect((await post("/notify", "x".repeat(70 * 1024))).status).toBe(413);
    await processes.terminate(server);
    // The accepted snapshot armed the wake timer: its due time minus the gateway's lead and the host's own 60 s.
    expect(output.text()).toContain(
      `for job nightly due ${new Date(runAtMs).toISOString()}: timer set for ${new Date(runAtMs - 180_000).toISOString()}`,
    );

    // Without a message secret it refuses to bind beyond loopback.
    const open = await runner.run(process.execPath, ["dist/server.js"], {
      timeoutMs: 20_000,
      cwd: target,
      env: { ...env, MESSAGE_SECRET: undefined, HOST: "0.0.0.0" },
    });
    expect(open.code).toBe(1);
    expect(open.stderr).toMatch(/refusing to serve \/message without a secret on 0\.0\.0\.0/);
  }, 60_000);
});

/** A child's stdout and stderr as text, with a callback per stdout line. */
function collect(child: ChildProcess) {
  let text = "";
  let pending = "";
  const listeners: Array<(line: string) => void> = [];
  child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
    text += chunk;
    pending += chunk;
    const lines = pending.split("\n");
    pending = lines.pop() ?? "";
    for (const line of lines) for (const listener of listeners) listener(line);
  });
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    text += chunk;
  });
  return { text: () => text, onLine: (listener: (line: string) => void) => listeners.push(listener) };
}
