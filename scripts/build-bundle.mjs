// The `execmux` command as one bundle (server/dist/cli.mjs, with chunks in
// server/dist/chunks/ that load on use): a daemon in every sandbox starts
// sooner and rests smaller when it reads a few files instead of hundreds.
// Built from tsc's output (server/dist/main.js and what it imports), after
// scripts/build-protocol.mjs; run by `npm install` (prepare), `npm run
// build` and `npm test`. dist/ as tsc wrote it stays beside it: the library
// (`import "@execmux/server"`) and the sandbox's confined helper use it.
import { copyFileSync, rmSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const dist = fileURLToPath(new URL("../server/dist/", import.meta.url));
rmSync(`${dist}chunks`, { recursive: true, force: true });
await build({
  entryPoints: { cli: `${dist}main.js` },
  outdir: dist,
  chunkNames: "chunks/[name]-[hash]",
  // .mjs: an ES module by its name, so Node need not look for a package.json to tell (a file read each, at start-up).
  outExtension: { ".js": ".mjs" },
  bundle: true,
  splitting: true,
  platform: "node",
  format: "esm",
  target: "node20",
  minify: true,
  // Libraries tell errors apart by their class names (proxy-chain: `error.name === "RequestError"`, set from `RequestError.name`).
  keepNames: true,
  legalComments: "none",
  // Loaded with require() (createRequire) only when asked for, or with a native part.
  external: ["pino-pretty", "node-pty"],
  // ws unmasks client frames with the optional native `bufferutil` when it can load it, else a byte at a time:
  // this word-at-a-time JavaScript stands in for it (server/src/transport/ws-unmask.ts).
  alias: { bufferutil: `${dist}transport/ws-unmask.js` },
  // Some CommonJS dependencies call require(); an ES module has none of its own.
  banner: { js: "import { createRequire as __execmuxRequire } from 'node:module'; const require = __execmuxRequire(import.meta.url);" },
  logLevel: "warning",
});
// The same entry as cli.js, where `node server/dist/cli.js serve` (npm start, scripts, supervisors) looks for it.
copyFileSync(`${dist}cli.mjs`, `${dist}cli.js`);
console.log("build-bundle: server/dist/cli.mjs (and cli.js)");
