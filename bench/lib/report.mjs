// Turns the bench's JSON record into the Markdown tables it prints (and docs/benchmarks.md shows, through
// scripts/bench-table.mjs).
const NOT_BUILT = "n/a (not built)";

/** A Markdown table with its columns padded, as a Markdown formatter writes it. */
function table(header, rows) {
  const cells = [header, ...rows].map((row) => row.map(String));
  const widths = header.map((_, i) => Math.max(3, ...cells.map((row) => row[i].length)));
  const line = (row) => `| ${row.map((cell, i) => cell.padEnd(widths[i])).join(" | ")} |`;
  return [line(cells[0]), line(widths.map((w) => "-".repeat(w))), ...cells.slice(1).map(line)].join("\n");
}

/** `POST /v2/sandboxes/sessions/:id/network-policy 200` → `policy`; a status other than 200 is kept. */
const SHORT = [
  [/^POST \/v2\/sandboxes /, "create"],
  [/^POST \/v3\/sandboxes /, "create (v3)"],
  [/\/snapshot /, "snapshot"],
  [/^PATCH \/v2\/sandboxes\/:id /, "restore"],
  [/^GET \/v2\/sandboxes\/:id /, "get"],
  [/^DELETE \/v2\/sandboxes\/:id /, "delete"],
  [/\/network-policy /, "policy"],
  [/\/fs\/write /, "write"],
  [/\/cmd /, "run"],
  [/\/extend-timeout /, "extend"],
];
function short(request) {
  const name = SHORT.find(([pattern]) => pattern.test(request))?.[1] ?? request.replace(/ \d+$/, "");
  const status = request.split(" ").at(-1);
  return status === "200" ? name : `${name} ${status}`;
}

const ms = ({ p50, p95 }) => `${p50} / ${p95}`;
const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
const mib = (bytes) => `${(bytes / 1024 / 1024).toFixed(0)} MiB`;
const percent = (ratio) => `${(ratio * 100).toFixed(1)} %`;

function warmCold(out, { recipe, goal, pairs, cold, warm, ratio }) {
  out.push(
    "",
    `**Warm vs cold provision** (real bootstrap; recipe \`${JSON.stringify(recipe)}\`; ${pairs} projects, each ` +
      `provisioned cold then warm; wall ms = median; goal warm <= ${percent(goal)} of cold)`,
    "",
  );
  const row = (label, r) => [label, r.wallMs, r.requests, r.creates, r.phases.join(", ") || "none", r.captured];
  out.push(
    table(
      ["provision", "wall ms", "requests", "create requests", "preparation phases run", "image captured"],
      [
        row(`cold (${cold.start}, ${cold.event})`, cold),
        row(`warm (${warm.start} from the image, ${warm.event})`, warm),
        ["warm / cold", percent(ratio.wall), percent(ratio.requests), "", "", ""],
      ],
    ),
  );
  const met = ratio.wall <= goal ? "met" : "not met";
  out.push(
    "",
    `Warm is ${percent(ratio.wall)} of cold in wall time: the goal (<= ${percent(goal)}) is ${met}. ` +
      `Samples ms: cold ${cold.samplesMs.join(", ")}; warm ${warm.samplesMs.join(", ")}.`,
  );
}

/** The base-image figure alone (`BENCH_ONLY=base`). */
export function baseColdMarkdown(figure) {
  const out = [];
  baseCold(out, figure);
  return out.join("\n").trim();
}

function baseCold(out, figure) {
  if (!figure) return;
  const { recipe, runtime, goal, samples, cold, base, ratio, met } = figure;
  out.push(
    "",
    `**New project: base runtime image present vs cold** (real bootstrap; runtime archive: ${runtime.kind === "real" ? `openclaw 2026.9.2's ${runtime.dependencies} dependencies from the registry` : "dependency-free fixture"}; ` +
      `recipe \`${JSON.stringify(recipe)}\`; ${samples} samples on an empty store; wall ms = median; ` +
      `goal base <= ${goal.wallMs / 1000} s and <= ${percent(goal.ratio)} of cold)`,
    "",
  );
  const row = (label, r) => [label, r.wallMs, r.requests, r.creates, r.runtimeDownloads, r.baseImage, r.captured];
  out.push(
    table(
      [
        "provision",
        "wall ms",
        "requests",
        "create requests",
        "runtime downloads",
        "base image",
        "project image captured",
      ],
      [
        row(`cold (${cold.start}, ${cold.event})`, cold),
        row(`new project, base image present (${base.start}, ${base.event})`, base),
        ["base / cold", percent(ratio.wall), percent(ratio.requests), "", "", "", ""],
      ],
    ),
  );
  out.push(
    "",
    `The goal is ${met ? "met" : "not met"}. Samples ms: cold ${cold.samplesMs.join(", ")}; base ${base.samplesMs.join(", ")}.`,
  );
}

function suspendFigure(out, suspend) {
  out.push("", "**Suspend**: POST /vercel-sandbox/v1/suspend → ready on an idle real gateway, then resume", "");
  if (suspend.skipped || suspend.failed) {
    const [value, why] = suspend.skipped ? ["skipped", suspend.skipped] : ["failed", suspend.failed];
    out.push(table(["runs", "median ms", "why"], [[0, value, why]]));
    return;
  }
  out.push(
    table(
      ["runs", "median ms", "max ms", "first after start ms", "gateway RSS (idle)"],
      [[suspend.runs, suspend.medianMs, suspend.maxMs, suspend.firstAfterStart.ms, mib(suspend.gatewayRssBytes)]],
    ),
  );
  out.push(
    "",
    `Where: ${suspend.where}. Samples ms: ${suspend.samplesMs.join(", ")}; POSTs per run (more than one: ` +
      `the gateway answered draining or busy first): ${suspend.postsPerRun.join(", ")}; first after start: ` +
      `${suspend.firstAfterStart.posts}.`,
  );
}

