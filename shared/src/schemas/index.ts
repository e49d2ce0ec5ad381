export * from "./common.js";
export * from "./environment.js";
export * from "./fs.js";
export * from "./handshake.js";
export * from "./http.js";
export * from "./network-proxy.js";
export * from "./process.js";
export * from "./session.js";
