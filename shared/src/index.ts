export * from "./errors.js";
export * from "./jsonrpc.js";
export * from "./methods.js";
export * from "./schemas.js";
export * from "./signals.js";
export * from "./binary-frame.js";
export * from "./sandbox-schemas.js";
export * from "./sandbox-profiles.js";
