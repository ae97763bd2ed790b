// The installed-plugin state as a template: `openclaw plugins install npm-pack:<tgz>` costs 30-45 s and about
// 40 s of CPU per harness (its managed-peer plan runs a whole npm install), yet leaves the same state every time
// for one OpenClaw version and one tarball. The first harness of a run to install a (version, tarball sha256) does
// the real install and keeps what it left in the run cache (run-cache.ts); the next ones copy it into their own
// state dir. What the install leaves (read off 2026.9.2's state dir):
// - `<state>/npm/`, the managed npm root with the plugin's project (its node_modules, the packed archive, and a
//   link to the gateway's own `openclaw` as the peer): copied as it is;
// - the plugin index, the `plugins.installedIndex` row of `<state>/state/openclaw.sqlite`, which names the run
//   dir in its paths: kept with the run dir replaced by a marker, written back with the new harness's run dir
//   into a database that holds nothing else of the first harness (its config audit and health rows are dropped);
// - the config's `plugins` and `meta` sections: merged into the new harness's config.
// Nothing per gateway is copied: no token (the config's gateway section is the new harness's own), no
// fingerprint key, no backup; those the new harness makes itself.
import { cp, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { DatabaseSync } from "node:sqlite";

const INDEX_KEY = "plugins.installedIndex";
const RUN_DIR_MARK = "@@VSB_HARNESS_RUN_DIR@@";
const DATABASE = path.join("state", "openclaw.sqlite");

export interface TemplateTarget {
  runDir: string;
  stateDir: string;
  readConfig(): Promise<Record<string, unknown>>;
  writeConfig(config: Record<string, unknown>): Promise<void>;
}

function withDatabase<T>(file: string, work: (db: DatabaseSync) => T): T {
  const db = new DatabaseSync(file);
  try {
    return work(db);
  } finally {
    db.close();
  }
}

/** Keeps what a real install left in `from` (its run dir and state) as a template in `dir`. */
export async function captureTemplate(from: TemplateTarget, dir: string): Promise<void> {
  await mkdir(dir, { recursive: true });
  await cp(path.join(from.stateDir, "npm"), path.join(dir, "npm"), { recursive: true, verbatimSymlinks: true });
  const database = path.join(dir, "openclaw.sqlite");
  await cp(path.join(from.stateDir, DATABASE), database);
  withDatabase(database, (db) => {
    const row = db.prepare("SELECT value_json FROM config_machine_state WHERE state_key = ?").get(INDEX_KEY) as
      | { value_json: string }
      | undefined;
    if (!row) throw new Error(`the plugin install left no ${INDEX_KEY} in ${DATABASE}`);
    for (const { name } of db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as Array<{
      name: string;
    }>) {
      if (name !== "schema_meta") db.exec(`DELETE FROM "${name.replaceAll('"', '""')}"`);
    }
    db.prepare("INSERT INTO config_machine_state (state_key, value_json, updated_at_ms) VALUES (?, ?, ?)").run(
      INDEX_KEY,
      row.value_json.replaceAll(from.runDir, RUN_DIR_MARK),
      Date.now(),
    );
    db.exec("VACUUM");
  });
  const config = await from.readConfig();
  await writeFile(path.join(dir, "config.json"), JSON.stringify({ plugins: config.plugins, meta: config.meta }));
}

/** Gives `to` the installed plugin the template in `dir` holds. */
export async function applyTemplate(dir: string, to: TemplateTarget): Promise<void> {
  await cp(path.join(dir, "npm"), path.join(to.stateDir, "npm"), { recursive: true, verbatimSymlinks: true });
  const database = path.join(to.stateDir, DATABASE);
  await mkdir(path.dirname(database), { recursive: true, mode: 0o700 });
  await cp(path.join(dir, "openclaw.sqlite"), database);
  withDatabase(database, (db) => {
    const row = db.prepare("SELECT value_json FROM config_machine_state WHERE state_key = ?").get(INDEX_KEY) as {
      value_json: string;
    };
    db.prepare("UPDATE config_machine_state SET value_json = ?, updated_at_ms = ? WHERE state_key = ?").run(
      row.value_json.replaceAll(RUN_DIR_MARK, to.runDir),
      Date.now(),
      INDEX_KEY,
    );
  });
  const installed = JSON.parse(await readFile(path.join(dir, "config.json"), "utf8")) as Record<string, unknown>;
  await to.writeConfig({ ...(await to.readConfig()), ...installed });
}
