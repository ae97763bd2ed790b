// The real-gateway enrollment spec (enrollment.test.ts), unchanged, on the newest 2026.9.x: its harness runs
// that release instead of the pinned 2026.9.2, which enrollment.test.ts itself keeps covering.
import { useOpenClawVersion } from "./openclaw.js";
import { NEWEST_OPENCLAW_VERSION } from "./versions.js";

useOpenClawVersion(NEWEST_OPENCLAW_VERSION);
await import("./enrollment.test.js");
