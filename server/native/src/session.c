/*
 * Sessions as the host keeps them: an id, the daemon's own record of it (an
 * opaque blob it gets back after a restart), its processes, its cgroup, and
 * how long it may live without a daemon (ttl_ms, -1: until its processes
 * end). The daemon runs session expiry while it is there; while none is,
 * the host does, so a daemon that never comes back leaves nothing running
 * longer than its sessions were meant to live. Expiry is the daemon's too:
 * SIGTERM to each running process's tree, and after the kill grace SIGKILL
 * to whatever of the session is left.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "trees.h"
#include "util.h"

static struct session *sessions;

struct session *sessions_first(void) { return sessions; }

struct session *session_find(const char *id) {
  for (struct session *s = sessions; s; s = s->next)
    if (!strcmp(s->id, id)) return s;
  return NULL;
}

struct session *session_get(const char *id) {
  struct session *s = session_find(id);
  if (s) return s;
  s = xcalloc(1, sizeof *s);
  s->id = xstrdup(id);
  s->ttl_ms = -1;
  s->attached = 1;
  /* Its cgroup comes with its first process (session_ensure_cgroup): a session that never starts one, as a
   * client churning sessions makes hundreds of, costs the host no mkdir and rmdir. */
  s->next = sessions;
  sessions = s;
  return s;
}

void session_ensure_cgroup(struct session *s) {
  if (!s->cgroup) s->cgroup = trees_session_new(s->id); /* NULL where trees are not held in cgroups */
}

void session_put(const char *id, int64_t ttl_ms, int attached, int keep_while_running, const uint8_t *blob, uint32_t blob_len) {
  struct session *s = session_get(id);
  s->ttl_ms = ttl_ms;
  s->attached = attached;
  s->keep_while_running = keep_while_running;
  free(s->blob);
  s->blob = NULL;
  s->blob_len = 0;
  if (blob_len) {
    s->blob = xmalloc(blob_len);
    memcpy(s->blob, blob, blob_len);
    s->blob_len = blob_len;
  }
}

void session_kill(struct session *s) {
  pid_t leaders[256];
  int n = 0;
  for (struct proc *p = s->procs; p; p = p->session_next) {
    if (s->cgroup) break;
    /* Without cgroups: each child's tree, and what a closed one left in its group. */
    if (n < 256) leaders[n++] = p->pid;
    else trees_signal(NULL, p->pid, SIGKILL);
  }
  trees_kill_session(s->cgroup, leaders, n);
}

static void unlink_session(struct session *s) {
  for (struct session **at = &sessions; *at; at = &(*at)->next) {
    if (*at == s) {
      *at = s->next;
      return;
    }
  }
}

void session_drop(struct session *s) {
  session_kill(s);
  timer_cancel(s->expiry);
  s->expiry = 0;
  unlink_session(s);
  /* proc_forget frees the session once its last process is gone (session_maybe_free): mark it first. */
  s->attached = -1;
  while (s->procs) proc_forget(s->procs);
  session_maybe_free(s);
}

void session_maybe_free(struct session *s) {
  if (s->attached != -1 || s->procs) return;
  s->attached = -2; /* freed below, once */
  trees_session_remove(s->cgroup);
  free(s->cgroup);
  free(s->id);
  free(s->blob);
  loop_free_later(s);
}

/* No daemon is attached: the host runs expiry. */
static int orphaned;

static void grace_over(void *arg) {
  struct session *s = arg;
  s->expiry = 0;
  session_drop(s);
  host_idle_check();
}

static void expired(void *arg) {
  struct session *s = arg;
  s->expiry = 0;
  int running = 0;
  for (struct proc *p = s->procs; p; p = p->session_next) running += proc_terminate(p);
  logf_(LOG_INFO, "session %s expired with no daemon attached: SIGTERM to its %d running processes", s->id, running);
  if (running) s->expiry = timer_after(cfg.kill_grace_ms, grace_over, s);
  else grace_over(s);
}

static int any_running(const struct session *s) {
  for (const struct proc *p = s->procs; p; p = p->session_next)
    if (!p->reaped) return 1;
  return 0;
}

static void arm_expiry(struct session *s) {
  if (s->ttl_ms < 0 || s->expiry) return;
  if (s->keep_while_running && any_running(s)) return;
  s->expiry = timer_after((uint64_t)s->ttl_ms, expired, s);
}

void session_process_exited(struct session *s) {
  if (orphaned && s->keep_while_running) arm_expiry(s);
}

void sessions_orphaned(void) {
  orphaned = 1;
  for (struct session *s = sessions; s; s = s->next) arm_expiry(s);
}

void sessions_adopted(void) {
  orphaned = 0;
  for (struct session *s = sessions; s; s = s->next) {
    timer_cancel(s->expiry);
    s->expiry = 0;
  }
}
