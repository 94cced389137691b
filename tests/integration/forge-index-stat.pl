#!/usr/bin/perl
# forge-index-stat.pl INDEX NAME ID FILE: rewrites the git index INDEX (version 2 or 3, SHA-1) so
# that its entry NAME holds object id ID (40 hex digits) with FILE's lstat as its stat data, under a
# new checksum: the entry git would take for FILE unchanged without reading it (review19 #7). Run by
# a sandboxed command on its own git dir's index.
use strict;
use warnings;
use Digest::SHA qw(sha1);

my ($path, $name, $id, $file) = @ARGV;
open(my $in, '<:raw', $path) or die "$path: $!";
my $index = do { local $/; <$in> };
close $in;
# stat(1) for the nanoseconds; %Z and %Y as seconds.nanoseconds
my @st = split ' ', `stat -c '%d %i %u %g %s %.9Z %.9Y' -- '$file'`;
die "stat $file\n" if @st != 7;
my ($dev, $ino, $uid, $gid, $size) = @st[0 .. 4];
my ($csec, $cnsec) = split /\./, $st[5];
my ($msec, $mnsec) = split /\./, $st[6];

my $count = unpack('N', substr($index, 8, 4));
my $at = 12;
my $found = 0;
for (1 .. $count) {
  my $flags = unpack('n', substr($index, $at + 60, 2));
  my $fixed = 62 + (($flags & 0x4000) ? 2 : 0);
  my $len = $flags & 0xfff;
  if (substr($index, $at + $fixed, $len) eq $name) {
    my $mode = unpack('N', substr($index, $at + 24, 4));
    substr($index, $at, 40) =
      pack('N10', $csec, $cnsec, $msec, $mnsec, $dev, $ino, $mode, $uid, $gid, $size);
    substr($index, $at + 40, 20) = pack('H40', $id);
    $found = 1;
  }
  $at += ($fixed + $len + 8) & ~7;
}
die "no entry $name in $path\n" unless $found;
$index = substr($index, 0, length($index) - 20);
open(my $out, '>:raw', $path) or die "$path: $!";
print $out $index, sha1($index);
close $out or die "$path: $!";
