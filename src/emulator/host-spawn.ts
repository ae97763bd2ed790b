// Programs the emulator runs on the host, as host root (ip, nsenter, nft, sh, cp…): always by absolute path and
// with a fixed environment, never the caller's or a sandbox's. A `PATH` entry would choose which binary runs as
// root, and `LD_PRELOAD`, `BASH_ENV`, `ENV`, `NODE_OPTIONS` and the like would load code into it. What a program
// in a sandbox gets (its `env`, the sandbox's `env`) applies only inside the sandbox, to the program the holder's
// outer process starts there (serve-script.ts), never to anything the host runs.
import { type ChildProcess, execFile, type SpawnOptions, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";

/** The only environment a host-side program gets (plus what a call adds by name). */
export const HOST_ENV: Readonly<Record<string, string>> = Object.freeze({
  PATH: "/usr/sbin:/usr/bin:/sbin:/bin",
  LANG: "C",
  LC_ALL: "C",
});

const HOST_DIRS = ["/usr/sbin", "/usr/bin", "/sbin", "/bin"];
const resolved = new Map<string, string>();

/** Thrown when a host tool the emulator needs is not installed in the system's directories. */
export class HostToolMissingError extends Error {
  constructor(readonly tool: string) {
    super(`The emulator needs \`${tool}\` in ${HOST_DIRS.join(", ")} on this machine.`);
    this.name = "HostToolMissingError";
  }
}

/** The absolute path of a system tool, from the system's directories only (never the process's PATH). */
export function hostTool(name: string): string {
  if (name.startsWith("/")) return name;
  let found = resolved.get(name);
  if (!found) {
    found = HOST_DIRS.map((d) => path.join(d, name)).find((p) => existsSync(p));
    if (!found) throw new HostToolMissingError(name);
    resolved.set(name, found);
  }
  return found;
}

/** Whether a system tool is installed (in the system's directories). */
export function hasHostTool(name: string): boolean {
  try {
    hostTool(name);
    return true;
  } catch {
    return false;
  }
}

/** The environment of a host-side program: HOST_ENV plus named additions (never a whole inherited env). */
export function hostEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { ...HOST_ENV, ...extra };
}

/** `spawn` of a system tool by absolute path with the fixed environment (`extraEnv` added by name). */
export function spawnHost(
  tool: string,
  args: readonly string[],
  options: Omit<SpawnOptions, "env"> & { extraEnv?: Record<string, string> } = {},
): ChildProcess {
  const { extraEnv, ...rest } = options;
  return spawn(hostTool(tool), args, { ...rest, env: hostEnv(extraEnv) });
}

const execFileAsync = promisify(execFile);

/** Runs a system tool to its end (fixed environment, absolute path); rejects with its stderr on failure. */
export async function runHost(
  tool: string,
  args: readonly string[],
  /** `timeoutMs` 0: no limit (a copy or chown of a whole image). */
  options: { input?: string; timeoutMs?: number; cwd?: string } = {},
): Promise<{ stdout: string; stderr: string }> {
  const base = { env: hostEnv(), timeout: options.timeoutMs ?? 30_000, cwd: options.cwd };
  if (options.input === undefined) return execFileAsync(hostTool(tool), args, base);
  return new Promise((resolve, reject) => {
    const child = execFile(hostTool(tool), args, base, (error, stdout, stderr) =>
      error ? reject(Object.assign(error, { stderr })) : resolve({ stdout, stderr }),
    );
    child.stdin?.end(options.input);
  });
}
