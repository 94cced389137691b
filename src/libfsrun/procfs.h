/* A private, verified handle on procfs. Every write the runtime makes to procfs (uid_map, gid_map,
 * setgroups, timens_offsets, oom_score_adj, sysctl) goes through it, never through a /proc path
 * that a container could have replaced with a bind mount or a symlink (CVE-2025-31133, -52565,
 * -52881). */
#ifndef FSRUN_PROCFS_H
#define FSRUN_PROCFS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "error.h"

/* A directory fd on the root of a procfs instance for the caller's pid namespace: a fresh, detached
 * instance (fsopen/fsmount) where the kernel allows it, else the host's /proc; either way verified
 * to be procfs (fstatfs) and its root. CLOEXEC. Returns the fd or a negative code. */
int procfs_open(fsrun_error_t *err);

/* Only the fresh, detached instance of procfs_open, or -1 with errno (no new mount API, no right to
 * mount one, or, in a user namespace, no procfs fully visible in our mount namespace). */
int procfs_open_instance(void);

/* Opens path (relative, e.g. "1234/uid_map" or "sys/net/ipv4/ip_forward") under the procfs handle
 * without following any symlink or crossing a mount, and checks that the result is on procfs. */
int procfs_openat(int procfs_fd, const char *path, int flags, fsrun_error_t *err);

/* procfs_openat(O_WRONLY) + one write of data. */
int procfs_write(int procfs_fd, const char *path, const char *data, size_t len, fsrun_error_t *err);

/* The calling process's pid as this procfs instance sees it (its "self" link), or -1. Differs from
 * getpid() after the caller was cloned into a new pid namespace. */
pid_t procfs_self_pid(int procfs_fd);

/* Start time (clock ticks after boot, field 22 of /proc/PID/stat) of pid, and whether it is a
 * zombie. 0 when the process does not exist. Uses the host's /proc (reading is safe there). */
unsigned long long procfs_pid_start_time(pid_t pid, bool *zombie);

/* Writes process.oomScoreAdj `value` to pid's oom_score_adj (through procfs_fd); lowering it
 * without CAP_SYS_RESOURCE is an error that says so. */
int procfs_set_oom_score_adj(int procfs_fd, pid_t pid, int value, fsrun_error_t *err);

/* Inode of pid's pid namespace (/proc/PID/ns/pid), 0 when it cannot be read. Start times have a
 * clock tick's resolution; this tells a container's init from a process that took its pid within
 * the same tick. A process never leaves its pid namespace (its mount namespace it may: `unshare
 * -m` in the container). */
unsigned long long procfs_pid_pidns(pid_t pid);

/* This boot's id (/proc/sys/kernel/random/boot_id, 36 characters), "" when it cannot be read. A
 * start time counts clock ticks from boot: with the boot id it names one process across reboots
 * (a state root on a disk outlives them). */
const char *procfs_boot_id(void);

#endif
