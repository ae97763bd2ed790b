#!/usr/bin/env node
// Command-line entry: `openclaw-vercel-sandbox <command>`. Each command is one entry in the
// table below (add a new one there, e.g. a provider demo); nothing else needs to change.
import { rmSync } from "node:fs";
import { chmod, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";

interface CliCommand {
  summary: string;
  usage: string;
  run(argv: string[]): Promise<number>;
}

const commands: Record<string, CliCommand> = {
  start: {
    summary: "seed 000's whole cycle on the embedded emulator (what `npm start` runs)",
    usage: "start [--keep] [--fresh]",
    async run(argv) {
      const { runStartCommand } = await import("./main-job/index.js");
      return runStartCommand(argv);
    },
  },
  emulator: {
    summary: "serve the local Vercel Sandbox API until interrupted",
    usage: "emulator [--port N] [--data-dir D] [--token-file F]",
    async run(argv) {
      const { values } = parseArgs({
        args: argv,
        options: { port: { type: "string" }, "data-dir": { type: "string" }, "token-file": { type: "string" } },
      });
      const { startLocalSandboxApi } = await import("./emulator/index.js");
      const api = await startLocalSandboxApi({
        port: values.port ? Number(values.port) : undefined,
        dataDir: values["data-dir"],
        // A token chosen by the caller comes from the environment, never from argv.
        token: process.env.VERCEL_SANDBOX_EMULATOR_TOKEN || undefined,
      });
      // The token is a credential: it goes to a 0600 file, never to the terminal or a log.
      const tokenFile = path.resolve(
        values["token-file"] ?? path.join(tmpdir(), `vercel-sandbox-emulator-${new URL(api.url).port}.token`),
      );
      // The file goes with the emulator: on Ctrl-C/SIGTERM below, and on any other exit (a crash, process.exit).
      const removeTokenFile = () => rmSync(tokenFile, { force: true });
      process.once("exit", removeTokenFile);
      await writeFile(tokenFile, `${api.credentials.token}\n`, { mode: 0o600, flag: "w" });
      await chmod(tokenFile, 0o600);
      const { teamId, projectId } = api.credentials;
      process.stdout.write(
        `Vercel Sandbox emulator listening on ${api.url}\n` +
          `teamId ${teamId}, projectId ${projectId}; bearer token in ${tokenFile} (0600)\n` +
          `Point the SDK at it with a fetch that rewrites https://vercel.com/api to ${api.url}. Ctrl-C stops it.\n`,
      );
      await new Promise<void>((resolve) => {
        process.once("SIGINT", resolve);
        process.once("SIGTERM", resolve);
      });
      process.stdout.write("stopping: ending every sandbox process...\n");
      try {
        await api.close();
      } finally {
        removeTokenFile();
        process.removeListener("exit", removeTokenFile);
      }
      return 0;
    },
  },
  demo: {
    summary: "run a sandbox lifecycle through the real SDK, then the worker provider, against the emulator",
    usage: "demo",
    async run() {
      const { runEmulatorDemo, runProviderDemo } = await import("./demo/index.js");
      await runEmulatorDemo();
      await runProviderDemo();
      return 0;
    },
  },
};

function usage(): string {
  const lines = Object.values(commands).map((c) => `  openclaw-vercel-sandbox ${c.usage.padEnd(40)} ${c.summary}`);
  return `usage:\n${lines.join("\n")}\n`;
}

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const command = name ? commands[name] : undefined;
  if (!command) {
    process.stderr.write(name && name !== "--help" ? `unknown command: ${name}\n${usage()}` : usage());
    return name && name !== "--help" ? 2 : 0;
  }
  return command.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(
      `openclaw-vercel-sandbox: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
    );
    process.exit(1);
  },
);
