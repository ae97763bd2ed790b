// The conformance suite users run against the emulator or a real Vercel project (see README).
export { fakeEnrollment, operationId } from "./fixtures.js";
export { type ConformanceTarget, defineConformanceSuite } from "./suite.js";
