/* Root's one-shot sandbox without a device allow-list in its cgroup (issue 15, session 28). */
#ifndef FSRUN_SANDBOX_DEVICES_H
#define FSRUN_SANDBOX_DEVICES_H

#include <stdbool.h>

/* Whether root's `fsrun sandbox` run still needs the cgroup's device allow-list: true when one of
 * the fds its command inherits (0, 1, 2: the caller's, shared with the sandbox's init) is a block
 * device or a character device outside the default list, which the command could reopen through
 * /proc/self/fd with more access than it was given (the allow-list is checked at open). Every
 * other way to a device node is closed without it: the command has no capability (no CAP_MKNOD),
 * and every mount it can reach is `nodev` except its own /dev (a tmpfs holding only the default
 * nodes, made by the runtime) and its devpts (docs/sandbox.md, "Device nodes"). */
bool sandbox_device_rules_needed(void);

#endif
