/**
 * The "cgroup" containment (see process-trees.ts). The daemon makes one
 * directory below its own cgroup, `execmux-<pid>-<random>`, and in it one
 * cgroup per child. The child is born inside it: the spawner helper moves
 * itself in for the fork and back out after (spawner-main.ts), for pipe and
 * PTY children alike, so not even a grandchild forked in the first
 * microsecond is outside. SIGKILL to a tree is one write
 * to its cgroup.kill, which the kernel applies to every member and to
 * anything forked meanwhile; shutdown kills the whole directory at once.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { randomBytes } from "node:crypto";
import { cgroupPopulated, enterCgroup, ownCgroupDirectory } from "./cgroup-paths.js";
import { signalGroup } from "./process-tree.js";
import { ProcTrees } from "./proc-trees.js";
import { removeDaemonCgroup, removeStaleDaemonCgroups } from "./stale-cgroups.js";
import type { ProcessTrees, TreeHandle } from "./process-trees.js";

/** How often cgroups whose child closed but left processes behind are tried again for removal. */
const SWEEP_MS = 1_000;

function writeQuietly(path: string, text: string): void {
  try {
    writeFileSync(path, text);
  } catch {
    // The cgroup is gone already.
  }
}

class CgroupHandle implements TreeHandle {
  private pid: number | undefined;

  constructor(
    readonly cgroup: string,
    private readonly onRelease: (handle: CgroupHandle) => void,
  ) {}

  bind(pid: number): void {
    this.pid = pid;
  }

  signalAll(signal: NodeJS.Signals): void {
    let pids: string[];
    try {
      pids = readFileSync(join(this.cgroup, "cgroup.procs"), "latin1").split("\n");
    } catch {
      return;
    }
    for (const pid of pids) {
      if (pid === "") continue;
      try {
        process.kill(Number(pid), signal);
      } catch {
        // exited meanwhile
      }
    }
  }

  kill(): void {
    writeQuietly(join(this.cgroup, "cgroup.kill"), "1");
  }

  killGroup(): void {
    if (this.pid !== undefined) signalGroup(this.pid, "SIGKILL");
  }

  release(): void {
    this.onRelease(this);
  }

  /** True once the cgroup is removed (it can be only once nothing lives in it). */
  remove(): boolean {
    try {
      rmdirSync(this.cgroup);
      return true;
    } catch (error) {
      return (error as NodeJS.ErrnoException).code === "ENOENT";
    }
  }
}

export class CgroupTrees implements ProcessTrees {
  readonly kind = "cgroup" as const;
  private next = 0;
  private readonly byOwner = new Map<object, Set<CgroupHandle>>();
  /** Released handles whose cgroup still held processes: removed by the sweep once empty. */
  private readonly lingering = new Map<CgroupHandle, object>();
  private sweepTimer: NodeJS.Timeout | undefined;
  /** Where a cgroup cannot be made (a descendants limit), the child is held the other way. */
  private readonly fallback = new ProcTrees();

  private constructor(private readonly root: string) {}

  get cgroupRoot(): string {
    return this.root;
  }

  /**
   * Makes the daemon's directory and proves the mechanism works here: a
   * cgroup can be made, has cgroup.kill, and this process may move into it
   * and back (the permission the spawner needs). Undefined
   * where any of that fails.
   */
  static create(): CgroupTrees | undefined {
    const own = ownCgroupDirectory();
    if (!own) return undefined;
    removeStaleDaemonCgroups(own);
    const root = join(own, `execmux-${process.pid}-${randomBytes(4).toString("hex")}`);
    const probe = join(root, "probe");
    try {
      mkdirSync(root);
    } catch {
      return undefined;
    }
    try {
      mkdirSync(probe);
      // Write-only: it exists from Linux 5.14 on.
      if (!existsSync(join(probe, "cgroup.kill"))) throw new Error("no cgroup.kill");
      enterCgroup(probe);
      enterCgroup(own);
      rmdirSync(probe);
      return new CgroupTrees(root);
    } catch {
      try {
        enterCgroup(own);
      } catch {
        // never entered
      }
      try {
        rmdirSync(probe);
      } catch {
        // never made
      }
      rmdirSync(root);
      return undefined;
    }
  }

  create(owner: object): TreeHandle {
    const directory = join(this.root, `p${this.next++}`);
    try {
      mkdirSync(directory);
    } catch {
      return this.fallback.create(owner);
    }
    let handles = this.byOwner.get(owner);
    if (!handles) this.byOwner.set(owner, (handles = new Set()));
    const owned = handles;
    const handle: CgroupHandle = new CgroupHandle(directory, (released) => {
      if (released.remove()) {
        owned.delete(released);
        if (owned.size === 0 && this.byOwner.get(owner) === owned) this.byOwner.delete(owner);
        return;
      }
      this.lingering.set(released, owner);
      this.sweepTimer ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
    });
    owned.add(handle);
    return handle;
  }

  killOwner(owner: object): void {
    for (const handle of this.byOwner.get(owner) ?? []) handle.kill();
    this.fallback.killOwner(owner);
  }

  killAll(): void {
    // The kernel kills the whole subtree, every child's cgroup with it.
    writeQuietly(join(this.root, "cgroup.kill"), "1");
    this.fallback.killAll();
  }

  async dispose(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (cgroupPopulated(this.root) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
    clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
    this.byOwner.clear();
    this.lingering.clear();
    // If something outlived the kill (it can only be stuck in the kernel), the next daemon started here removes it.
    removeDaemonCgroup(this.root);
  }

  private sweep(): void {
    for (const [handle, owner] of this.lingering) {
      if (!handle.remove()) continue;
      this.lingering.delete(handle);
      const owned = this.byOwner.get(owner);
      owned?.delete(handle);
      if (owned?.size === 0) this.byOwner.delete(owner);
    }
    if (this.lingering.size === 0) {
      clearInterval(this.sweepTimer);
      this.sweepTimer = undefined;
    }
  }
}
