/*
 * The host's model: sessions (a daemon's session, kept here so it outlives
 * the daemon) and their processes, each with its pipes or terminal, its
 * seq counter, retained output and exit status. proc.c runs processes;
 * session.c keeps sessions; link.c speaks to the daemon.
 */
#ifndef EXECMUX_HOST_H
#define EXECMUX_HOST_H

#include <stdint.h>
#include <sys/types.h>

#include "loop.h"
#include "outlog.h"
#include "wire.h"

struct host_config {
  uint64_t retained_bytes;   /* per process, charged as outlog.h says */
  uint64_t retention_budget; /* the whole host */
  uint32_t kill_grace_ms;
  uint32_t exit_wait_ms;     /* how long a reaped child's exit waits for its output to end */
  int end_with_daemon;       /* no daemon, no host: port 0, stdio, --process-host in-process */
  uint32_t daemon_pid;       /* the attached daemon's, as it gave it: named to a daemon turned away */
};
extern struct host_config cfg;

struct inbuf {
  struct inbuf *next;
  uint32_t len, off;
  uint8_t data[];
};

struct session;

struct proc {
  uint32_t handle;
  struct session *session;
  struct proc *session_next;
  struct proc *all_next, *all_prev; /* every process, oldest first */
  struct proc *closed_next, *closed_prev; /* closed ones, oldest close first */
  char *process_id;
  uint16_t process_id_len;
  uint8_t *meta;
  uint32_t meta_len;
  uint32_t flags; /* START_* */
  pid_t pid, outer_pid;
  uint64_t start_ms, start_epoch_ms;

  /* Output: pipes out[0] stdout and out[1] stderr; a terminal's master is out[0] (read and written). */
  struct watch out[2];
  int streams, ended_streams;
  struct watch in; /* a pipe's stdin; unused on a terminal */
  int stdin_open, stdin_closing;
  struct inbuf *inq, *inq_tail;
  uint64_t inq_bytes;
  /* One write may wait for room (see proc_write). */
  uint32_t waiting_id, waiting_bound, waiting_len;
  uint8_t *waiting_data;
  int has_waiting;
  int deepened;

  uint64_t next_seq;
  struct outlog log;
  int64_t charged; /* what this log charges the budget */

  int reaped, exit_code, exit_signal;
  int exit_published;
  uint64_t exit_seq;
  int closed;
  uint64_t closed_seq, closed_at;
  int denied;
  timer_id exit_timer, kill_timer;
  int terminating;

  int paused;
  uint32_t chunk_limit;
  uint64_t queued; /* bytes of its output queued to the daemon */
  int held_by_queue;

  char *cgroup;
  uint64_t cgroup_id;
};

struct session {
  char *id;
  uint8_t *blob;
  uint32_t blob_len;
  int64_t ttl_ms;
  int attached;
  int keep_while_running; /* detached, its ttl counts from the last of its processes' exits */
  timer_id expiry;
  struct proc *procs;
  char *cgroup;
  struct session *next;
};

/* session.c */
struct session *session_find(const char *id);
struct session *session_get(const char *id); /* made when missing */
void session_ensure_cgroup(struct session *s); /* made on its first process, where cgroups hold trees */
void session_put(const char *id, int64_t ttl_ms, int attached, int keep_while_running, const uint8_t *blob, uint32_t blob_len);
void session_process_exited(struct session *s); /* a process of it was reaped */
void session_drop(struct session *s);
void session_kill(struct session *s);
struct session *sessions_first(void);
/* The daemon is gone: detached sessions start their expiry. */
void sessions_orphaned(void);
void sessions_adopted(void);
void session_maybe_free(struct session *s);

/* proc.c */
int proc_init(void);
struct proc *proc_by_handle(uint32_t handle);
struct proc *procs_first(void);
int procs_count(void);
/* Starts a process; on failure returns NULL with *err and *stage set and a message in `why`. */
struct proc *proc_start(struct session *s, uint32_t flags, uint16_t cols, uint16_t rows, const char *process_id, const char *file,
                        char *const argv[], char *const envp[], const char *cwd, const uint8_t *meta, uint32_t meta_len, int *err, int *stage,
                        char *why, size_t why_len);
/* 0 accepted, 1 stdin closed, 2 full; 4: held (answered later with `id`). */
int proc_write(struct proc *p, uint32_t id, uint32_t bound, const uint8_t *data, uint32_t len);
int proc_close_stdin(struct proc *p);
void proc_signal(struct proc *p, int sig);
int proc_terminate(struct proc *p);
void proc_resize(struct proc *p, uint16_t cols, uint16_t rows);
void proc_set_paused(struct proc *p, int paused);
void proc_limit(struct proc *p, uint32_t bytes);
void proc_forget(struct proc *p);
void proc_state(struct wbuf *b, struct proc *p);
/* The daemon's queue drained (some of this process's output was written, or all of it). */
void proc_sent(struct proc *p, uint64_t bytes);
void procs_queue_drained(void);
/* The daemon went away: the pauses and chunk bounds its connections' flow control set go with it. */
void procs_daemon_gone(void);
void procs_reap(void);
/* Shutdown: SIGTERM to every tree, SIGKILL after the grace, then `done` once all are reaped. */
void procs_shutdown(uint32_t grace_ms, void (*done)(void));
/* Whether any process was started in a sandbox with the network on (peer checks are then needed). */
int procs_network_sandboxes(void);
int procs_is_sandbox_cgroup(uint64_t cgroup_id);
int procs_is_sandboxed_outer_pid(pid_t outer);
void budget_charge(int64_t bytes);

/* peer.c */
/* 1 when the connection's other end belongs to a sandboxed process (or cannot be told apart from one). */
int peer_is_sandboxed(int family, const uint8_t local[16], uint16_t local_port, const uint8_t remote[16], uint16_t remote_port);

/* main.c: with no daemon attached and no session left, the host ends. */
void host_idle_check(void);

/* readiness (proc.c) */
void proc_test_spawn(void (*done)(int ok, void *arg), void *arg);

#endif
