/**
 * The relay a sandboxed process with an executor-local proxy runs under,
 * inside its network namespace (which has nothing but loopback): it listens
 * on 127.0.0.1 at the ports the proxy variables name, carries each accepted
 * connection to the daemon's unix socket for it (the sandbox binds that
 * directory in), prefixed by one line naming the client (`address:port`),
 * and runs the program as its child, exiting as the program does (a death
 * by signal N as 128+N, as bwrap reports one). It decides nothing: the
 * proxy behind the socket decides. It holds no privilege, except with
 * transparent TCP (below), where it keeps CAP_NET_ADMIN in the sandbox's own
 * namespaces, and the program runs with none (launcher.ts).
 *
 * Perl (perl-base is in every Debian image, and the launcher already needs
 * it), so the relay costs a few MB and no start-up time, and stays a byte
 * pump: at most RELAY_MAX_CONNECTIONS pairs, 64 KiB buffered per direction,
 * no reading from a side whose peer has not drained.
 *
 * Argv: `[--transparent TCP_PORT=SOCKET DNS_PORT IP IPTABLES] PORT=SOCKET ... -- COMMAND...`;
 * it runs from a file in the bridged directory.
 */

export const RELAY_MAX_CONNECTIONS = 256;
/** Names the transparent relay's resolver hands out stand-in addresses for (198.18.0.0/15 has 131,070). */
export const RELAY_MAX_NAMES = 65536;

