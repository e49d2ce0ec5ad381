/**
 * Where the machine allows it, the spawner runs inside a PID namespace of
 * its own, below a tiny perl init that is the namespace's PID 1: when that
 * init dies, the kernel SIGKILLs everything in the namespace. So even when
 * the daemon, the spawner and the init are all SIGKILLed at once (nothing
 * is left to write cgroup.kill), no child and no setsid grandchild survives.
 *
 * `unshare --pid` (without --fork) makes the namespace and execs perl in
 * the old one; perl's first fork is the new namespace's PID 1:
 * - the outer perl closes its copy of the IPC channel and waits for the
 *   init, exiting with its status (it is the process the daemon started);
 * - the init forks and execs the spawner, closes its copy of the IPC
 *   channel too (so the spawner's death is the daemon's "disconnect"), and
 *   reaps everything: Node waits only for its own children, and orphans
 *   reparented to PID 1 would stay zombies. It forwards SIGTERM, SIGINT and
 *   SIGHUP to the spawner. When the spawner exits 0 (it killed everything:
 *   the daemon is gone or stopped it), the init exits and the namespace
 *   ends; when it died otherwise, the init stays while its orphans run, so
 *   a spawner killed on its own still kills nobody (the daemon starts
 *   another, in a new namespace).
 * POSIX is loaded for sigaction without SA_RESTART, so a forwarded signal
 * interrupts wait() instead of waiting for the next child to exit; it costs
 * 15 ms once per spawner, not per child.
 *
 * `--mount --propagation slave` gives the namespace a mount namespace too,
 * in which the spawner mounts the namespace's own /proc (outer-pids.ts):
 * children's `ps`, `pgrep`, `kill` and `$$` then agree on the namespace's
 * pids, and see nothing outside it. The host's later mounts still reach the
 * children (slave); nothing mounted inside reaches the host. The daemon and
 * its clients see outer pids, which the spawner looks up for its children
 * through the outer /proc (outer-pids.ts).
 */
import { execFileSync } from "node:child_process";
import { perlCloseInherited } from "../process/perl-close-inherited.js";
import { resolveExecutable } from "../process/resolve-executable.js";

const INIT = [
  "use POSIX ();",
  "my $ch = $ENV{NODE_CHANNEL_FD};",
  // A spawner started again while PTYs are open would otherwise keep their masters open in both perls.
  `${perlCloseInherited("$ch")}`,
  'sub drop { my $h; open($h, "+<&=", $ch) and close($h) if defined $ch }',
  "sub forward { my $to = shift; for my $n (qw(TERM INT HUP)) { POSIX::sigaction(POSIX->can(\"SIG$n\")->(), POSIX::SigAction->new(sub { kill $n, $to }, POSIX::SigSet->new, 0)) } }",
  "sub status { $? & 127 ? 128 + ($? & 127) : $? >> 8 }",
  "my $init = fork() // exit 71;",
  "if ($init) { drop(); forward($init); while (1) { my $p = wait(); if ($p == -1) { next if $!{EINTR}; exit 0 } exit status() if $p == $init } }",
  "my $spawner = fork() // exit 71;",
  'if (!$spawner) { exec { $ARGV[0] } @ARGV; print STDERR "execmux spawner init: exec $ARGV[0]: $!\\n"; exit 127 }',
  "drop(); forward($spawner); my $code;",
  "while (1) { my $p = wait(); if ($p == -1) { next if $!{EINTR}; exit($code // 0) } next unless $p == $spawner; $code = status(); exit 0 if $code == 0 }",
].join(" ");

export interface HelperLaunch {
  readonly file: string;
  /** Arguments before the spawner's own command line (node, its flags, spawner-main.js). */
  readonly args: readonly string[];
}

let checked: HelperLaunch | null | undefined;

/**
 * How to start the spawner inside a PID namespace, or undefined where none
 * can be made (no unshare, perl or mount; no privilege: unshare(CLONE_NEWPID)
 * needs CAP_SYS_ADMIN, in practice root; a container that forbids mounting proc).
 * Found out once, by running what the spawner will do: a PID and mount
 * namespace whose first process mounts its /proc.
 */
export function pidNamespaceLaunch(): HelperLaunch | undefined {
  if (checked !== undefined) return checked ?? undefined;
  checked = null;
  if (process.platform !== "linux") return undefined;
  try {
    const unshare = resolveExecutable("unshare", "/", process.env.PATH);
    const perl = resolveExecutable("perl", "/", process.env.PATH);
    resolveExecutable("mount", "/", process.env.PATH); // the spawner mounts its /proc with it
    execFileSync(unshare, ["--pid", "--fork", "--mount-proc", "--propagation", "slave", "true"], { stdio: "ignore", timeout: 5_000 });
    checked = { file: unshare, args: ["--pid", "--mount", "--propagation", "slave", perl, "-e", INIT] };
  } catch {
    // Not here: the spawner runs as the daemon's plain child.
  }
  return checked ?? undefined;
}
