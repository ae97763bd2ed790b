// The conformance suite users run against the emulator or a real Vercel project (see README). NodeEnrollment
// (what `fakeEnrollment` returns) is exported by name because OpenClaw does not export it, so the published
// types can name it.
export type { NodeEnrollment } from "../infra/index.js";
export { fakeEnrollment, operationId } from "./fixtures.js";
export { type ConformanceTarget, defineConformanceSuite } from "./suite.js";
