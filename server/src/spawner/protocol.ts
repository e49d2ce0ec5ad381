/** Messages between the daemon and its spawner process (spawner-main.ts), over Node's IPC channel. */

export interface SpawnRequest {
  readonly type: "spawn";
  readonly id: number;
  readonly file: string;
  readonly args: readonly string[];
  /** argv[0] as the program sees it. */
  readonly argv0: string | undefined;
  readonly cwd: string;
  readonly env: Record<string, string>;
  /** Whether stdin is a pipe (else /dev/null); stdout and stderr always are. */
  readonly pipeStdin: boolean;
}

export type SpawnerMessage =
  /** Followed, for pipes, by one "stdio" message per pipe, each carrying its socket handle. */
  | { readonly type: "spawned"; readonly id: number; readonly pid: number }
  | { readonly type: "stdio"; readonly id: number; readonly fd: 0 | 1 | 2 }
  | { readonly type: "failed"; readonly id: number; readonly code: string; readonly message: string }
  | { readonly type: "exit"; readonly id: number; readonly code: number | null; readonly signal: NodeJS.Signals | null };
