// Acceptance: the rooms of src/ keep their one-way arrows (docs/architecture.md draws them). The spec reads every
// import of every file in src/ (static, dynamic and re-exports) and holds it to three rules:
// - a file imports only inside src/: never a test, a bench, a script or an example;
// - an import from one room into another follows ALLOWED below (the rooms a room may stand on);
// - from outside a room, an import goes through the room's door, `<room>/index.ts` (a file directly under src/
//   is an entry point and its own door).
// A failure names the file, the import and the rule. A new room, or a new arrow, is a line in ALLOWED, placed
// so that the arrows still run one way (the table is checked for cycles too).
// Inside a room, the files' own imports run one way as well: no circle of files (static imports and
// `export … from`, type-only ones included, since a type that two files need from each other belongs in a third;
// a dynamic `import(…)` is left out, as it loads on demand and is the one deliberate late edge).
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SRC = join(ROOT, "src");

/** Which rooms each room (a folder under src/) or entry point (a file under src/) may import. */
const ALLOWED: Record<string, readonly string[]> = {
  // Below everything: they import none of our rooms.
  infra: [],
  protocol: [],
  devcontainer: [],
  settings: ["infra"],
  // The one Vercel client seam, and the emulator that stands in for Vercel.
  vercel: ["infra", "settings"],
  emulator: ["infra"],
  // The product rooms.
  preparation: ["devcontainer", "infra", "settings", "vercel"],
  provider: ["preparation", "devcontainer", "infra", "settings", "vercel"],
  suspend: ["protocol", "provider", "settings", "infra"],
  host: ["protocol", "infra"],
  "reference-host": ["host"],
  conformance: ["provider", "infra"],
  cli: ["gateway-status", "provider", "preparation", "suspend", "vercel", "settings", "infra"],
  "gateway-status": ["provider", "suspend"],
  "main-job": ["emulator", "host", "reference-host", "infra"],
  demo: ["conformance", "emulator", "provider"],
  // Entry points.
  "config.ts": [],
  "index.ts": ["cli", "config.ts", "emulator", "gateway-status", "provider", "settings", "suspend"],
  "cli.ts": ["emulator", "main-job", "demo"],
};

interface Import {
  file: string;
  specifier: string;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => join(dir, file));
}

function importsOf(file: string): Import[] {
  const source = readFileSync(file, "utf8");
  return [...source.matchAll(/(?:from|import)\s*\(?\s*["']([^"']+)["']/g)].map((match) => ({
    file: relative(ROOT, file),
    specifier: match[1]!,
  }));
}

/** The room of a path under src/: its first folder, or the file itself when it lies directly in src/. */
function roomOf(path: string): string {
  return relative(SRC, path).split("/")[0]!;
}

function isDoor(path: string): boolean {
  const parts = relative(SRC, path).split("/");
  return parts.length === 1 || (parts.length === 2 && parts[1] === "index.ts");
}

/** What breaks a rule, in words naming the import; undefined when the import keeps every rule. */
function violation({ file, specifier }: Import): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const target = resolve(dirname(join(ROOT, file)), specifier).replace(/\.js$/, ".ts");
  const where = `${file} imports "${specifier}"`;
  if (relative(SRC, target).startsWith(".."))
    return `${where}: src/ imports only src/ (found ${relative(ROOT, target)})`;
  const from = roomOf(join(ROOT, file));
  const to = roomOf(target);
  if (from === to) return undefined;
  const allowed = ALLOWED[from] ?? [];
  if (!allowed.includes(to))
    return `${where}: ${from} may not import ${to} (it may import: ${allowed.join(", ") || "none"})`;
  if (!isDoor(target)) return `${where}: ${from} reaches past the door of ${to}; import src/${to}/index.ts`;
  return undefined;
}

const files = sourceFiles(SRC);
const imports = files.flatMap(importsOf);

/** The files of its own room a file imports statically (`import … from`, `export … from`, `import "…"`). */
function sameRoomImports(file: string): string[] {
  const source = readFileSync(file, "utf8");
  const targets = [...source.matchAll(/(?:\bfrom|^\s*import)\s*["']([^"']+)["']/gm)]
    .map((match) => match[1]!)
    .filter((specifier) => specifier.startsWith("."))
    .map((specifier) => resolve(dirname(file), specifier).replace(/\.js$/, ".ts"));
  return [...new Set(targets)].filter((target) => roomOf(target) === roomOf(file));
}

