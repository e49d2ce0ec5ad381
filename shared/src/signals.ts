/**
 * Signal names `process/signal` accepts. Upstream knows only "interrupt"; the
 * friendly aliases and POSIX names are an execmux extension. Numbers are
 * Linux's, so that a client can show "killed by SIGKILL" without a lookup table.
 */
export const SignalNumbers = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGILL: 4,
  SIGTRAP: 5,
  SIGABRT: 6,
  SIGBUS: 7,
  SIGFPE: 8,
  SIGKILL: 9,
  SIGUSR1: 10,
  SIGSEGV: 11,
  SIGUSR2: 12,
  SIGPIPE: 13,
  SIGALRM: 14,
  SIGTERM: 15,
  SIGCHLD: 17,
  SIGCONT: 18,
  SIGSTOP: 19,
  SIGTSTP: 20,
  SIGTTIN: 21,
  SIGTTOU: 22,
  SIGURG: 23,
  SIGXCPU: 24,
  SIGXFSZ: 25,
  SIGVTALRM: 26,
  SIGPROF: 27,
  SIGWINCH: 28,
  SIGIO: 29,
  SIGPWR: 30,
  SIGSYS: 31,
} as const;

export type SignalName = keyof typeof SignalNumbers;

export const SignalAliases = {
  interrupt: "SIGINT",
  terminate: "SIGTERM",
  kill: "SIGKILL",
  hangup: "SIGHUP",
  quit: "SIGQUIT",
} as const satisfies Record<string, SignalName>;

/** Resolves "interrupt", "SIGUSR1" or "USR1" (any case) to a POSIX name, or
 * undefined when the name is unknown. */
export function resolveSignalName(name: string): SignalName | undefined {
  // Own keys only: "constructor" or "__proto__" must not find Object.prototype's.
  const lower = name.toLowerCase();
  if (Object.hasOwn(SignalAliases, lower)) return (SignalAliases as Record<string, SignalName>)[lower];
  const upper = name.toUpperCase();
  const posix = upper.startsWith("SIG") ? upper : `SIG${upper}`;
  return Object.hasOwn(SignalNumbers, posix) ? (posix as SignalName) : undefined;
}

/** The name for a signal number, for reporting how a process died. */
export function signalNameOf(signo: number): SignalName | undefined {
  for (const [name, value] of Object.entries(SignalNumbers)) {
    if (value === signo) return name as SignalName;
  }
  return undefined;
}
