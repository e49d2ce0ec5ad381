// The router-contract test (test/sandbox-router.test.ts) runs Debian's nginx
// as agent-sandbox's sandbox-router behaves. Installs it when missing (as
// root, with apt-get) and stops the service the package may start; fails
// loudly (never skips) when it cannot be had.
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";

const NGINX = "/usr/sbin/nginx";

function fail(message) {
  console.error(`test setup: ${message}`);
  process.exit(1);
}

if (!existsSync(NGINX)) {
  if (process.getuid?.() !== 0 || !existsSync("/usr/bin/apt-get")) {
    fail(`${NGINX} is missing: install Debian's nginx (apt-get install nginx) for the router-contract test`);
  }
  console.log("test setup: installing Debian's nginx for the router-contract test (apt-get install nginx)...");
  const apt = (...args) => execFileSync("apt-get", args, { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  try {
    apt("install", "-y", "--no-install-recommends", "nginx");
  } catch {
    apt("update");
    apt("install", "-y", "--no-install-recommends", "nginx");
  }
  if (!existsSync(NGINX)) fail("apt-get did not install nginx");
  // Where no policy-rc.d holds it back, the package starts its default site on port 80: the test runs its own.
  try {
    const pid = Number(readFileSync("/run/nginx.pid", "utf8").trim());
    if (pid > 0) process.kill(pid, "SIGQUIT");
  } catch {
    // not started
  }
}

try {
  execFileSync(NGINX, ["-v"], { stdio: ["ignore", "ignore", "pipe"] });
} catch (error) {
  fail(`nginx is installed but does not run: ${String(error.stderr ?? error.message).trim()}`);
}
