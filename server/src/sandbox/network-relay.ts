/**
 * The relay a sandboxed process with an executor-local proxy runs under,
 * inside its network namespace (which has nothing but loopback): it listens
 * on 127.0.0.1 at the ports the proxy variables name, carries each accepted
 * connection to the daemon's unix socket for it (the sandbox binds that
 * directory in), prefixed by one line naming the client (`address:port`),
 * and runs the program as its child, exiting as the program does (a death
 * by signal N as 128+N, as bwrap reports one). It holds no privilege and
 * decides nothing: the proxy behind the socket decides.
 *
 * Perl (perl-base is in every Debian image, and the launcher already needs
 * it), so the relay costs a few MB and no start-up time, and stays a byte
 * pump: at most RELAY_MAX_CONNECTIONS pairs, 64 KiB buffered per direction,
 * no reading from a side whose peer has not drained.
 *
 * Argv: `PORT=SOCKET ... -- COMMAND...`; it runs from a file in the bridged directory.
 */

export const RELAY_MAX_CONNECTIONS = 256;

export const RELAY_SCRIPT = String.raw`use strict; use warnings;
use Socket qw(AF_INET AF_UNIX SOCK_STREAM SOL_SOCKET SO_REUSEADDR SHUT_WR INADDR_LOOPBACK pack_sockaddr_in unpack_sockaddr_in pack_sockaddr_un inet_ntoa);
use POSIX qw(WNOHANG EAGAIN EWOULDBLOCK EINTR _exit);
use Fcntl qw(F_GETFL F_SETFL O_NONBLOCK);
# argv: PORT=SOCKET_PATH ... -- COMMAND...
my (%target, @listeners);
while (@ARGV && $ARGV[0] ne '--') {
  my ($port, $path) = shift(@ARGV) =~ /^(\d+)=(.+)$/s or die "relay: bad route\n";
  socket(my $l, AF_INET, SOCK_STREAM, 0) or die "relay: socket: $!\n";
  setsockopt($l, SOL_SOCKET, SO_REUSEADDR, 1);
  bind($l, pack_sockaddr_in($port, INADDR_LOOPBACK)) or die "relay: bind 127.0.0.1:$port: $!\n";
  listen($l, 128) or die "relay: listen: $!\n";
  nonblock($l); $target{fileno $l} = $path; push @listeners, $l;
}
shift @ARGV; @ARGV or die "relay: no command\n";
pipe(my $wake_r, my $wake_w) or die "relay: pipe: $!\n"; nonblock($wake_r); nonblock($wake_w);
$SIG{CHLD} = sub { syswrite($wake_w, 'x') };
my $child = fork() // die "relay: fork: $!\n";
if ($child == 0) {
  close $_ for @listeners, $wake_r, $wake_w;
  exec { $ARGV[0] } @ARGV or do { print STDERR "exec $ARGV[0]: $!\n"; _exit(127) };
}
open(STDIN, '<', '/dev/null'); open(STDOUT, '>', '/dev/null');
my $MAX = 65536; my $LIMIT = ${RELAY_MAX_CONNECTIONS};
my %peer; my %buf; my %eof; my %fh;
sub nonblock { my $f = fcntl($_[0], F_GETFL, 0); fcntl($_[0], F_SETFL, $f | O_NONBLOCK) }
sub drop { my ($a) = @_; my $b = $peer{fileno $a}; for my $s ($a, $b) { next unless $s; my $n = fileno $s; delete @{$_}{$n} for \%peer, \%buf, \%eof, \%fh; close $s } }
while (1) {
  my $rin = ''; my $win = '';
  vec($rin, fileno $wake_r, 1) = 1;
  if (keys(%fh) / 2 < $LIMIT) { vec($rin, fileno $_, 1) = 1 for @listeners }
  for my $n (keys %fh) {
    my $p = fileno $peer{$n};
    vec($rin, $n, 1) = 1 if !$eof{$n} && length($buf{$p}) < $MAX;
    vec($win, $n, 1) = 1 if length $buf{$n};
  }
  my $ready = select(my $rout = $rin, my $wout = $win, undef, undef);
  if ($ready < 0) { next if $! == EINTR; die "relay: select: $!\n" }
  if (vec($rout, fileno $wake_r, 1)) {
    sysread($wake_r, my $junk, 64);
    if (waitpid($child, WNOHANG) == $child) { my $s = $?; _exit($s & 127 ? 128 + ($s & 127) : $s >> 8) }
  }
  for my $l (@listeners) {
    next unless vec($rout, fileno $l, 1);
    my $from = accept(my $c, $l) or next;
    socket(my $u, AF_UNIX, SOCK_STREAM, 0) or do { close $c; next };
    connect($u, pack_sockaddr_un($target{fileno $l})) or do { close $c; close $u; next };
    nonblock($c); nonblock($u);
    for ([$c, $u], [$u, $c]) { my $n = fileno $_->[0]; $peer{$n} = $_->[1]; $buf{$n} = ''; $eof{$n} = 0; $fh{$n} = $_->[0] }
    my ($port, $ip) = unpack_sockaddr_in($from); $buf{fileno $u} = inet_ntoa($ip) . ":$port\n";
  }
  for my $n (keys %fh) {
    my $s = $fh{$n} or next; my $p = $peer{$n}; my $pn = fileno $p;
    if (vec($wout, $n, 1) && length $buf{$n}) {
      my $w = syswrite($s, $buf{$n});
      if (defined $w) { substr($buf{$n}, 0, $w) = '' } elsif ($! != EAGAIN && $! != EWOULDBLOCK) { drop($s); next }
      shutdown($s, SHUT_WR) if !length $buf{$n} && $eof{$pn};
    }
    if (vec($rout, $n, 1)) {
      my $r = sysread($s, my $data, 16384);
      if (!defined $r) { drop($s) if $! != EAGAIN && $! != EWOULDBLOCK; next }
      if ($r == 0) { $eof{$n} = 1; shutdown($p, SHUT_WR) unless length $buf{$pn} } else { $buf{$pn} .= $data }
    }
    drop($s) if $eof{$n} && $eof{$pn} && !length $buf{$n} && !length $buf{$pn};
  }
}
`;

export interface RelayRoute {
  readonly port: number;
  readonly socket: string;
}

/** The relay's file name in the bridged directory (a file, so `ps` in the sandbox shows one short line). */
export const RELAY_FILE = "relay.pl";

/** The relay's command line in front of `command`; `script` is RELAY_SCRIPT's file inside the sandbox. */
export function relayCommand(perl: string, script: string, routes: readonly RelayRoute[], command: readonly string[]): string[] {
  return [perl, script, ...routes.map(({ port, socket }) => `${port}=${socket}`), "--", ...command];
}
