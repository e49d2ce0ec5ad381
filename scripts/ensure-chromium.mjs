// The browser tests drive Debian's Chromium through playwright-core. Installs
// it when missing (as root, with apt-get); otherwise says how, and the
// browser tests are skipped rather than failing for want of a browser.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

const CHROMIUM = "/usr/bin/chromium";
if (!existsSync(CHROMIUM)) {
  const root = process.getuid?.() === 0;
  if (root && existsSync("/usr/bin/apt-get")) {
    console.log("test setup: installing Debian's chromium for the browser tests (apt-get install chromium)...");
    const apt = (...args) => execFileSync("apt-get", args, { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
    try {
      apt("install", "-y", "--no-install-recommends", "chromium");
    } catch {
      apt("update");
      apt("install", "-y", "--no-install-recommends", "chromium");
    }
  } else {
    console.log(`test setup: ${CHROMIUM} is missing; install Debian's chromium to run the browser tests (they are skipped)`);
  }
}
