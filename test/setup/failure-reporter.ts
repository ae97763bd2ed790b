// A reporter beside vitest's default one: it prints why a test, a suite's hook or a file failed the moment it
// does, beside the run's progress lines. Vitest's own account comes only in the summary at the end, and a CI log
// kept only in part (its tail, or a run killed at its time limit) then says that a long spec failed, not why.
import type { Reporter, TestCase, TestModule, TestSuite } from "vitest/node";

/** Stack frames printed per failure: enough to place it, short enough to scan. */
const STACK_FRAMES = 15;
/**
 * Lines of each error's message printed in full: a real-gateway spec's failure carries the gateway's log tail
 * (80 lines) in its message, which says why where the frames only say where.
 */
const MESSAGE_LINES = 200;

interface ReportedError {
  name?: string;
  message?: string;
  stack?: string;
}

function describeError(e: ReportedError): string {
  const frames = (e.stack ?? "").split("\n").filter((line) => /^\s+at /.test(line));
  const message = e.message ?? "";
  const head = message ? `${e.name ?? "Error"}: ${message}` : (e.stack ?? "(no message)");
  const lines = head.split("\n");
  const kept = lines.length > MESSAGE_LINES ? [...lines.slice(0, MESSAGE_LINES), "…"] : lines;
  return [...kept, ...(message ? frames.slice(0, STACK_FRAMES) : [])].join("\n");
}

function describeErrors(errors: ReadonlyArray<ReportedError>): string {
  return errors.map(describeError).join("\n");
}

function report(where: string, errors: ReadonlyArray<ReportedError>): void {
  if (errors.length === 0) return;
  process.stderr.write(`[failed] ${where}\n${describeErrors(errors)}\n`);
}

export default class FailureReporter implements Reporter {
  onTestCaseResult(testCase: TestCase): void {
    const result = testCase.result();
    if (result.state === "failed") report(`${testCase.module.moduleId} > ${testCase.fullName}`, result.errors);
  }

  onTestSuiteResult(testSuite: TestSuite): void {
    report(`${testSuite.module.moduleId} > ${testSuite.fullName} (a hook)`, testSuite.errors());
  }

  onTestModuleEnd(testModule: TestModule): void {
    report(`${testModule.moduleId} (the file)`, testModule.errors());
  }
}
