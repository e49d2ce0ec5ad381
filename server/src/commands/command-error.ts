/**
 * Errors of the client commands, each printed as one line. The commands'
 * own class, so they do not import the daemon's configuration for one.
 */

/** The command line is wrong (exit 2, like the daemon's configuration errors). */
export class UsageError extends Error {
  readonly exitCode = 2;
}

/** The command could not do what was asked; `exitCode` says how, as a shell would (127: not found). */
export class CommandError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}
