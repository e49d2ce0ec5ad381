/* What /proc tells about processes: trees for the process-tree containment, and pids across namespaces. */
#ifndef EXECMUX_PROCFS_H
#define EXECMUX_PROCFS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct proc_stat {
  char state;
  pid_t ppid, pgrp, session;
  uint64_t start_time;
};

/* Reads /proc/PID/stat below `proc_dir` (AT_FDCWD-relative "/proc" when -1). 0 on success. */
int read_proc_stat(int proc_dir, pid_t pid, struct proc_stat *out);
/* `root` and everything below it with a living chain of parents up to it, from /proc's children lists. */
size_t proc_tree_members(pid_t root, pid_t **out);

/*
 * The host's own /proc when it runs in a PID namespace with a /proc of its
 * own is that namespace's; the machine's /proc stays reachable through a
 * descriptor taken before the new one was mounted (-1 when the host has no
 * namespace: then "/proc" is the machine's).
 */
void procfs_set_outer(int dirfd);
int procfs_outer(void);
/* The machine's pid of a child (by a pidfd of it), or its own pid when there is no namespace. */
pid_t outer_pid_of(pid_t pid);

#endif
