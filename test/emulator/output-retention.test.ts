// A command's output kept for `logs` replay is bounded by what it costs in memory, not by its characters
// (issue 42, item 8): a program writing one byte per write() delivers one-byte chunks, and before the fix each
// was kept as its own object and string, ~24.5 heap bytes per byte (about 200 MB per command against the
// documented ~16 MiB). The program here is a stand-in whose streams the spec drives chunk by chunk, so the
// chunking is exactly the worst case, whatever the machine's pace.
import type { Socket } from "node:net";
import { PassThrough } from "node:stream";
import { describe, expect, it } from "vitest";
import { CommandProcess, type LogChunk, OUTPUT_RETAIN_CHARS } from "../../src/emulator/executor.js";
import type { Holder } from "../../src/emulator/isolation.js";
import { SandboxProgram } from "../../src/emulator/sandbox-program.js";
import { MiB, retainedBytes } from "./memory.js";

/** A command whose program's stdout and stderr the spec writes, chunk by chunk; `end` makes it exit 0. */
async function drivenCommand() {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let exit!: (code: number) => void;
  const exited = new Promise<number>((resolve) => (exit = resolve));
  const program = new SandboxProgram(
    { stdout: stdout as unknown as Socket, stderr: stderr as unknown as Socket },
    exited,
    () => {},
  );
  const holder = { start: { run: async () => program } } as unknown as Holder;
  const command = new CommandProcess(holder, {
    sessionId: "sess_retention",
    name: "writer",
    args: [],
    cwd: "/",
    env: {},
    sudo: false,
  });
  await new Promise((resolve) => setImmediate(resolve)); // the command has its program and listens
  return {
    command,
    /** One `data` event per chunk, as a socket delivers a program's separate writes. */
    write(stream: "stdout" | "stderr", chunk: Buffer) {
      (stream === "stdout" ? stdout : stderr).emit("data", chunk);
    },
    async end() {
      for (const s of [stdout, stderr]) {
        s.emit("end");
        s.destroy();
      }
      exit(0);
      return command.done;
    },
  };
}

function replay(command: CommandProcess): LogChunk[] {
  const chunks: LogChunk[] = [];
  command.follow(
    (c) => chunks.push(c),
    () => {},
  );
  return chunks;
}

const ONE = [Buffer.from("a"), Buffer.from("b")];

describe("output retention counts memory", () => {
  it("4 MiB written one byte per write() is kept in about 4 MiB, and replays byte for byte", async () => {
    const BYTES = 4 * MiB;
    const base = retainedBytes();
    const driven = await drivenCommand();
    for (let i = 0; i < BYTES; i++) driven.write("stdout", ONE[0]!);
    const grown = retainedBytes() - base;
    expect(grown).toBeLessThan(3 * BYTES);
    expect(await driven.end()).toBe(0);
    const replayed = replay(driven.command);
    expect(replayed.every((c) => c.stream === "stdout")).toBe(true);
    const text = replayed.map((c) => c.data).join("");
    expect(text.length).toBe(BYTES);
    expect(/^a+$/.test(text)).toBe(true);
    // Coalesced: far fewer chunks than writes.
    expect(replayed.length).toBeLessThan(BYTES / 1024);
  }, 120_000);

  it("stdout and stderr alternating one byte at a time stay within the documented ~16 MiB, newest kept", async () => {
    const WRITES = 1_000_000;
    const base = retainedBytes();
    const driven = await drivenCommand();
    for (let i = 0; i < WRITES; i++) driven.write(i % 2 === 0 ? "stdout" : "stderr", ONE[i % 2]!);
    const grown = retainedBytes() - base;
    expect(grown).toBeLessThan(2 * OUTPUT_RETAIN_CHARS);
    await driven.end();
    const replayed = replay(driven.command);
    // What was dropped is said first; what is kept is the newest output, in order, each byte on its stream.
    expect(replayed[0]!.data).toMatch(/^\[emulator: \d+ characters of earlier output dropped/);
    const kept = replayed.slice(1);
    expect(kept.at(-1)).toEqual({ stream: "stderr", data: "b" });
    expect(kept.every((c) => c.data === (c.stream === "stdout" ? "a" : "b"))).toBe(true);
    expect(kept.length + driven.command.dropped).toBe(WRITES);
  }, 120_000);
});
