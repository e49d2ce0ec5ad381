/**
 * The daemon's private directory (the process hosts' sockets, locks and
 * logs): a process that connects to a host's socket speaks to it as the
 * daemon would, with no token, so no other user may read it, plant anything
 * in it, replace it, or keep the daemon from making it.
 *
 * A directory is private when it is ours (owned by this user, mode 0700) and
 * every directory above it is owned by root or by us and writable by nobody
 * else unless sticky (in a sticky directory such as /tmp others cannot
 * rename or remove our entries). Configured with --state-directory, one that
 * is not private stops the daemon with a message saying why. By default the
 * first private one of:
 *
 * 1. $XDG_RUNTIME_DIR/execmux (the user's runtime directory, private by design);
 * 2. for root, /run/execmux (only root can make names in /run);
 * 3. $TMPDIR/execmux-UID (a stable name, so the next `execmux serve` finds its host);
 * 4. a new directory with an unpredictable name in $TMPDIR, when another user took
 *    the name in 3 first: the daemon starts, with a warning that a later
 *    `execmux serve` will not find this one's process host.
 *
 * Another user creating $TMPDIR/execmux-0 therefore no longer keeps root's
 * daemon from starting (it never looks there), nor anyone else's.
 */
import { lstatSync, mkdirSync, mkdtempSync, realpathSync, type Stats } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";

const uid = () => process.getuid?.() ?? 0;

/** Why `path` is not private, or undefined when it is. */
export function notPrivateBecause(path: string): string | undefined {
  let found: Stats;
  let real: string;
  try {
    found = lstatSync(path);
    real = realpathSync(path);
  } catch (error) {
    return `it cannot be examined (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
  if (!found.isDirectory()) return "it is not a directory (a symlink is not followed)";
  if (found.uid !== uid()) return `it belongs to user ${found.uid}, not ${uid()}`;
  if ((found.mode & 0o077) !== 0) return `its mode is ${(found.mode & 0o777).toString(8)}, not 700`;
  // Both ways to it: the names as given (a symlink among them is replaced through its parent) and where they lead.
  for (const start of new Set([resolve(path), real])) {
    for (let above = dirname(start); ; above = dirname(above)) {
      const reason = unsafeAncestor(above);
      if (reason) return reason;
      if (dirname(above) === above) break;
    }
  }
  return undefined;
}

/** Why another user could rename or replace what is in `directory`, if they could. */
function unsafeAncestor(directory: string): string | undefined {
  let found: Stats;
  try {
    found = lstatSync(directory);
  } catch (error) {
    return `${directory} above it cannot be examined (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
  if (found.uid !== 0 && found.uid !== uid()) return `${directory} above it belongs to user ${found.uid}`;
  // A symlink's own mode means nothing (it cannot be changed, only replaced through its parent, checked next).
  if (found.isSymbolicLink()) return undefined;
  const sticky = (found.mode & 0o1000) !== 0;
  if ((found.mode & 0o022) !== 0 && !sticky) return `${directory} above it is writable by other users and not sticky`;
  return undefined;
}

/** Makes `path` (0700; its missing parents too) if missing; undefined when it is then private, else why not. */
function makePrivate(path: string): string | undefined {
  try {
    mkdirSync(path, { recursive: true, mode: 0o700 });
  } catch (error) {
    return `it cannot be made (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
  }
  return notPrivateBecause(path);
}

/** The default places, most preferred first (3 in the list above is last). */
export function defaultCandidates(): string[] {
  const candidates: string[] = [];
  if (process.env.XDG_RUNTIME_DIR) candidates.push(join(process.env.XDG_RUNTIME_DIR, "execmux"));
  if (uid() === 0) candidates.push("/run/execmux");
  candidates.push(join(tmpdir(), `execmux-${uid()}`));
  return candidates;
}

export interface StateDirectory {
  readonly path: string;
  /** False for an unpredictable fallback: a later daemon will not find what is in it. */
  readonly stable: boolean;
  /** The places passed over, and why: worth a warning. */
  readonly passedOver: readonly string[];
}

/** The private state directory, made if missing; throws when the configured one is not private. */
export function resolveStateDirectory(configured: string): StateDirectory {
  if (configured) {
    const reason = makePrivate(configured);
    if (reason) {
      throw new Error(`--state-directory ${configured} is not private: ${reason}. It must be a directory of user ${uid()} that nobody else can open or replace (mode 0700)`);
    }
    return { path: configured, stable: true, passedOver: [] };
  }
  const passedOver: string[] = [];
  for (const candidate of defaultCandidates()) {
    const reason = makePrivate(candidate);
    if (!reason) return { path: candidate, stable: true, passedOver };
    passedOver.push(`${candidate}: ${reason}`);
  }
  // Every stable name is taken or unsafe: an unpredictable one nobody can have made first.
  const path = mkdtempSync(join(tmpdir(), `execmux-${uid()}-`));
  const reason = notPrivateBecause(path);
  if (reason) throw new Error(`no private state directory can be made (${[...passedOver, `${path}: ${reason}`].join("; ")}); choose one with --state-directory`);
  return { path, stable: false, passedOver };
}
