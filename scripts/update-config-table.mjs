// Rewrites the configuration table in docs/operations.md from the daemon's config schema.
// Run after changing server/src/config.ts: npm run build && npm run docs:config
import { readFileSync, writeFileSync } from "node:fs";
import { configMarkdownTable } from "@execmux/server";

const path = new URL("../docs/operations.md", import.meta.url);
const page = readFileSync(path, "utf8");
const updated = page.replace(
  /(<!-- config-table:start -->\n)[\s\S]*?(\n<!-- config-table:end -->)/,
  // A function, so a "$$" in a description is not read as a replacement pattern.
  (_, start, end) => `${start}${configMarkdownTable()}${end}`,
);
writeFileSync(path, updated);
console.log(updated === page ? "docs/operations.md: config table already up to date" : "docs/operations.md: config table updated");
