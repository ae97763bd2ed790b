// How every command ends: its table or one JSON document on stdout; a failure as the message and what to do
// next (on stderr, or as `{ error: { message, remedy } }` with --json), exit code 1.
import { afterEach, describe, expect, it, vi } from "vitest";
import { run } from "../../src/cli/commands.js";
import { CliError } from "../../src/cli/errors.js";

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  vi.spyOn(process.stdout, "write").mockImplementation((chunk) => out.push(String(chunk)) > 0);
  vi.spyOn(process.stderr, "write").mockImplementation((chunk) => err.push(String(chunk)) > 0);
  return { out, err };
}

afterEach(() => {
  vi.restoreAllMocks();
  process.exitCode = undefined;
});

describe("command output", () => {
  it("prints the table, or exactly one JSON document with --json, exit 0", async () => {
    const io = capture();
    await run({}, async () => ({ json: { a: 1 }, text: "A  1" }));
    await run({ json: true }, async () => ({ json: { a: 1 }, text: "A  1" }));
    vi.restoreAllMocks();
    expect(io.out).toEqual(["A  1\n", `${JSON.stringify({ a: 1 }, null, 2)}\n`]);
    expect(process.exitCode).toBeUndefined();
  });

  it("a result that reports failures (doctor, gc) still prints, and exits 1", async () => {
    const io = capture();
    await run({}, async () => ({ json: {}, text: "Doctor: some checks failed.", failed: true }));
    vi.restoreAllMocks();
    expect(io.out).toEqual(["Doctor: some checks failed.\n"]);
    expect(process.exitCode).toBe(1);
  });

  it("a failure says what to do next: on stderr, or as a JSON error with --json", async () => {
    const io = capture();
    const fail = async () => {
      throw new CliError("no cloudWorkers profile uses provider vercel-sandbox", "Add one, then run gc again");
    };
    await run({}, fail);
    await run({ json: true }, fail);
    await run({ json: true }, async () => {
      throw new Error("something unexpected");
    });
    vi.restoreAllMocks();
    expect(io.err).toEqual([
      "vercel-sandbox: no cloudWorkers profile uses provider vercel-sandbox\n  → Add one, then run gc again\n",
    ]);
    expect(io.out.map((text) => JSON.parse(text))).toEqual([
      {
        error: {
          message: "no cloudWorkers profile uses provider vercel-sandbox",
          remedy: "Add one, then run gc again",
        },
      },
      {
        error: {
          message: "something unexpected",
          remedy: "Run `openclaw vercel-sandbox doctor` to find the cause",
        },
      },
    ]);
    expect(process.exitCode).toBe(1);
  });

  it("a remedy of two lines prints as two lines on stderr, and keeps its line break in JSON", async () => {
    const io = capture();
    const fail = async () => {
      throw new CliError("the gateway did not answer", "Start the gateway\nor pass --url and --token");
    };
    await run({}, fail);
    await run({ json: true }, fail);
    vi.restoreAllMocks();
    expect(io.err.join("")).toBe(
      "vercel-sandbox: the gateway did not answer\n  → Start the gateway\n    or pass --url and --token\n",
    );
    expect(JSON.parse(io.out.join("")).error.remedy).toBe("Start the gateway\nor pass --url and --token");
  });
});
