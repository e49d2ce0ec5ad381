/**
 * linuxApprovedRootWritePreservesRestrictions, against the real upstream: the
 * profile Codex sends for a command the user approved to write anywhere
 * (`for_approved_command`: `/` writable, the profile's denials kept, and
 * `/.git`, `/.agents`, `/.codex` granted write) keeps the standard devices,
 * and a grant on one of those root metadata paths that is a symlink into a
 * denied directory does not open that directory: what is denied stays
 * denied, through the link too. A target the profile does not deny is
 * written through the link, and one the profile grants itself is read.
 *
 * The root metadata paths live at the filesystem root, so each server runs in
 * a root of the test's making (bubblewrap: the host's top-level entries
 * bound in, plus `/.codex`, `/.git` and `/.agents` as each case needs them).
 */
import { spawn } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { afterAll } from "vitest";
import { CLI } from "./helpers/cli.js";
import { describeDifferential, type DifferentialCase } from "./helpers/differential.js";
import { events, start } from "./helpers/exec-server-frames.js";
import { upstreamCodex } from "./helpers/upstream.js";
// @ts-expect-error: a plain .mjs script without types.
import { launchUpstream } from "../scripts/launch-upstream.mjs";

/** Outside any server's scratch directory, the same path for both: the directories the profile denies or not. */
const base = mkdtempSync("/tmp/execmux-root-metadata-");
afterAll(() => rmSync(base, { recursive: true, force: true }));
mkdirSync(join(base, "private/reopened"), { recursive: true });
writeFileSync(join(base, "private/reopened/secret"), "private\n");
writeFileSync(join(base, "private/sibling"), "sibling\n");
mkdirSync(join(base, "public"));
symlinkSync(join(base, "private/reopened"), join(base, "gitlink"));

/** bubblewrap's options for a root holding the host's top-level entries and `extra` (its own options). */
function rootWith(extra: string[]): string[] {
  const args = ["--die-with-parent", "--tmpfs", "/"];
  for (const name of readdirSync("/")) {
    const path = `/${name}`;
    const stat = lstatSync(path);
    if (stat.isSymbolicLink()) args.push("--symlink", readlinkSync(path), path);
    else if (name === "dev") args.push("--dev-bind", path, path);
    else args.push(stat.isDirectory() ? "--bind" : "--ro-bind", path, path);
  }
  return [...args, ...extra];
}

const quote = (text: string) => `'${text.replaceAll("'", "'\\''")}'`;

/** Both servers, each in a root with `extra`. */
function serversIn(extra: string[]) {
  return {
    upstream: async () => {
      // launchUpstream runs `<binary> exec-server ...`: this binary is the real one, in the root.
      const wrapper = join(base, `upstream-${Math.random().toString(36).slice(2)}.sh`);
      writeFileSync(wrapper, `#!/bin/sh\nexec bwrap ${rootWith(extra).map(quote).join(" ")} -- ${quote(upstreamCodex())} "$@"\n`);
      chmodSync(wrapper, 0o755);
      return (await launchUpstream(wrapper)) as { url: string; stop(): void };
    },
    execmux: async () => {
      const child = spawn("bwrap", [...rootWith(extra), "--", process.execPath, CLI, "serve", "--listen", "ws://127.0.0.1:0", "--log-level", "warn"], {
        stdio: ["ignore", "pipe", "inherit"],
      });
      const url = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout! }).on("line", (line) => line.startsWith("ws://") && resolve(line.trim()));
        child.once("exit", (code) => reject(new Error(`execmux exited (${code}) before printing its URL`)));
      });
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      return { url, close: () => (child.kill("SIGTERM"), exited) };
    },
  };
}

const write = (path: string) => ({ path: { type: "path", path: `file://${path}` }, access: "write" });
/** What Codex's for_approved_command makes of a read-only profile that denies `private`, plus `extra` entries. */
const approved = (extra: unknown[] = []) => ({
  permissions: {
    type: "managed",
    file_system: {
      type: "restricted",
      entries: [
        { path: { type: "special", value: { kind: "root" } }, access: "write" },
        { path: { type: "path", path: `file://${base}/private` }, access: "none" },
        write("/.git"),
        write("/.agents"),
        write("/.codex"),
        ...extra,
      ],
    },
    network: "restricted",
  },
  cwd: "file://<scratch>",
  workspaceRoots: ["file://<scratch>"],
  windowsSandboxLevel: "disabled",
  useLegacyLandlock: false,
});

const PROBE = [
  "ls /dev | tr '\\n' ' '; echo",
  `cat ${base}/private/reopened/secret 2>&1; echo "read the target: $?"`,
  `cat /.codex/secret 2>&1; echo "read through /.codex: $?"`,
  `cat /.git/secret 2>&1; echo "read through /.git: $?"`,
  `(printf bad > /.codex/changed) 2>&1; echo "write through /.codex: $?"`,
  `(printf good > /.agents/allowed) 2>&1; echo "write /.agents: $?"`,
  `(printf good > <scratch>/marker) 2>&1; echo "write the project: $?"`,
].join("; ");

const intoDenied: DifferentialCase[] = [
  {
    name: "/.codex and /.git link into the denied directory: the grants on them do not open it",
    steps: [start("p", PROBE, { sandbox: approved() }), events("p")],
  },
  {
    name: "the profile grants the link's target itself: it is read through the link",
    steps: [start("p", PROBE, { sandbox: approved([write(`${base}/private/reopened`)]) }), events("p")],
  },
];
describeDifferential(
  "sandbox: an approved root write, root metadata linked into a denied directory",
  intoDenied,
  { launch: serversIn(["--symlink", join(base, "private/reopened"), "/.codex", "--symlink", join(base, "gitlink"), "/.git", "--dir", "/.agents"]) },
);

const intoPublic: DifferentialCase[] = [
  {
    name: "/.codex links into a directory the profile does not deny: written through it",
    steps: [start("p", `${PROBE}; cat ${base}/public/changed; echo; rm -f ${base}/public/changed`, { sandbox: approved() }), events("p")],
  },
];
describeDifferential("sandbox: an approved root write, root metadata linked elsewhere", intoPublic, {
  launch: serversIn(["--symlink", join(base, "public"), "/.codex", "--dir", "/.agents"]),
});
