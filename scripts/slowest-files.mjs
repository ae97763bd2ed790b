#!/usr/bin/env node
// Prints the slowest spec files of a vitest run from the JSON test/setup/durations-reporter.ts wrote
// (VSB_TEST_DURATIONS): the 15 slowest with their wall (and CPU) seconds, then all files' seconds summed, the run's
// wall seconds, and how busy the whole machine was meanwhile against its cores (a run that keeps them all busy is
// shortened only by less CPU). `.ci/run` prints it last.
// Usage: node scripts/slowest-files.mjs <durations.json>
import { readFileSync } from "node:fs";

const SHOWN = 15;

const file = process.argv[2];
if (!file) {
  process.stderr.write("usage: node scripts/slowest-files.mjs <durations.json>\n");
  process.exit(2);
}
let durations;
try {
  durations = JSON.parse(readFileSync(file, "utf8"));
} catch (error) {
  process.stderr.write(`slowest-files: cannot read ${file}: ${error.message}\n`);
  process.exit(1);
}

const files = Object.entries(durations.files ?? {}).sort(([pa, a], [pb, b]) => b - a || pa.localeCompare(pb));
const slowest = files.slice(0, SHOWN);
const total = files.reduce((sum, [, s]) => sum + s, 0);
const figure = (s) => s.toFixed(1);
const width = Math.max(
  ...[total, durations.wallSeconds ?? 0, ...slowest.map(([, s]) => s)].map((s) => figure(s).length),
);
const cpu = durations.cpu ?? {};
const cpuTotal = Object.values(cpu).reduce((sum, s) => sum + s, 0);
const cpuWidth = Math.max(4, figure(cpuTotal).length);
/** A file's CPU seconds (test/setup/file-cpu.ts), when the run recorded them. */
const cpuOf = (s) => (typeof s === "number" ? `${figure(s).padStart(cpuWidth)} s CPU  ` : "");
const row = (s, text, c) => `${figure(s).padStart(width)} s  ${cpuOf(c)}${text}`;

const lines = [
  `The ${slowest.length} slowest of ${files.length} spec files (wall seconds${cpuTotal ? ", CPU seconds" : ""}):`,
];
for (const [path, s] of slowest) lines.push(row(s, path, cpu[path]));
lines.push(row(total, `all ${files.length} files together`, cpuTotal || undefined));
if (typeof durations.wallSeconds === "number") {
  const reason = durations.reason && durations.reason !== "passed" ? `, ${durations.reason}` : "";
  lines.push(row(durations.wallSeconds, `the run, start to end${reason}`));
}
// The whole machine's busy CPU over the run (the reporter's /proc/stat figures): what two cores run out of.
const machine = durations.machine;
if (machine && typeof machine.cpuSeconds === "number" && typeof durations.wallSeconds === "number") {
  const available = durations.wallSeconds * machine.cores;
  const share = available > 0 ? Math.round((100 * machine.cpuSeconds) / available) : 0;
  const outside = cpuTotal ? `; ${figure(Math.max(0, machine.cpuSeconds - cpuTotal))} s outside the files' own` : "";
  lines.push(
    `The machine was busy ${figure(machine.cpuSeconds)} CPU-s of the ${figure(available)} its ${machine.cores} cores had (${share} %)${outside}`,
  );
}
process.stdout.write(`${lines.join("\n")}\n`);