export const RELAY_SCRIPT = String.raw`use strict; use warnings;
use Socket qw(AF_INET AF_UNIX SOCK_STREAM SOCK_DGRAM SOL_SOCKET SO_REUSEADDR SO_LINGER SHUT_WR INADDR_LOOPBACK pack_sockaddr_in unpack_sockaddr_in pack_sockaddr_un inet_ntoa);
use POSIX qw(WNOHANG EAGAIN EWOULDBLOCK EINTR _exit);
use Fcntl qw(F_GETFL F_SETFL O_NONBLOCK);
# argv: [--transparent TCP_PORT=SOCKET DNS_PORT IP IPTABLES] PORT=SOCKET ... -- COMMAND...
my (%target, %kind, @listeners, $dns, %ip_of, %name_of);
my $next_name = 0;
sub nonblock { my $f = fcntl($_[0], F_GETFL, 0); fcntl($_[0], F_SETFL, $f | O_NONBLOCK) }
sub listen_on {
  my ($port, $path, $kind) = @_;
  socket(my $l, AF_INET, SOCK_STREAM, 0) or die "relay: socket: $!\n";
  setsockopt($l, SOL_SOCKET, SO_REUSEADDR, 1);
  bind($l, pack_sockaddr_in($port, INADDR_LOOPBACK)) or die "relay: bind 127.0.0.1:$port: $!\n";
  listen($l, 128) or die "relay: listen: $!\n";
  nonblock($l); $target{fileno $l} = $path; $kind{fileno $l} = $kind; push @listeners, $l;
}
if (@ARGV && $ARGV[0] eq '--transparent') {
  shift @ARGV;
  my ($tcp, $dns_port, $ip, $iptables) = splice(@ARGV, 0, 4);
  my ($tport, $tpath) = $tcp =~ /^(\d+)=(.+)$/s or die "relay: bad transparent route\n";
  listen_on($tport, $tpath, 't');
  socket($dns, AF_INET, SOCK_DGRAM, 0) or die "relay: socket: $!\n";
  bind($dns, pack_sockaddr_in($dns_port, INADDR_LOOPBACK)) or die "relay: bind 127.0.0.1:$dns_port: $!\n";
  nonblock($dns);
  # Every TCP connection off loopback, and every DNS query, comes to the relay.
  for my $cmd ([$ip, qw(route add default dev lo src 127.0.0.1)],
               [$iptables, qw(-w -t nat -A OUTPUT -p tcp ! -d 127.0.0.0/8 -j REDIRECT --to-ports), $tport],
               [$iptables, qw(-w -t nat -A OUTPUT -p udp --dport 53 -j REDIRECT --to-ports), $dns_port]) {
    system { $cmd->[0] } @$cmd; $? == 0 or die "relay: transparent TCP setup failed: @$cmd\n";
  }
}
while (@ARGV && $ARGV[0] ne '--') {
  my ($port, $path) = shift(@ARGV) =~ /^(\d+)=(.+)$/s or die "relay: bad route\n";
  listen_on($port, $path, 'p');
}
shift @ARGV; @ARGV or die "relay: no command\n";
pipe(my $wake_r, my $wake_w) or die "relay: pipe: $!\n"; nonblock($wake_r); nonblock($wake_w);
$SIG{CHLD} = sub { syswrite($wake_w, 'x') };
my $child = fork() // die "relay: fork: $!\n";
if ($child == 0) {
  close $_ for @listeners, $wake_r, $wake_w; close $dns if $dns;
  exec { $ARGV[0] } @ARGV or do { print STDERR "exec $ARGV[0]: $!\n"; _exit(127) };
}
open(STDIN, '<', '/dev/null'); open(STDOUT, '>', '/dev/null');
my $MAX = 65536; my $LIMIT = ${RELAY_MAX_CONNECTIONS}; my $NAMES = ${RELAY_MAX_NAMES};
my (%peer, %buf, %eof, %fh, %await);
# Closes a pair; with $reset, the first side gets a TCP reset (a refused transparent connection).
sub drop {
  my ($a, $reset) = @_; my $b = $peer{fileno $a};
  setsockopt($a, SOL_SOCKET, SO_LINGER, pack('ii', 1, 0)) if $reset;
  for my $s ($a, $b) { next unless $s; my $n = fileno $s; delete @{$_}{$n} for \%peer, \%buf, \%eof, \%fh, \%await; close $s }
}
# A name's stand-in address, from 198.18.0.0/15, so the proxy learns the name a connection was for.
sub synthetic {
  my ($name) = @_;
  return $ip_of{$name} if exists $ip_of{$name};
  return undef if $next_name >= $NAMES;
  my $ip = pack('N', 0xC6120000 + ++$next_name);
  $name_of{$ip} = $name; return $ip_of{$name} = $ip;
}
sub dns_reply {
  my ($q) = @_;
  return undef if length($q) < 17 || length($q) > 512;
  my ($id, $flags, $qd) = unpack('n n n', $q);
  return undef if $qd != 1 || ($flags & 0x8000);
  my ($pos, @labels) = (12);
  while (1) {
    return undef if $pos >= length $q;
    my $len = ord substr($q, $pos++, 1);
    last if $len == 0;
    return undef if $len > 63 || $pos + $len > length $q;
    push @labels, substr($q, $pos, $len); $pos += $len;
  }
  return undef if $pos + 4 > length $q;
  my ($type, $class) = unpack('n n', substr($q, $pos, 4));
  my $question = substr($q, 12, $pos + 4 - 12);
  my $name = lc join('.', @labels);
  my ($rcode, $answer) = (0, '');
  if ($type == 1 && $class == 1 && length $name) {
    my $ip = synthetic($name);
    if (defined $ip) { $answer = pack('n n n N n', 0xC00C, 1, 1, 1, 4) . $ip } else { $rcode = 2 }
  }
  return pack('n n n n n n', $id, 0x8180 | $rcode, 1, length($answer) ? 1 : 0, 0, 0) . $question . $answer;
}
while (1) {
  my $rin = ''; my $win = '';
  vec($rin, fileno $wake_r, 1) = 1;
  vec($rin, fileno $dns, 1) = 1 if $dns;
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
  if ($dns && vec($rout, fileno $dns, 1)) {
    while (my $from = recv($dns, my $q, 1024, 0)) { my $r = dns_reply($q); send($dns, $r, 0, $from) if defined $r }
  }
  for my $l (@listeners) {
    next unless vec($rout, fileno $l, 1);
    my $from = accept(my $c, $l) or next;
    my ($port, $ip) = unpack_sockaddr_in($from);
    my $preamble = inet_ntoa($ip) . ":$port";
    if ($kind{fileno $l} eq 't') {
      # Where the connection was headed before the redirect (SO_ORIGINAL_DST), by name when it is a stand-in.
      my $dst = getsockopt($c, 0, 80) or do { close $c; next };
      my (undef, $dport, $dip) = unpack('S n a4', $dst);
      $preamble .= ' ' . ($name_of{$dip} // inet_ntoa($dip)) . ":$dport";
    }
    socket(my $u, AF_UNIX, SOCK_STREAM, 0) or do { close $c; next };
    connect($u, pack_sockaddr_un($target{fileno $l})) or do { close $c; close $u; next };
    nonblock($c); nonblock($u);
    for ([$c, $u], [$u, $c]) { my $n = fileno $_->[0]; $peer{$n} = $_->[1]; $buf{$n} = ''; $eof{$n} = 0; $fh{$n} = $_->[0] }
    $buf{fileno $u} = "$preamble\n";
    # A transparent connection waits for the proxy's verdict: one byte, 0 to go on; anything else resets it.
    $await{fileno $u} = 1 if $kind{fileno $l} eq 't';
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
      if ($await{$n}) {
        if ($r == 0 || substr($data, 0, 1) ne "\0") { drop($p, 1); next }
        delete $await{$n}; $data = substr($data, 1); $r = length $data; next unless $r;
      }
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

/**
 * Transparent TCP: the relay, while it still holds CAP_NET_ADMIN, routes every
 * destination to loopback and redirects TCP off loopback and every DNS query
 * to itself (iptables' REDIRECT); it answers A queries with stand-in addresses
 * from 198.18.0.0/15 (none for AAAA), and sends each redirected connection to
 * `socket` with where it was headed (the name, for a stand-in), then waits for
 * the proxy's verdict (one byte: 0 goes on, anything else resets it).
 */
export interface TransparentRelay {
  readonly tcpPort: number;
  readonly socket: string;
  readonly dnsPort: number;
  /** iproute2's `ip` and `iptables`, found on the executor. */
  readonly ip: string;
  readonly iptables: string;
}

/** The relay's command line in front of `command`; `script` is RELAY_SCRIPT's file inside the sandbox. */
export function relayCommand(
  perl: string,
  script: string,
  routes: readonly RelayRoute[],
  command: readonly string[],
  transparent?: TransparentRelay,
): string[] {
  const setup = transparent
    ? ["--transparent", `${transparent.tcpPort}=${transparent.socket}`, String(transparent.dnsPort), transparent.ip, transparent.iptables]
    : [];
  return [perl, script, ...setup, ...routes.map(({ port, socket }) => `${port}=${socket}`), "--", ...command];
}
