/** Raised when a program cannot be started at all: the OS error's name (ENOENT), and what failed when it was not the program. */
export class SpawnError extends Error {
  constructor(
    message: string,
    readonly errno: string,
    /** What failed when it was not the program itself (the working directory), for the client's message. */
    readonly subject?: string,
  ) {
    super(message);
    this.name = "SpawnError";
  }
}
