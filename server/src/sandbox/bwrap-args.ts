/**
 * The bubblewrap options that realize a SandboxPolicy. Rules are mounted
 * ancestors first, so a deeper rule overlays a shallower one exactly where
 * the policy says the deeper one wins.
 *
 * Namespaces: a user namespace with every capability dropped (as root in a
 * container, bwrap would otherwise keep them, and could remount `/` writable)
 * and no nested user namespaces; a PID namespace, so no process outside can
 * be seen, signalled or traced; IPC; the network when the profile restricts
 * it. Not `--new-session` (upstream uses it against TIOCSTI): the child must
 * stay in the session and process group the daemon signals, and keep its
 * terminal for job control. A pipe child has no terminal to inject into, and
 * a PTY child's terminal is its own.
 */
import { statSync } from "node:fs";
import { accessAt, isWithin, type PathAccess, type SandboxPolicy } from "./policy.js";

function mountArgs(policy: SandboxPolicy): string[] {
  const [root, ...rules] = policy.rules;
  const args = root?.access === "write" ? ["--bind", "/", "/"] : ["--ro-bind", "/", "/"];
  // A fresh /dev (null, zero, random, tty, a private devpts and /dev/shm) and
  // the PID namespace's own /proc: nothing of the host's devices or processes.
  // Upstream's rule for a writable `/` (linuxRootWritePreservesDevices): the
  // standard devices when the profile restricts anything below it, the host's
  // /dev when it restricts nothing (the whole disk is the profile's to write;
  // only its network is confined then).
  const restrictsNothing = root?.access === "write" && rules.every((rule) => rule.access === "write" || rule.daemonPrivate === true);
  args.push(...(restrictsNothing ? ["--dev-bind", "/dev", "/dev"] : ["--dev", "/dev"]), "--proc", "/proc");
  const remountReadOnly: string[] = [];
  const applied = root ? [root] : [];
  for (const rule of rules) {
    const current: PathAccess = accessAt(applied, rule.path);
    applied.push(rule);
    if (current === rule.access) continue;
    switch (rule.access) {
      case "write":
        args.push("--bind", rule.path, rule.path);
        break;
      case "read":
        args.push("--ro-bind", rule.path, rule.path);
        break;
      case "deny":
        if (statSync(rule.path).isDirectory()) {
          // An empty directory nobody may list. Execute permission only when a
          // deeper rule grants something inside, which must stay reachable.
          const grantInside = rules.some((other) => other.access !== "deny" && other.path !== rule.path && isWithin(other.path, rule.path));
          args.push("--perms", grantInside ? "0111" : "0000", "--tmpfs", rule.path);
          remountReadOnly.push(rule.path);
        } else {
          // Mounted nodev, /dev/null cannot even be opened there: reads and writes fail with EACCES.
          args.push("--ro-bind", "/dev/null", rule.path);
        }
        break;
    }
  }
  // Last, so that mount points for deeper rules could still be made inside.
  for (const path of remountReadOnly) args.push("--remount-ro", path);
  return args;
}

/**
 * Everything between `bwrap` and `--`, with the child starting in `cwd` (canonical).
 *
 * `netAdmin` (transparent TCP, network-relay.ts): the relay that runs first
 * keeps CAP_NET_ADMIN, to redirect the namespace's TCP to itself, and
 * CAP_SETPCAP, to empty the program's bounding set before it runs (setpriv).
 * Without --disable-userns: it puts the program in a nested user namespace,
 * which would not own the network namespace the relay must configure. The
 * program still cannot make a usable one (no_new_privs, no capabilities; the
 * uid map write is refused).
 */
export function bwrapArgs(policy: SandboxPolicy, cwd: string, options: { netAdmin?: boolean } = {}): string[] {
  return [
    "--unshare-user",
    ...(options.netAdmin ? [] : ["--disable-userns"]),
    "--unshare-pid",
    "--unshare-ipc",
    ...(policy.isolateNetwork ? ["--unshare-net"] : []),
    "--cap-drop",
    "ALL",
    ...(options.netAdmin ? ["--cap-add", "CAP_NET_ADMIN", "--cap-add", "CAP_SETPCAP"] : []),
    ...mountArgs(policy),
    "--chdir",
    cwd,
  ];
}
