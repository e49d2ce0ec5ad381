#!/usr/bin/env node
// The `execmux` command. This file is in the repository, not built, because
// npm links a package's bin before the package's own build (`prepare`) has
// run: a bin pointing into dist/ would not be linked on a fresh clone, and
// `npx execmux` would then fetch an unrelated package of that name.
import { existsSync } from "node:fs";

const cli = new URL("../dist/cli.js", import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write("execmux: not built yet; run `npm run build` in the repository\n");
  process.exit(1);
}
await import(cli.href);
