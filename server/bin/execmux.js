#!/usr/bin/env -S node --no-memory-reducer
// --no-memory-reducer: V8's memory reducer shrinks the heap a few seconds
// after a process goes quiet with bursts of incremental GC: in an idle
// daemon that was its only work (about 20 ms of CPU and 100 wake-ups in the
// first minute at rest); without it the daemon stays asleep and keeps about
// 3 MiB more. It cannot be set once Node runs, nor in NODE_OPTIONS, so each
// way of starting the daemon passes it (package.json's start, docker/entrypoint.sh).
// The `execmux` command. This file is in the repository, not built, because
// npm links a package's bin before the package's own build (`prepare`) has
// run: a bin pointing into dist/ would not be linked on a fresh clone, and
// `npx execmux` would then fetch an unrelated package of that name.
// dist/cli.mjs is the command bundled (scripts/build-bundle.mjs); dist/main.js
// the same as tsc built it.
import { existsSync } from "node:fs";

const bundle = new URL("../dist/cli.mjs", import.meta.url);
const unbundled = new URL("../dist/main.js", import.meta.url);
const cli = existsSync(bundle) ? bundle : unbundled;
if (!existsSync(cli)) {
  process.stderr.write("execmux: not built yet; run `npm run build` in the repository\n");
  process.exit(1);
}
await import(cli.href);
