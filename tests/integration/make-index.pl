#!/usr/bin/perl
# make-index.pl ENTRY...: a git index (version 2, SHA-1, a valid checksum) on stdout, for the tests
# that hand the host's git a crafted one through a sandboxed command. ENTRY: MODE,ID,NAME (MODE in
# octal, ID 40 hex digits); `\0` in NAME is a NUL byte. The flags' name length is NAME's length in
# bytes and the entry is padded from it, as git writes it (git steps by that length, not to a NUL).
use strict;
use warnings;
use Digest::SHA qw(sha1);

my $body = '';
for my $arg (@ARGV) {
  my ($mode, $id, $name) = split /,/, $arg, 3;
  $name =~ s/\\0/\0/g;
  my $entry = pack('N10', 0, 0, 0, 0, 0, 0, oct($mode), 0, 0, 0) . pack('H40', $id) .
    pack('n', length $name) . $name;
  $entry .= "\0" x (((length($entry) + 8) & ~7) - length $entry);
  $body .= $entry;
}
my $index = 'DIRC' . pack('NN', 2, scalar @ARGV) . $body;
binmode STDOUT;
print $index, sha1($index);