/** Every circle of files in a graph of imports, each as its files (paths relative to the root) joined by arrows. */
function fileCycles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const state = new Map<string, "visiting" | "done">();
  const cycles: string[] = [];
  const visit = (file: string, path: string[]): void => {
    if (state.get(file) === "done") return;
    if (state.get(file) === "visiting") {
      const circle = [...path.slice(path.indexOf(file)), file];
      cycles.push(circle.map((entry) => relative(ROOT, entry)).join(" -> "));
      return;
    }
    state.set(file, "visiting");
    for (const next of graph.get(file) ?? []) visit(next, [...path, file]);
    state.set(file, "done");
  };
  for (const file of [...graph.keys()].sort()) visit(file, []);
  return cycles;
}

describe("room boundaries", () => {
  it("reads static, dynamic and re-export imports", () => {
    const seen = (file: string, specifier: string) =>
      imports.some((entry) => entry.file === file && entry.specifier === specifier);
    expect(seen("src/cli.ts", "./main-job/index.js")).toBe(true); // await import(…)
    expect(seen("src/host/index.ts", "./public.js")).toBe(true); // export * from …
    expect(seen("src/provider/provider.ts", "./parts.js")).toBe(true);
  });

  it("names the offending import for each rule", () => {
    expect(violation({ file: "src/preparation/x.ts", specifier: "../provider/index.js" })).toBe(
      'src/preparation/x.ts imports "../provider/index.js": preparation may not import provider (it may import: devcontainer, infra, settings, vercel)',
    );
    expect(violation({ file: "src/cli/x.ts", specifier: "../provider/ledger.js" })).toBe(
      'src/cli/x.ts imports "../provider/ledger.js": cli reaches past the door of provider; import src/provider/index.ts',
    );
    expect(violation({ file: "src/main-job/x.ts", specifier: "../../examples/host/host.js" })).toBe(
      'src/main-job/x.ts imports "../../examples/host/host.js": src/ imports only src/ (found examples/host/host.ts)',
    );
    expect(violation({ file: "src/provider/steps/x.ts", specifier: "../members/y.js" })).toBeUndefined();
  });

  it("places every room and entry point of src/ in the table, and nothing else", () => {
    const rooms = [...new Set(files.map(roomOf))].sort();
    expect(Object.keys(ALLOWED).sort()).toEqual(rooms);
  });

  it("the table's arrows run one way (no cycle between rooms)", () => {
    const state = new Map<string, "visiting" | "done">();
    const cycleFrom = (room: string, path: string[]): string[] | undefined => {
      if (state.get(room) === "done") return undefined;
      if (state.get(room) === "visiting") return [...path, room];
      state.set(room, "visiting");
      for (const next of ALLOWED[room] ?? []) {
        const cycle = cycleFrom(next, [...path, room]);
        if (cycle) return cycle;
      }
      state.set(room, "done");
      return undefined;
    };
    for (const room of Object.keys(ALLOWED)) expect(cycleFrom(room, [])?.join(" -> ")).toBeUndefined();
  });

  it("the provider and every room below it never reach the emulator", () => {
    const reach = (room: string, seen = new Set<string>()): Set<string> => {
      for (const next of ALLOWED[room] ?? []) if (!seen.has(next)) reach(next, seen.add(next));
      return seen;
    };
    expect([...reach("provider")]).not.toContain("emulator");
  });

  it("finds a circle of files when there is one", () => {
    const a = join(SRC, "room/a.ts");
    const b = join(SRC, "room/b.ts");
    const c = join(SRC, "room/c.ts");
    expect(
      fileCycles(
        new Map([
          [a, [b]],
          [b, [c]],
          [c, [a]],
        ]),
      ),
    ).toEqual(["src/room/a.ts -> src/room/b.ts -> src/room/c.ts -> src/room/a.ts"]);
    expect(
      fileCycles(
        new Map([
          [a, [b, c]],
          [b, [c]],
          [c, []],
        ]),
      ),
    ).toEqual([]);
  });

  it("no room has a circle of files among its own imports", () => {
    const graph = new Map(files.map((file) => [file, sameRoomImports(file)]));
    expect(fileCycles(graph)).toEqual([]);
  });

  it.each(files.map((file) => relative(ROOT, file)))("%s keeps the rules", (file) => {
    const broken = importsOf(join(ROOT, file)).flatMap((entry) => violation(entry) ?? []);
    expect(broken).toEqual([]);
  });
});
