// A reporter beside vitest's default one: it prints why a test, a suite's hook or a file failed the moment it
// does, beside the run's progress lines. Vitest's own account comes only in the summary at the end, and a CI log
// kept only in part (its tail, or a run killed at its time limit) then says that a long spec failed, not why.
import type { Reporter, TestCase, TestModule, TestSuite } from "vitest/node";

/** Lines of each error's stack (or message) printed per failure: enough to place it, short enough to scan. */
const STACK_LINES = 15;

function describeErrors(errors: ReadonlyArray<{ message?: string; stack?: string }>): string {
  return errors
    .map((e) => (e.stack || e.message || "(no message)").split("\n").slice(0, STACK_LINES).join("\n"))
    .join("\n");
}

function report(where: string, errors: ReadonlyArray<{ message?: string; stack?: string }>): void {
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
