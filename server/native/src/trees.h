/*
 * How the host holds everything a child starts, so terminate, session expiry
 * and shutdown reach whole trees.
 *
 * cgroup (cgroup v2 with cgroup.kill, Linux 5.14+, where the host may make
 * cgroups below its own): a directory for the host, one per session in it,
 * one per process in that. A child is born in its cgroup (the host moves
 * itself in for the spawn and back out), and SIGKILL to a tree is one write
 * to its cgroup.kill, which reaches every descendant whatever it did
 * (setsid, double fork, its parent's exit). A session's cgroup can carry a
 * pids.max: the fork bound of that session.
 *
 * process-tree (anywhere else): the child's process group (it leads one),
 * and a walk down /proc's children lists from it. The host is the PID
 * namespace's init or a child subreaper, so orphans come to it and their
 * groups and sessions are still found; what leaves both and loses its
 * parent before anyone looks is missed.
 */
#ifndef EXECMUX_TREES_H
#define EXECMUX_TREES_H

#include <stdint.h>
#include <sys/types.h>

enum containment { CONTAIN_TREE = 0, CONTAIN_CGROUP = 1 };

struct trees_info {
  enum containment kind;
  int pids_limit; /* a per-session pids.max can be set (v2, or the v1 pids hierarchy) */
  const char *root; /* the host's cgroup directory (cgroup kind), or "" */
};

/* Chooses and prepares the mechanism: want is "auto", "cgroup" or "process-tree". -1 if "cgroup" cannot be had. */
int trees_init(const char *want, uint32_t pids_max);
const struct trees_info *trees_info(void);

/* A session's and a process's cgroup directories (NULL with process-tree, or when one could not be made). */
char *trees_session_new(const char *session_key);
char *trees_process_new(const char *session_dir);
/* The cgroup id (its directory's inode) of a process cgroup, for the peer check; 0 if none. */
uint64_t trees_cgroup_id(const char *dir);

/* Enters `dir` (and the session's pids cgroup where pids are v1) for a spawn; trees_leave goes back. */
int trees_enter(const char *process_dir, const char *session_dir);
void trees_leave(void);

/* Signals every member of a process's tree: its cgroup, else its group and what /proc shows below it. */
void trees_signal(const char *dir, pid_t leader, int sig);
/* SIGKILL to a whole session (expiry): one cgroup.kill, else each of its leaders' trees. */
void trees_kill_session(const char *session_dir, const pid_t *leaders, int count);
/* SIGKILL to everything the host started. */
void trees_kill_all(void);
/* Removes an empty cgroup directory; 0 when gone (or never made), -1 while something lives in it. */
int trees_remove(const char *dir);
/* A session is over and its processes forgotten: its cgroups go (if empty). */
void trees_session_remove(const char *session_dir);
/* Whether anything still lives in the cgroup (it may not be removed yet). */
int trees_populated(const char *dir);
/* Shutdown: removes the host's cgroups once empty. */
void trees_dispose(void);

/* The process group leaders whose trees a session owns (its children) are signalled by pid; for /proc walks: */
void signal_tree_by_proc(pid_t root, int sig);

#endif