function memoryFigure(out, own, gateway) {
  out.push(
    "",
    "**Memory** (heap after forced collections; growth from before the leases to while they are tracked)",
    "",
  );
  const row = (label, m) => [
    label,
    m.tracked,
    kib(m.heapGrowthBytes),
    kib(m.rssGrowthBytes),
    kib(m.heapPerLeaseBytes),
    kib(m.heapRetainedAfterReleaseBytes),
  ];
  const rows = [row("own process, provider only", own)];
  if (gateway.skipped || gateway.failed) {
    const why = gateway.skipped ? `skipped (${gateway.skipped})` : `failed: ${gateway.failed}`;
    rows.push(["inside a real gateway", why, "", "", "", ""]);
  } else {
    rows.push(row(`inside a real gateway (RSS ${mib(gateway.rssBytes)})`, gateway));
  }
  out.push(
    table(["where", "tracked leases", "heap growth", "RSS growth", "heap per lease", "heap left after release"], rows),
  );
  out.push("", `Own process: ${own.where}.${gateway.where ? ` Gateway: ${gateway.where}.` : ""}`);
}

/**
 * The whole record as Markdown. `notBuilt: "list"` gives the figures not built as a list instead of a table (their
 * reasons are long: docs/benchmarks.md keeps its lines short).
 */
export function markdown(record, { notBuilt: notBuiltAs = "table" } = {}) {
  const { machine, roundTrips, overhead, concurrency, memory, emulator, notBuilt } = record;
  const out = [];
  const load = machine.loadAverage1m;
  out.push(
    `Machine: ${machine.nproc} CPUs (\`nproc\`), ${machine.cpu}, Node ${machine.node}, ${machine.platform}; ` +
      `@vercel/sandbox ${machine.sdk}; ${record.runs} runs per sampled figure; ${machine.date}; ` +
      `load average (1 min) ${load.start} at start, ${load.end} at end${machine.note ? `; ${machine.note}` : ""}.`,
  );
  out.push("", "**Round trips per operation** (the plugin's own Vercel requests; floor = the least it could need)", "");
  out.push(
    table(
      ["operation", "requests", "create requests", "floor", "requests made"],
      roundTrips.rows.map((r) => [r.operation, r.requests, r.creates, r.floor, r.pattern.map(short).join(", ")]),
    ),
  );
  warmCold(out, record.warmCold);
  baseCold(out, record.baseCold);
  out.push(
    "",
    `**Plugin overhead** (wall time minus the emulator's service time, ms, p50 / p95 over ${record.runs} runs) ` +
      "vs the same SDK calls from a process spawned per call (Crabbox's Vercel backend)",
    "",
  );
  out.push(
    table(
      ["operation", "requests", "plugin ms", "process-per-call ms", "ratio (p50)"],
      overhead.map((r) => [r.operation, r.requests, ms(r.pluginOverheadMs), ms(r.bridgeOverheadMs), `${r.ratio}×`]),
    ),
  );
  out.push("", "**Concurrency** (stand-in enroller)", "");
  const wave = (label, w) => [label, w.provisions, w.sandboxesCreated, w.leases, ms(w.latencyMs), w.errors];
  out.push(
    table(
      ["provisions at once", "n", "sandboxes created", "leases", "latency ms p50 / p95", "errors"],
      [
        wave("distinct operations, one provider", concurrency.distinct),
        wave(`one operation, ${concurrency.sameOperation.providers} providers`, concurrency.sameOperation),
      ],
    ),
  );
  memoryFigure(out, memory, record.gatewayMemory);
  out.push(
    "",
    `**Emulator's own cost** (service time, ms p50 / p95; × = p50 over a bare \`spawn("true")\`, ` +
      `${ms(emulator.spawnTrueMs)} ms here)`,
    "",
  );
  out.push(
    table(
      ["operation", "requests/op", "service ms", "× spawn(true)"],
      emulator.rows.map((r) => [r.operation, r.requestsPerOp, ms(r.serviceMs), `${r.xSpawnTrue}×`]),
    ),
  );
  suspendFigure(out, record.suspend);
  out.push("", "**Not built**", "");
  if (notBuiltAs === "list") {
    out.push(...notBuilt.map((f) => `- ${f.figure}: ${NOT_BUILT}; ${f.reason}.`));
  } else {
    out.push(
      table(
        ["figure", "value", "why"],
        notBuilt.map((f) => [f.figure, NOT_BUILT, f.reason]),
      ),
    );
  }
  return out.join("\n");
}

/** JSON as the repository's formatter writes it: two-space indent, arrays of plain values on one line when they fit. */
export function formattedJson(value, lineWidth = 120) {
  // Only arrays without nested arrays or objects (strings here never hold brackets or braces).
  return JSON.stringify(value, null, 2).replace(
    /^( *)("[^"]*": )?\[\n([^[\]{}]*?)\n\1\]/gm,
    (whole, indent, key, body) => {
      const line = `${indent}${key ?? ""}[${body
        .split(",\n")
        .map((item) => item.trim())
        .join(", ")}]`;
      return line.length <= lineWidth ? line : whole;
    },
  );
}
