/**
 * The daemon's files that no sandboxed process may see, whatever the profile
 * grants: its token file and TLS key (a process that read them could ask the
 * daemon for an unsandboxed process wherever it can reach the daemon), and
 * the spawner's FIFO directory (see Spawner.fifoDirectory).
 */
import type { Config } from "../config.js";
import type { Spawner } from "../spawner/spawner.js";

export function daemonHiddenPaths(config: Pick<Config, "tokenFile" | "tlsKey">, spawner: Pick<Spawner, "fifoDirectory">): string[] {
  return [config.tokenFile, config.tlsKey, spawner.fifoDirectory].filter((path) => path !== "");
}
