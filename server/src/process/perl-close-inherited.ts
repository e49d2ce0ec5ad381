/**
 * Perl that closes every descriptor above stderr the process inherited
 * (the host's PTY masters lack close-on-exec, see pty-native.ts), for the
 * perl helpers that start beside them. `keep`: a perl expression for one
 * descriptor to leave open (an IPC channel).
 */
export function perlCloseInherited(keep?: string): string {
  const kept = keep === undefined ? "" : ` && $_ != (${keep} // -1)`;
  return `if (opendir(my $d, "/proc/self/fd")) { my @fds = grep { /^\\d+$/ && $_ > 2${kept} } readdir($d); closedir($d); for my $fd (@fds) { my $h; open($h, "+<&=", $fd) and close($h) } }`;
}
