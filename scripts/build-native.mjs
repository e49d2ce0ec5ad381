// Builds the native process host from server/native/src with the system's C
// compiler ($CC, else cc), in one of two ways:
//
//   node scripts/build-native.mjs              -> server/native/bin/execmux-host
//     A clone's build, run by `npm install` (prepare) and `npm run build`,
//     linked against this machine's libc, with debug information. Skipped
//     when the binary is newer than every source file.
//
//   node scripts/build-native.mjs --prebuilt   -> server/native/prebuilt/linux-ARCH/execmux-host
//     What @execmux/server ships (its prepack script runs this, so every
//     `npm pack` and `npm publish` of the folder builds it afresh): statically
//     linked and stripped, so it needs no libc, loader or compiler where it is
//     installed and runs on any Linux of this architecture, glibc or musl.
//     Static glibc is safe here because the host calls nothing that loads
//     code at run time: no NSS (getpwnam, getaddrinfo, ...), no dlopen, no
//     iconv or locales. Checked after linking: no program interpreter, no
//     dynamic section, and the architecture of the directory's name.
//
// A missing compiler (or, for --prebuilt, a missing static libc) fails
// loudly: the daemon cannot run a process without the host.
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, statSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { elfInfo } from "./elf-info.mjs";

const root = fileURLToPath(new URL("../server/native/", import.meta.url));
const sources = readdirSync(`${root}src`).filter((name) => /\.[ch]$/.test(name)).map((name) => `${root}src/${name}`);
const compiler = process.env.CC || "cc";
const flags = ["-std=gnu11", "-O2", "-Wall", "-Wextra"];
const prebuilt = process.argv.includes("--prebuilt");

function compile(output, extraFlags, hint) {
  mkdirSync(output.slice(0, output.lastIndexOf("/")), { recursive: true });
  try {
    execFileSync(compiler, [...flags, ...extraFlags, "-o", output, ...sources.filter((path) => path.endsWith(".c"))], { stdio: ["ignore", 2, 2] });
  } catch (error) {
    console.error(`build-native: cannot build the process host with ${compiler} (${error.message}); ${hint}`);
    process.exit(1);
  }
}

if (prebuilt) {
  if (process.platform !== "linux") {
    console.error(`build-native: the process host is built for Linux only, not ${process.platform}`);
    process.exit(1);
  }
  const output = `${root}prebuilt/linux-${process.arch}/execmux-host`;
  compile(output, ["-static", "-s"], "a static build needs a C compiler and a static libc (Debian and Ubuntu: apt-get install gcc libc6-dev; Fedora: glibc-static)");
  const info = elfInfo(output);
  if (!info.static || info.arch !== process.arch) {
    console.error(`build-native: ${output} is ${info.static ? "static" : "dynamically linked"} for ${info.arch}; the package needs it static for ${process.arch}`);
    process.exit(1);
  }
  // stderr: `npm pack --json` prints its JSON on stdout, which the prepack script shares.
  console.error(`build-native: ${output} (static, ${process.arch}, ${statSync(output).size} bytes)`);
} else {
  const output = `${root}bin/execmux-host`;
  const newestSource = Math.max(...sources.map((path) => statSync(path).mtimeMs), statSync(fileURLToPath(import.meta.url)).mtimeMs);
  let built = 0;
  try {
    built = statSync(output).mtimeMs;
  } catch {
    // not built yet
  }
  if (built < newestSource) {
    compile(output, ["-g"], "install a C compiler (Debian: apt-get install gcc) and run npm run build again");
    console.log(`build-native: ${output}`);
  }
}
