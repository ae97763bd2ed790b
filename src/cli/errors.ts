// The CLI's one error type: a whole command failed, and the next step is known. A leaf: commands.ts reports it,
// and the commands that throw it (warm.ts, warm-environment.ts) import it from here, not from commands.ts.

/** A failure of a whole command, with the next step. */
export class CliError extends Error {
  override readonly name = "CliError";
  constructor(
    message: string,
    readonly remedy: string,
  ) {
    super(message);
  }
}
