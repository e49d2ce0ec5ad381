// Builds the native process host (server/native/src -> server/native/bin/execmux-host)
// with the system's C compiler, as node-gyp builds a native module: run by
// `npm install` (prepare) and `npm run build`. Skipped when the binary is newer
// than every source file. A missing compiler fails loudly: the daemon cannot
// run a process without the host.
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../server/native/", import.meta.url));
const sources = readdirSync(`${root}src`).filter((name) => /\.[ch]$/.test(name)).map((name) => `${root}src/${name}`);
const output = `${root}bin/execmux-host`;

const newestSource = Math.max(...sources.map((path) => statSync(path).mtimeMs), statSync(fileURLToPath(import.meta.url)).mtimeMs);
let built = 0;
try {
  built = statSync(output).mtimeMs;
} catch {
  // not built yet
}
if (built < newestSource) {
  mkdirSync(`${root}bin`, { recursive: true });
  const compiler = process.env.CC || "cc";
  const args = ["-std=gnu11", "-O2", "-g", "-Wall", "-Wextra", "-o", output, ...sources.filter((path) => path.endsWith(".c"))];
  try {
    execFileSync(compiler, args, { stdio: "inherit" });
  } catch (error) {
    console.error(`build-native: cannot build the process host with ${compiler} (${error.message}); install a C compiler (Debian: apt-get install gcc) and run npm run build again`);
    process.exit(1);
  }
  console.log(`build-native: ${output}`);
}
