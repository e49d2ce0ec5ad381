/**
 * The command line that runs a program inside bubblewrap while signals,
 * process groups and exit codes behave as without a sandbox.
 *
 * bwrap stays in between as the parent (outside) and as PID 1 (inside), in
 * the child's process group, so the daemon's group signals reach them too. It
 * neither forwards nor survives them: a SIGINT that the program traps and
 * answers with `exit 7` would kill bwrap first, and the daemon would report
 * the signal instead of 7. So coreutils `env` starts bwrap with those
 * signals ignored, and a second `env` inside restores their defaults right
 * before exec'ing the program. SIGKILL still takes all of them; the program's
 * death by a signal comes back as bwrap's exit code 128+N, which is how the
 * daemon reports a signal death anyway.
 */

import { relayCommand, type RelayRoute, type TransparentRelay } from "./network-relay.js";

/** What the program of a transparent-TCP sandbox runs under: no capability in any set, and none to gain. */
const DROP_EVERY_CAPABILITY = ["--no-new-privs", "--inh-caps=-all", "--ambient-caps=-all", "--bounding-set=-all"];

/**
 * Every signal whose default is to end or stop a process and that a client
 * may send (process/signal) or a terminal may raise. Not SIGCHLD (bwrap
 * waits for its child), SIGCONT, SIGWINCH, SIGURG (harmless), nor
 * SIGKILL/SIGSTOP (cannot be ignored).
 */
export const SHIELDED_SIGNALS = [
  "HUP", "INT", "QUIT", "ILL", "TRAP", "ABRT", "BUS", "FPE", "USR1", "SEGV", "USR2", "PIPE",
  "ALRM", "TERM", "TSTP", "TTIN", "TTOU", "XCPU", "XFSZ", "VTALRM", "PROF", "IO", "PWR", "SYS",
].join(",");

/**
 * A separate argv[0] goes through perl's `exec {$file} @argv` (perl-base is
 * in every Debian image), which searches PATH as execvp does.
 */
const EXEC_WITH_ARG0 = 'my $f = shift; exec {$f} @ARGV or do { print STDERR "exec $f: $!\\n"; exit 127 }';

export interface SandboxTools {
  readonly bwrap: string;
  /** coreutils `env` (8.31 or later, for --ignore-signal/--default-signal). */
  readonly env: string;
}

export interface Command {
  readonly file: string;
  readonly args: string[];
}

/**
 * `argv` as the client gave it: inside, `env` execs argv[0] by name with the
 * child's PATH, from the child's cwd, so the program is found as without a
 * sandbox and sees argv[0] as written.
 */
export function launchCommand(
  tools: SandboxTools,
  bwrapArgs: readonly string[],
  argv: readonly string[],
  arg0?: string,
  relay?: {
    readonly perl: string;
    readonly script: string;
    readonly routes: readonly RelayRoute[];
    /** Transparent TCP: the relay's redirect, and setpriv to run the program with no capability left. */
    readonly transparent?: { readonly relay: TransparentRelay; readonly setpriv: string } | undefined;
  },
): Command {
  const [program, ...args] = argv;
  if (program === undefined) throw new Error("argv must not be empty");
  // env would take a program name with "=" for a variable to set.
  const direct = (arg0 === undefined || arg0 === program) && !program.includes("=");
  const inner = direct ? [program, ...args] : ["perl", "-e", EXEC_WITH_ARG0, "--", program, arg0 ?? program, ...args];
  const restored = [tools.env, `--default-signal=${SHIELDED_SIGNALS}`, "--", ...inner];
  const command = relay?.transparent ? [relay.transparent.setpriv, ...DROP_EVERY_CAPABILITY, "--", ...restored] : restored;
  // The relay keeps the ignored signals (it must outlive nothing but the program) and restores them in its child.
  return {
    file: tools.env,
    args: [`--ignore-signal=${SHIELDED_SIGNALS}`, tools.bwrap, ...bwrapArgs, "--", ...(relay ? relayCommand(relay.perl, relay.script, relay.routes, command, relay.transparent?.relay) : command)],
  };
}
