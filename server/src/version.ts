/** execmux's version, from the server package's package.json: one source for --version and environment/info. */
import { readFileSync } from "node:fs";
import { inPackage } from "./package-root.js";

export const EXECMUX_VERSION: string = (JSON.parse(readFileSync(inPackage("package.json"), "utf8")) as { version: string }).version;
