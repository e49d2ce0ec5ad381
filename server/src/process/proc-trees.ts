/** The "process-tree" containment (see process-trees.ts): process groups and /proc's children lists. */
import { scanForTrees, signalGroup, signalMembers, treeOf, type Member } from "./process-tree.js";
import type { ProcessTrees, TreeHandle } from "./process-trees.js";

class ProcTreeHandle implements TreeHandle {
  readonly cgroup = undefined;
  pid: number | undefined;
  /** What an earlier SIGTERM found: a member whose parent died since is still reached through this. */
  remembered: Member[] = [];

  constructor(private readonly onRelease: (handle: ProcTreeHandle) => void) {}

  bind(pid: number): void {
    this.pid = pid;
  }

  // Each looks before it signals: a parent killed first would hand its
  // children to init, out of reach of the walk.
  signalAll(signal: NodeJS.Signals): void {
    if (this.pid === undefined) return;
    const members = this.members();
    this.remembered = members;
    signalGroup(this.pid, signal);
    signalMembers(members, signal);
  }

  kill(): void {
    if (this.pid === undefined) return;
    const members = this.members();
    signalGroup(this.pid, "SIGKILL");
    signalMembers(members, "SIGKILL");
  }

  killGroup(): void {
    if (this.pid !== undefined) signalGroup(this.pid, "SIGKILL");
  }

  release(): void {
    this.onRelease(this);
  }

  /** The tree below the child, and below anything an earlier SIGTERM found there. */
  private members(): Member[] {
    const found = new Map<number, Member>();
    for (const root of [this.pid!, ...this.remembered.map((member) => member.pid)]) {
      if (found.has(root)) continue;
      for (const member of treeOf(root)) found.set(member.pid, member);
    }
    return [...found.values()];
  }
}

export class ProcTrees implements ProcessTrees {
  readonly kind = "process-tree" as const;
  readonly cgroupRoot = undefined;
  private readonly byOwner = new Map<object, Set<ProcTreeHandle>>();

  create(owner: object): TreeHandle {
    let handles = this.byOwner.get(owner);
    if (!handles) this.byOwner.set(owner, (handles = new Set()));
    const owned = handles;
    const handle = new ProcTreeHandle((released) => {
      owned.delete(released);
      if (owned.size === 0 && this.byOwner.get(owner) === owned) this.byOwner.delete(owner);
    });
    owned.add(handle);
    return handle;
  }

  killOwner(owner: object): void {
    this.killBatch([...(this.byOwner.get(owner) ?? [])]);
  }

  killAll(): void {
    this.killBatch([...this.byOwner.values()].flatMap((handles) => [...handles]));
  }

  async dispose(): Promise<void> {
    this.byOwner.clear();
  }

  /** One scan of /proc for the whole batch, however many trees it holds. */
  private killBatch(handles: ProcTreeHandle[]): void {
    const leaders = new Set<number>();
    const remembered: Member[] = [];
    for (const handle of handles) {
      if (handle.pid === undefined) continue;
      leaders.add(handle.pid);
      remembered.push(...handle.remembered);
    }
    if (leaders.size === 0) return;
    // Found before anything is killed, while every parent still holds its children.
    const members = scanForTrees(leaders, remembered);
    for (const leader of leaders) signalGroup(leader, "SIGKILL");
    signalMembers(members, "SIGKILL");
  }
}
