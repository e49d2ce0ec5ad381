/**
 * fs/watchMissing's bounds, against a real daemon in this process: a watch
 * holds inotify watches only while its connection lives and only one watch's
 * worth per connection, and the daemon-wide bound answers `watching: false`
 * (the client polls) instead of using up the host's inotify watches. What it
 * answers is compared with upstream in upstream-differential-fs-caps.test.ts.
 */
import { mkdirSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it, vi } from "vitest";
import { MAX_WATCHED_DIRECTORIES_PER_DAEMON, MAX_WATCH_MISSING_DIRECTORIES } from "../server/src/methods/fs/limits.js";
import { startTestDaemon } from "./helpers/daemon.js";
import { scratchDirectory } from "./helpers/scratch.js";
import { WireClient } from "./helpers/wire-client.js";

/** inotify watches this process (the daemon under test) holds, from /proc. */
function inotifyWatches(): number {
  let watches = 0;
  for (const fd of readdirSync("/proc/self/fd")) {
    let target = "";
    try {
      target = readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      continue;
    }
    if (target !== "anon_inode:inotify") continue;
    watches += readFileSync(`/proc/self/fdinfo/${fd}`, "utf8").split("\n").filter((line) => line.startsWith("inotify wd:")).length;
  }
  return watches;
}

/** A chain of existing directories under `root` deep enough that a path below it has exactly `limit` directories above it. */
function deepestWatchable(root: string, limit: number): string {
  let directory = root;
  while (directory.split("/").filter(Boolean).length < limit - 1) directory = join(directory, "d");
  mkdirSync(directory, { recursive: true });
  return join(directory, "missing");
}

const watch = (client: WireClient, watchId: number, missing: string[]) =>
  client.call<{ watching: boolean }>("fs/watchMissing", { watchId, missing: missing.map((path) => pathToFileURL(path).href) });

describe("fs/watchMissing bounds", () => {
  it("a watch's directories are watched only while its connection lives", async () => {
    const daemon = await startTestDaemon();
    const scratch = scratchDirectory("watch-missing");
    const missing = deepestWatchable(scratch, MAX_WATCH_MISSING_DIRECTORIES);
    const before = inotifyWatches();
    const client = await WireClient.ready(daemon.url);
    expect(await watch(client, 1, [missing])).toEqual({ watching: true });
    expect(inotifyWatches()).toBeGreaterThanOrEqual(before + 1);
    client.close();
    await client.closed;
    await vi.waitFor(() => expect(inotifyWatches()).toBe(before));
  });

  it("replacing a watch again and again never holds more than one watch's directories", async () => {
    const daemon = await startTestDaemon();
    const scratch = scratchDirectory("watch-missing");
    const before = inotifyWatches();
    const client = await WireClient.ready(daemon.url);
    for (let watchId = 1; watchId <= 200; watchId++) {
      // Each watch a directory of its own, so nothing is shared between them.
      const directory = join(scratch, `w${watchId}`);
      mkdirSync(directory);
      expect(await watch(client, watchId, [join(directory, "missing")])).toEqual({ watching: true });
    }
    // The last watch: its directory, and those above it (shared with nothing else in this process or not).
    expect(inotifyWatches() - before).toBeLessThanOrEqual(scratch.split("/").length + 1);
    client.close();
  });

  it(`past ${MAX_WATCHED_DIRECTORIES_PER_DAEMON} directories across the daemon a watch is refused, and a closed connection frees its share`, async () => {
    const daemon = await startTestDaemon();
    const scratch = scratchDirectory("watch-missing");
    const missing = deepestWatchable(scratch, MAX_WATCH_MISSING_DIRECTORIES);
    const perWatch = missing.split("/").filter(Boolean).length;
    const fitting = Math.floor(MAX_WATCHED_DIRECTORIES_PER_DAEMON / perWatch);
    const clients = await Promise.all(Array.from({ length: fitting + 1 }, () => WireClient.ready(daemon.url)));
    for (const client of clients.slice(0, fitting)) expect(await watch(client, 1, [missing])).toEqual({ watching: true });
    const last = clients[fitting]!;
    expect(await watch(last, 1, [missing])).toEqual({ watching: false });
    clients[0]!.close();
    await clients[0]!.closed;
    await vi.waitFor(async () => expect(await watch(last, Date.now(), [missing])).toEqual({ watching: true }));
    for (const client of clients) client.close();
  });
});
