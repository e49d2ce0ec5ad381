// The sandbox (server/src/sandbox/) runs sandboxed processes with Debian's
// bubblewrap, and its tests run it for real. Installs it when missing (as
// root, with apt-get), then checks it can create the namespaces a sandbox
// needs; fails loudly (never skips) when either cannot be done.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

const BWRAP = "/usr/bin/bwrap";

function fail(message) {
  console.error(`test setup: ${message}`);
  process.exit(1);
}

if (!existsSync(BWRAP)) {
  if (process.getuid?.() !== 0 || !existsSync("/usr/bin/apt-get")) {
    fail(`${BWRAP} is missing: install Debian's bubblewrap (apt-get install bubblewrap) for the sandbox and its tests`);
  }
  console.log("test setup: installing Debian's bubblewrap for the sandbox (apt-get install bubblewrap)...");
  const apt = (...args) => execFileSync("apt-get", args, { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  try {
    apt("install", "-y", "--no-install-recommends", "bubblewrap");
  } catch {
    apt("update");
    apt("install", "-y", "--no-install-recommends", "bubblewrap");
  }
  if (!existsSync(BWRAP)) fail("apt-get did not install bubblewrap");
}

// The namespaces every sandbox gets (bwrap-args.ts); without them no sandbox runs here.
try {
  execFileSync(BWRAP, ["--unshare-user", "--disable-userns", "--unshare-pid", "--unshare-ipc", "--unshare-net", "--cap-drop", "ALL",
    "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--", "true"], { stdio: ["ignore", "ignore", "pipe"] });
} catch (error) {
  fail(`bubblewrap is installed but cannot create a sandbox here (user namespaces off?): ${String(error.stderr ?? error.message).trim()}`);
}
