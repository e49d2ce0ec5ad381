// Debian packages some tests drive: Chromium (through playwright-core) for
// the browser tests, tmux for the terminal tests, asciinema to replay the
// console's recordings, zsh for the shell-snapshot tests. Installs what is
// missing (as root, with apt-get); otherwise says how. The tests that need
// one fail without it, saying so.
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";

const PACKAGES = [
  { binary: "/usr/bin/chromium", name: "chromium", usedBy: "the browser tests" },
  { binary: "/usr/bin/tmux", name: "tmux", usedBy: "the terminal tests (attach, exec --tty, the fresh-clone test)" },
  { binary: "/usr/bin/asciinema", name: "asciinema", usedBy: "the console's recording test (asciinema cat replays the recording)" },
  { binary: "/usr/bin/zsh", name: "zsh", usedBy: "the zsh case of the shell-snapshot differential test" },
];

const missing = PACKAGES.filter((item) => !existsSync(item.binary));
if (missing.length > 0) {
  const names = missing.map((item) => item.name);
  const root = process.getuid?.() === 0;
  if (root && existsSync("/usr/bin/apt-get")) {
    console.log(`test setup: installing Debian's ${names.join(", ")} for ${missing.map((item) => item.usedBy).join(" and ")} (apt-get install)...`);
    const apt = (...args) => execFileSync("apt-get", args, { stdio: "inherit", env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
    try {
      apt("install", "-y", "--no-install-recommends", ...names);
    } catch {
      apt("update");
      apt("install", "-y", "--no-install-recommends", ...names);
    }
  } else {
    for (const item of missing) console.log(`test setup: ${item.binary} is missing; install Debian's ${item.name} for ${item.usedBy}`);
  }
}
