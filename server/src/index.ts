export { startDaemon, type Daemon } from "./daemon.js";
export { loadConfig, ConfigSchema, configMarkdownTable, daemonFiles, type Config, ConfigError } from "./config.js";
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
