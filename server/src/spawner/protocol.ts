/** Messages between the daemon and its spawner process (spawner-main.ts), over Node's IPC channel. */

export interface SpawnRequest {
  readonly type: "spawn";
  readonly id: number;
  readonly file: string;
  readonly args: readonly string[];
  /** argv[0] as the program sees it (pipes only; PTYs carry it in file/args). */
  readonly argv0: string | undefined;
  readonly cwd: string;
  readonly env: Record<string, string>;
  /** Pipes: which stdio pipes to create. PTY: the slave's path, opened by the spawner. */
  readonly stdio: { readonly kind: "pipes"; readonly stdin: boolean } | { readonly kind: "pty"; readonly slavePath: string };
}

export type SpawnerMessage =
  /** Followed, for pipes, by one "stdio" message per pipe, each carrying its socket handle. */
  | { readonly type: "spawned"; readonly id: number; readonly pid: number }
  | { readonly type: "stdio"; readonly id: number; readonly fd: 0 | 1 | 2 }
  | { readonly type: "failed"; readonly id: number; readonly code: string; readonly message: string }
  | { readonly type: "exit"; readonly id: number; readonly code: number | null; readonly signal: NodeJS.Signals | null };
