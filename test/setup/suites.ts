// Which spec files need a real OpenClaw gateway, decided by reading them, so that `npm run test:fast` (the inner
// loop: unit, emulator, conformance and packaging specs) leaves them out without a hand-kept list. vitest.config.ts
// excludes what `realGatewaySpecFiles` returns when VSB_TEST_FAST is set; `npm test` runs everything.
//
// A spec file (test/**/*.test.ts) needs a real gateway when it
//   - imports a value that starts one: `GatewayHarness` (test/gateway/harness.ts, gateway-harness.ts),
//     `WorkerGateway` (test/gateway/worker-gateway.ts) or `startMainJob` (src/main-job/run.ts), by name in a
//     static import (`import type` and `type` specifiers do not count: they start nothing), or imports one of those
//     harness modules whole (`import * as`, a default import, or `import(…)`);
//   - runs the bench (a string naming `bench/run.mjs`: its short bench measures memory inside a real gateway);
//   - or imports another spec file that needs one (test/gateway/versions-enrollment.test.ts re-runs
//     enrollment.test.ts).
// Helpers only (test/gateway/harness.test.ts imports `freePort` and `parseCliJson` from harness.ts) do not count.
// A new way of starting a gateway (a helper that does it on a spec's behalf) belongs in STARTERS below.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Values whose import means the spec starts a real gateway. */
export const STARTERS: readonly string[] = ["GatewayHarness", "WorkerGateway", "startMainJob"];
/** Modules (repository-relative) that a spec importing whole (namespace, default, dynamic) may start one from. */
const HARNESS_MODULES: readonly string[] = [
  "test/gateway/harness.ts",
  "test/gateway/gateway-harness.ts",
  "test/gateway/worker-gateway.ts",
];
/** A string literal naming the bench's entry point. */
const RUNS_BENCH = /["'`](?:[^"'`\n]*\/)?bench\/run\.mjs["'`]/;

/** A static import: its clause (what it binds; empty for `import "x"`) and its module specifier. */
const STATIC_IMPORT = /(?:^|[;\n])[ \t]*import\s+(?:([^;"'`]*?)\s*from\s*)?["']([^"'\n]+)["']/g;
/** A dynamic import of a literal specifier. */
const DYNAMIC_IMPORT = /\bimport\(\s*["'`]([^"'`\n]+)["'`]\s*\)/g;

interface Import {
  specifier: string;
  /** Value bindings by their exported name; "*" for a namespace or dynamic import, "default" for a default one. */
  names: string[];
}

/** The text without whole-line comments (`// …`, and the lines of a `/* … *\/` block that start with `*`). */
function withoutComments(text: string): string {
  return text
    .split("\n")
    .filter((line) => !/^\s*(\/\/|\/\*|\*)/.test(line))
    .join("\n");
}

/** What an import clause binds as values: `{ a, type B, c as d }`, `x`, `* as ns`, `x, { a }`; none for `type …`. */
function valueNames(clause: string): string[] {
  const trimmed = clause.trim();
  if (trimmed === "" || /^type\b(?!\s*,)/.test(trimmed)) return [];
  const names: string[] = [];
  const braces = trimmed.match(/\{([^}]*)\}/);
  for (const part of braces?.[1]?.split(",") ?? []) {
    const specifier = part.trim();
    if (specifier === "" || /^type\s/.test(specifier)) continue;
    names.push(specifier.split(/\s+as\s+/)[0]!.trim());
  }
  const outside = trimmed.replace(/\{[^}]*\}/, "").trim();
  if (/\*\s*as\s+\w+/.test(outside)) names.push("*");
  if (/^[A-Za-z_$][\w$]*\s*(,|$)/.test(outside)) names.push("default");
  return names;
}

function importsOf(text: string): Import[] {
  const code = withoutComments(text);
  const found: Import[] = [];
  for (const m of code.matchAll(STATIC_IMPORT)) found.push({ specifier: m[2]!, names: valueNames(m[1] ?? "") });
  for (const m of code.matchAll(DYNAMIC_IMPORT)) found.push({ specifier: m[1]!, names: ["*"] });
  return found;
}

/** The repository-relative TypeScript file a relative specifier of `from` names (`./x.js` is `./x.ts`). */
function resolveRelative(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const joined = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  return joined.replace(/\.js$/, ".ts").replace(/\.mjs$/, ".mts");
}

/** Whether `file`'s own text (not what it imports from other specs) starts a real gateway. */
function startsGatewayItself(file: string, text: string): boolean {
  if (RUNS_BENCH.test(withoutComments(text))) return true;
  return importsOf(text).some(({ specifier, names }) => {
    if (names.some((name) => STARTERS.includes(name))) return true;
    const target = resolveRelative(file, specifier);
    return (
      target !== undefined && HARNESS_MODULES.includes(target) && (names.includes("*") || names.includes("default"))
    );
  });
}

/**
 * The spec files among `specs` (repository-relative path → text of every test module, spec or helper) that need a
 * real gateway, sorted: through any chain of relative imports (a spec calling a helper that starts one). An
 * imported module missing from `specs` counts as not needing one.
 */
export function realGatewaySpecs(specs: ReadonlyMap<string, string>): string[] {
  const verdicts = new Map<string, boolean>();
  const needsGateway = (file: string, visiting: Set<string>): boolean => {
    const known = verdicts.get(file);
    if (known !== undefined) return known;
    const text = specs.get(file);
    if (text === undefined || visiting.has(file)) return false;
    visiting.add(file);
    const verdict =
      startsGatewayItself(file, text) ||
      importsOf(text).some(({ specifier }) => {
        const target = resolveRelative(file, specifier);
        return target !== undefined && needsGateway(target, visiting);
      });
    visiting.delete(file);
    verdicts.set(file, verdict);
    return verdict;
  };
  return [...specs.keys()].filter((file) => file.endsWith(".test.ts") && needsGateway(file, new Set())).sort();
}

/** Every spec file vitest.config.ts includes (test/**\/*.test.ts), repository-relative with `/`, sorted. */
export function specFiles(root = REPO_ROOT): string[] {
  return readdirSync(path.join(root, "test"), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".test.ts"))
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join("/"))
    .filter((file) => !file.split("/").includes("node_modules"))
    .sort();
}

/** Every TypeScript module under test/ (specs and helpers), repository-relative with `/`, sorted. */
function testModules(root: string): string[] {
  return readdirSync(path.join(root, "test"), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts"))
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)).split(path.sep).join("/"))
    .filter((file) => !file.split("/").includes("node_modules"))
    .sort();
}

/** The spec files of the repository at `root` that need a real gateway (repository-relative, sorted). */
export function realGatewaySpecFiles(root = REPO_ROOT): string[] {
  const modules = new Map(testModules(root).map((file) => [file, readFileSync(path.join(root, file), "utf8")]));
  return realGatewaySpecs(modules);
}
