/** execmux's version, from the server package's package.json: one source for --version and environment/info. */
import { readFileSync } from "node:fs";

export const EXECMUX_VERSION: string = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;
