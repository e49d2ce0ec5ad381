/**
 * The protocol's runtime values that need no schema: error codes, JSON-RPC
 * shapes, signal names, the binary output frame, file URIs, Codex's sandbox
 * profiles and the limits code needs. The daemon imports these from
 * "@execmux/shared/core" and only types from the package's index, so it
 * starts without building the schemas (its validators are compiled at build
 * time).
 */
export * from "./errors.js";
export * from "./jsonrpc.js";
export * from "./signals.js";
export * from "./binary-frame.js";
export * from "./path-uri.js";
export * from "./sandbox-profiles.js";
export * from "./limits.js";
export * from "./upstream-version.js";
