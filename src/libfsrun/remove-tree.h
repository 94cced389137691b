/* Removing a directory tree fsrun made (the fallback probe's directory, a run's git dir), through
 * fds, never following a link nor leaving the tree's own filesystem. */
#ifndef FSRUN_REMOVE_TREE_H
#define FSRUN_REMOVE_TREE_H

/* Removes parent's entry name and what is under it, at most max_depth levels down. A directory on
 * another filesystem than name's own (a mount point below it) is left, with what leads to it: what
 * is mounted there is never removed through the mount. A mode 0 directory (overlayfs's work/work)
 * is made 0700 first, through an fd of that very directory (never by name). Best effort: what
 * cannot be removed stays. */
void remove_tree_at(int parent, const char *name, int max_depth);

/* NULL in fsrun. A unit test sets it to change the entry name between its open (O_PATH) and the
 * chmod of a mode 0 directory, deterministically. */
extern void (*remove_tree_chmod_hook)(int parent, const char *name);

#endif
