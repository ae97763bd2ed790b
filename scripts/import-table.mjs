// Prints the import table between the rooms of src/: for every pair of rooms, how many import statements
// (static, dynamic and re-exports) run from one to the other, and how many of them reach past the other room's
// door (its index.ts). A room is a folder directly under src/; a file directly under src/ is an entry point,
// listed by its file name (`cli.ts`), and is its own door.
// Usage: node scripts/import-table.mjs [--json]
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const SRC = join(ROOT, "src");

function walk(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return walk(path);
    return name.endsWith(".ts") ? [path] : [];
  });
}

function roomOf(path) {
  const rel = relative(SRC, path);
  if (rel.startsWith("..")) return relative(ROOT, path).split("/")[0];
  const parts = rel.split("/");
  return parts[0];
}

const rows = new Map();
for (const file of walk(SRC)) {
  const source = readFileSync(file, "utf8");
  for (const match of source.matchAll(/(?:from|import)\s*\(?\s*["'](\.[^"']+)["']/g)) {
    const target = resolve(dirname(file), match[1].replace(/\.js$/, ".ts"));
    const from = roomOf(file);
    const to = roomOf(target);
    if (from === to) continue;
    const key = `${from} -> ${to}`;
    const row = rows.get(key) ?? { from, to, imports: 0, pastDoor: 0 };
    row.imports += 1;
    const door = relative(SRC, target).split("/").length === 1 || target.endsWith("/index.ts");
    if (!door) row.pastDoor += 1;
    rows.set(key, row);
  }
}

const table = [...rows.values()].sort((a, b) => a.from.localeCompare(b.from) || a.to.localeCompare(b.to));
if (process.argv.includes("--json")) {
  console.log(JSON.stringify(table, null, 2));
} else {
  console.log("| from | to | imports | past the door |");
  console.log("|---|---|---:|---:|");
  for (const row of table) console.log(`| ${row.from} | ${row.to} | ${row.imports} | ${row.pastDoor} |`);
}
