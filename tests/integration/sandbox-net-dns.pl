#!/usr/bin/perl
# A DNS answerer for tests: every A query for a name under the given domain gets the given address;
# anything else gets NXDOMAIN. One UDP socket, one packet at a time.
use strict;
use warnings;
use IO::Socket::INET;
my ($listen, $domain, $addr) = @ARGV;
my $sock = IO::Socket::INET->new(LocalAddr => $listen, LocalPort => 53, Proto => 'udp')
  or die "bind $listen:53: $!\n";
$| = 1;
print "ready\n";
while (1) {
  my $peer = $sock->recv(my $q, 512) // next;
  next if length($q) < 17;
  my ($id, $flags, $qd) = unpack('n n n', $q);
  my ($pos, @labels) = (12);
  while ((my $len = ord(substr($q, $pos, 1))) > 0) {
    push @labels, substr($q, $pos + 1, $len);
    $pos += $len + 1;
  }
  my $question = substr($q, 12, $pos + 5 - 12);
  my $qtype = unpack('n', substr($q, $pos + 1, 2));
  my $name = lc join('.', @labels);
  my $ours = $name eq $domain || $name =~ /\.\Q$domain\E$/;
  my $answer = '';
  if ($ours && $qtype == 1) {
    $answer = pack('n n n N n', 0xc00c, 1, 1, 60, 4) . pack('C4', split /\./, $addr);
  }
  my $rcode = $ours ? 0 : 3;
  my $header = pack('n n n n n n', $id, 0x8180 | $rcode, 1, $answer ne '' ? 1 : 0, 0, 0);
  $sock->send($header . $question . $answer, 0, $peer);
}
