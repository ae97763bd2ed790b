// Turns the bench's JSON record into the Markdown tables it prints (and the README shows).
const NOT_BUILT = "n/a (not built yet)";

function table(header, rows) {
  const line = (cells) => `| ${cells.join(" | ")} |`;
  return [line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

const ms = ({ p50, p95 }) => `${p50} / ${p95}`;
const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;

export function markdown(record) {
  const { machine, roundTrips, overhead, concurrency, memory, emulator, notBuilt } = record;
  const out = [];
  out.push(
    `Machine: ${machine.nproc} CPUs (\`nproc\`), ${machine.cpu}, Node ${machine.node}, ${machine.platform}; ` +
      `@vercel/sandbox ${machine.sdk}; ${record.runs} runs per sampled figure; ${machine.date}.`,
  );
  out.push("", "**Round trips per operation** (the plugin's own Vercel requests; floor = the least it could need)", "");
  out.push(
    table(
      ["operation", "requests", "create requests", "floor", "pattern"],
      [
        ...roundTrips.rows.map((r) => [r.operation, r.requests, r.creates, r.floor, r.pattern.join(", ")]),
        ...notBuilt.roundTrips.map((r) => [r.operation, NOT_BUILT, "", r.floor, r.reason]),
      ],
    ),
  );
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
  out.push("", `**Memory**: ${memory.where}`, "");
  out.push(
    table(
      ["tracked leases", "heap growth", "RSS growth", "heap per lease"],
      [[memory.tracked, kib(memory.heapGrowthBytes), kib(memory.rssGrowthBytes), kib(memory.heapPerLeaseBytes)]],
    ),
  );
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
  out.push("", "**Not built yet**", "");
  out.push(
    table(
      ["figure", "value", "why"],
      notBuilt.figures.map((f) => [f.figure, NOT_BUILT, f.reason]),
    ),
  );
  return out.join("\n");
}
