// The emulator's shared state, in one home: what index.ts makes once and every endpoint handler takes as its
// argument (context.ts adds the request to it). It names the stateful parts (lifecycle.ts, drives.ts,
// interactive.ts), none of which imports a route or this file: the stateful parts that need some of the state take
// only that part (program-env.ts's ProgramState), so the arrows run from the routes to the state and never back.
import type { ChildProcess } from "node:child_process";
import type { ApiScope } from "./auth.js";
import type { DriveStore } from "./drives.js";
import type { InteractiveShells } from "./interactive.js";
import type { Lifecycle } from "./lifecycle.js";
import type { Registry } from "./registry.js";

export interface EmulatorState {
  /** The token, team and project every request must match (auth.ts). */
  scope: ApiScope;
  registry: Registry;
  lifecycle: Lifecycle;
  /** Directory of a Node >= 22.22.3 put first on every command's PATH. */
  nodeBinDir?: string;
  /** Registers a child process so close() can end it. */
  track: (child: ChildProcess) => void;
  /** Interactive shells: their tickets and live connections (interactive.ts). */
  interactive: InteractiveShells;
  /** The project's drives (drives.ts). */
  drives: DriveStore;
}
