// The `sandbox` CLI's side of an interactive shell, for specs: it opens the WebSocket an `openInteractive()` answer
// names, sends the start frame (a login shell of 100x30 unless `start` says otherwise), and collects the terminal's
// output and the exit frame.
import { WebSocket } from "undici";

export interface Shell {
  send(text: string): void;
  resize(cols: number, rows: number): void;
  /** Resolves with all output so far once `pattern` appears in it (rejects after 15 s). */
  waitFor(pattern: RegExp): Promise<string>;
  exit: Promise<number | undefined>;
  /** All terminal output so far. */
  output(): string;
  closed: Promise<void>;
  close(): void;
}

export function attach(url: string, token: string, start: Record<string, unknown> = {}): Promise<Shell> {
  const ws = new WebSocket(`${url}?token=${encodeURIComponent(token)}`);
  ws.binaryType = "arraybuffer";
  let output = "";
  const decoder = new TextDecoder();
  const waiters = new Set<() => void>();
  let exitCode: number | undefined;
  const closed = new Promise<void>((resolve) => ws.addEventListener("close", () => resolve()));
  ws.addEventListener("message", (event) => {
    if (typeof event.data === "string") {
      const frame = JSON.parse(event.data) as { type?: string; code?: number };
      if (frame.type === "exit") exitCode = frame.code;
    } else output += decoder.decode(event.data as ArrayBuffer, { stream: true });
    for (const wake of waiters) wake();
  });
  return new Promise((resolve, reject) => {
    ws.addEventListener("error", () => reject(new Error("the interactive connection failed")));
    ws.addEventListener("open", () => {
      ws.send(
        JSON.stringify({
          type: "start",
          command: "",
          args: ["--login"],
          env: ["TERM=xterm-256color", "PS1=$ "],
          cwd: "/vercel/sandbox",
          cols: 100,
          rows: 30,
          ...start,
        }),
      );
      resolve({
        send: (text) => ws.send(new TextEncoder().encode(text)),
        resize: (cols, rows) => ws.send(JSON.stringify({ type: "resize", cols, rows })),
        waitFor: (pattern) =>
          new Promise((found, fail) => {
            const check = () => {
              if (!pattern.test(output)) return;
              waiters.delete(check);
              clearTimeout(timer);
              found(output);
            };
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`no ${pattern} in the terminal output: ${JSON.stringify(output.slice(-400))}`));
            }, 15_000);
            waiters.add(check);
            check();
          }),
        exit: closed.then(() => exitCode),
        output: () => output,
        closed,
        close: () => ws.close(),
      });
    });
  });
}
