// Rewrites the README's configuration table from the daemon's config schema.
// Run after changing server/src/config.ts: npm run build && npm run readme:config
import { readFileSync, writeFileSync } from "node:fs";
import { configMarkdownTable } from "@execmux/server";

const path = new URL("../README.md", import.meta.url);
const readme = readFileSync(path, "utf8");
const updated = readme.replace(
  /(<!-- config-table:start -->\n)[\s\S]*?(\n<!-- config-table:end -->)/,
  // A function, so a "$$" in a description is not read as a replacement pattern.
  (_, start, end) => `${start}${configMarkdownTable()}${end}`,
);
writeFileSync(path, updated);
console.log(updated === readme ? "README config table already up to date" : "README config table updated");
