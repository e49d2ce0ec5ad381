// Browser builds, run by `npm install` (prepare) and `npm run build`:
// the SDK as one ESM file, and the web console the daemon serves at /console.
// Everything is bundled here: the machines that run the console have no CDN.
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { build } from "esbuild";

const root = new URL("../", import.meta.url);
const at = (path) => new URL(path, root).pathname;

// Type-check the console (browser code, DOM types) before bundling it.
execFileSync(process.execPath, [at("node_modules/typescript/bin/tsc"), "-p", at("server/console")], { stdio: "inherit" });

const common = { bundle: true, format: "esm", platform: "browser", target: "es2022", sourcemap: true, legalComments: "none", logLevel: "warning" };
// The SDK loads `ws` only on Node without a WebSocket; never in a browser.
await build({ ...common, entryPoints: [at("client-sdk/dist/index.js")], outfile: at("client-sdk/dist/browser/execmux-client.js"), external: ["ws"] });

const out = at("server/console-dist/");
// Chunk names change with their content: old ones must not linger (the daemon serves the whole folder).
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
// The console's first screen loads console.js; the Files and Sessions panels,
// uploads, downloads and recordings are chunks loaded when first used.
await build({
  ...common,
  entryPoints: [at("server/console/src/main.ts")],
  outdir: out,
  entryNames: "console",
  chunkNames: "chunk-[hash]",
  splitting: true,
  external: ["ws"],
  minify: true,
});
// The download worker is a classic script: every browser with service workers runs those.
await build({ ...common, format: "iife", entryPoints: [at("server/console/src/download-sw.ts")], outfile: `${out}download-sw.js`, minify: true });
copyFileSync(at("server/console/index.html"), `${out}index.html`);
copyFileSync(at("node_modules/@xterm/xterm/css/xterm.css"), `${out}xterm.css`);
copyFileSync(at("client-sdk/dist/browser/execmux-client.js"), `${out}execmux-client.js`);
// Compressed once here, so the daemon sends a quarter of the bytes and compresses nothing itself.
for (const name of readdirSync(out).filter((file) => /\.(js|css|html)$/.test(file))) {
  writeFileSync(`${out}${name}.gz`, gzipSync(readFileSync(`${out}${name}`), { level: 9 }));
}
console.log("browser builds: client-sdk/dist/browser/execmux-client.js, server/console-dist/");
