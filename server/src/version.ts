import { readFileSync } from "node:fs";

/** The version of the @execmux/server package this file was built into. */
export const VERSION = (JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }).version;
