export { startDaemon, type Daemon } from "./daemon.js";
export { loadConfig, ConfigSchema, type Config, ConfigError } from "./config.js";
