/**
 * The daemon's files that no sandboxed process may see, whatever the profile
 * grants: its token file and TLS key (a process that read them could ask the
 * daemon for an unsandboxed process wherever it can reach the daemon), the
 * spawner's FIFO directory (see Spawner.fifoDirectory), and the state
 * directory with the process hosts' sockets (a process that connects to one
 * speaks to the host as the daemon would, with no token).
 */
import type { Config } from "../config.js";
import { stateDirectoryPath } from "../host/host-protocol.js";
import type { Spawner } from "../spawner/spawner.js";

export function daemonHiddenPaths(config: Pick<Config, "tokenFile" | "tlsKey" | "stateDirectory">, spawner: Pick<Spawner, "fifoDirectory">): string[] {
  return [config.tokenFile, config.tlsKey, spawner.fifoDirectory, stateDirectoryPath(config.stateDirectory)].filter((path) => path !== "");
}
