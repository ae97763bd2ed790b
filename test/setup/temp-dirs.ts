// Every name this project gives to what it creates in the temp dir, in one place: the global setup
// (temp-check.ts) fails a run that leaves any of them behind, and temp-dirs.test.ts fails when a new
// mkdtemp prefix in src/, test/ or bench/ is missing here.

/** Prefixes of temp entries our code creates on the host (src, tests, fixtures, bench). */
export const OUR_TEMP_PREFIXES = [
  // src: the emulator's own data dir (and the CLI's `vercel-sandbox-emulator-<port>.token`), the main job's dir
  "vercel-sandbox-emulator-",
  "vsb-main-job-",
  // test/setup: the run's own TMPDIR (temp-check.ts)
  "vsb-vitest-",
  // test/setup/run-cache.ts: what spec files of one run share
  "vsb-run-cache-",
  // the gateway harness and its TLS test host
  "ocgw-test-",
  "ocvsb-host-",
  // test/gateway/base-images.ts: a spec's emulator data dir
  "emu-spec-",
  "process-guard-",
  "secret-scan-",
  // emulator specs
  "cgroup-join-",
  "emu-boot-",
  "emu-cli-",
  "emu-data-dir-",
  "emu-layers-",
  "emu-dl-",
  "emu-killed-",
  "emulator-races-",
  "emulator-marker-",
  "firewall-upstream-",
  "fake-node-prefix-",
  "host-mqueue-",
  "owner-shift-",
  "host-tree-race-",
  "vsb-evil-",
  // provider, preparation and CLI specs and their fixtures
  "bootstrap-home-",
  "creds-",
  "embedded-state-",
  "enroll-tls-",
  "model-credential-",
  "openclaw-fixture-",
  "openclaw-malicious-",
  "output-bounds-",
  "reliability-state-",
  "replay-state-",
  "vsb-cli-gc-",
  "vsb-disk-",
  "vsb-front-",
  "vsb-matrix-",
  "vsb-model-key-",
  "vsb-probe-",
  "vsb-races-",
  "vsb-reinstall-",
  "vsb-repo-",
  "vsb-restart-",
  "vsb-scan-",
  "vsb-warm-state-",
  "vsb-warm-shortcut-",
  "vsb-warm-request-",
  "vsb-seeded-store-",
  "vsb-wake-",
  // test/support/state-files.ts: tempStateDirs(<name>) makes `<name>-XXXXXX`
  "image-store-",
  "ledger-",
  "vsb-maintain-",
  // Codex specs (test/gateway/codex)
  "codex-responses-spec-",
  // reference host (test/reference-host)
  "vsb-host-wake-",
  // test/support/redis-server.ts: a spec's Redis data dir
  "vsb-redis-",
  // the examples installed from the packed plugin (test/examples)
  "vsb-examples-",
  // bench
  "bench-base-",
  "bench-gateway-",
  "bench-runtime-",
  "bench-short-",
  "bench-trips-",
  "bench-warm-",
  "vsb-bench-companion-",
] as const;

export function isOurs(name: string): boolean {
  return OUR_TEMP_PREFIXES.some((prefix) => name.startsWith(prefix));
}

/** Entries of ours in `after` that were not in `before`, sorted. */
export function newEntriesOfOurs(before: Iterable<string>, after: Iterable<string>): string[] {
  const known = new Set(before);
  return [...after].filter((name) => !known.has(name) && isOurs(name)).sort();
}
