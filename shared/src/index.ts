export * from "./errors.js";
export * from "./jsonrpc.js";
export * from "./methods.js";
export * from "./schemas/index.js";
export * from "./signals.js";
export * from "./binary-frame.js";
export * from "./path-uri.js";
