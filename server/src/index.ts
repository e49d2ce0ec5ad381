export { startDaemon, type Daemon } from "./daemon.js";
export { loadConfig, configMarkdownTable, daemonFiles, type Config, ConfigError } from "./config.js";
export { ConfigSchema } from "./config-schema.js";
export { poisonReturnedSlabs } from "./process/slab-pool.js";
export {
  prepareFsSandbox,
  prepareProcessSandbox,
  readsWholeDisk,
  writesWholeDisk,
  runConfined,
  sandboxAvailability,
  sandboxSupport,
  ConfinedCallError,
  type PreparedFsSandbox,
  type PreparedProcessSandbox,
  type SandboxAvailability,
} from "./sandbox/index.js";
