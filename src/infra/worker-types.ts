// Worker types OpenClaw 2026.9.2 does not export by name, derived from the exported WorkerProvider.
import type { WorkerProvider } from "openclaw/plugin-sdk/plugin-entry";

export type ProvisionOptions = NonNullable<Parameters<WorkerProvider["provision"]>[2]>;
export type ExecutionMode = NonNullable<ProvisionOptions["executionMode"]>;
export type NodeEnrollment = Awaited<ReturnType<NonNullable<ProvisionOptions["beginNodeEnrollment"]>>>;
export type NodeRuntimePreparation = Awaited<ReturnType<NonNullable<ProvisionOptions["prepareNodeRuntime"]>>>;
export type ProjectPreparation = NonNullable<ProvisionOptions["project"]>;
export type MaintainContext = Parameters<NonNullable<WorkerProvider["maintain"]>>[0];

export interface ProviderLogger {
  info?(message: string): void;
  warn(message: string): void;
}
