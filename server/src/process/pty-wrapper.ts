/**
 * Every PTY child starts as perl (perl-base is in every Debian image, slim
 * ones too), forked by the spawner process with the terminal's slave on
 * stdin, stdout and stderr and setsid done (spawner-main.ts). It execs the
 * program once it has done what forkpty did in node-pty's fork, and what
 * Node cannot ask of a spawn:
 * - TIOCSCTTY: the terminal becomes its controlling terminal (the spawner
 *   opened it with O_NOCTTY), so Ctrl-C, job control and SIGWINCH work;
 * - the termios node-pty's fork set (pty.cc), where the kernel's defaults
 *   for a PTY differ: iflag BRKINT, IXANY, IMAXBEL and IUTF8, cflag HUPCL,
 *   and VEOL and VEOL2 "undefined" (255) rather than NUL; `stty -a` shows
 *   what it did before;
 * - it closes every descriptor above stderr, so no terminal of another
 *   session can reach the program however it was inherited;
 * - `exec {file} @argv` sets argv[0] apart from the file (arg0), and
 *   searches PATH like execvp when the file has no slash.
 * The cgroup is not its business: the spawner forks it inside (spawnInCgroup).
 *
 * ioctl numbers and the struct termios layout (4 flag words, c_line, 19
 * control characters) are Linux's generic ones (x86, arm); POSIX::Termios
 * would say the same portably but loading POSIX costs 15 ms a start.
 * Arguments: file, argv[0], the rest.
 */
import { SpawnError, type SpawnSpec } from "./child.js";
import { resolveExecutable } from "./resolve-executable.js";

const PTY_EXEC = [
  'my ($f, @argv) = @ARGV;',
  'ioctl(STDIN, 0x540E, 0) or do { print STDERR "execmux: cannot take the terminal: $!\\n"; exit 127 };',
  'my $t = "\\0" x 64;',
  'if (ioctl(STDIN, 0x5401, $t)) { my @t = unpack("L4 C20", $t); $t[0] |= 02 | 04000 | 020000 | 040000; $t[2] |= 02000; $t[16] = $t[21] = 255; ioctl(STDIN, 0x5402, pack("L4 C20", @t)) }',
  'opendir(my $d, "/proc/self/fd") or do { print STDERR "execmux: /proc/self/fd: $!\\n"; exit 127 };',
  'my @fds = grep { /^\\d+$/ && $_ > 2 } readdir($d); closedir($d);',
  'for my $fd (@fds) { my $h; open($h, "+<&=", $fd) and close($h) }',
  'exec {$f} @argv or do { print STDERR "exec $f: $!\\n"; exit 127 }',
].join(" ");

let perlPath: string | undefined;

/** The wrapper's command line for `spec`. */
export function ptyCommandLine(spec: SpawnSpec): { file: string; args: string[] } {
  try {
    perlPath ??= resolveExecutable("perl", "/", process.env.PATH);
  } catch {
    throw new SpawnError("a tty needs perl on the daemon's PATH (it sets up the terminal before the program runs)", "ENOENT");
  }
  return { file: perlPath, args: ["-e", PTY_EXEC, spec.file, spec.arg0 ?? spec.file, ...spec.args] };
}
