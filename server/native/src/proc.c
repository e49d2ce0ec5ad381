/*
 * Processes: spawning (posix_spawn: vfork and exec, so the host's size never
 * matters), their pipes or terminal, numbering their output, exit and close
 * as the protocol has it, and reaping (waitpid(-1): what the kernel reports,
 * never a look at every child).
 *
 * The rules are upstream's local backend's, as the daemon kept them before
 * this host existed: one seq counter per process shared by output, exit and
 * close; a pipe child's last output before its exit (the exit waits for its
 * streams to end, or exit_wait_ms after the reap when a descendant keeps
 * them open); close after exit and after every stream ended, always last.
 */
#define _GNU_SOURCE
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include "host.h"
#include "link.h"
#include "map.h"
#include "procfs.h"
#include "proto.h"
#include "trees.h"
#include "util.h"

/* The most one read of a terminal returns: the line discipline's buffer less the byte it keeps free. */
#define PTY_READ_MAX 4095
/*
 * A terminal's burst stops here, whatever the chunk bound: a terminal is
 * interactive, and a replayed chunk is sent whole (one of 256 KiB never got
 * through a link cut every 20-120 KB: test/reconnect.test.ts, PTY).
 */
#define PTY_BURST_MAX 65536
/* A chunk's size until the daemon says otherwise (its flow control sets each process's bound). */
#define DEFAULT_CHUNK 65536
#define MAX_CHUNK (256u * 1024)
/* Pipes deepened to DEEP_PIPE_BYTES when a read fills one, at most this many at a time (the user's pipe budget). */
#define MAX_DEEP_PIPES 16
#define DEEP_PIPE_BYTES (1024 * 1024)
/* How often cgroups of closed processes that still hold something are tried again for removal. */
#define SWEEP_MS 1000

static struct map by_handle, by_pid;
static struct proc *all_head, *all_tail;
static struct proc *closed_head, *closed_tail; /* closed, oldest close first: the first the budget forgets */
static int count;
static uint32_t next_handle = 1;
static struct watch child_signals = {.fd = -1};
static uint8_t scratch[MAX_CHUNK];
static int deep_pipes;
static uint64_t budget_used;
static int network_sandboxes;
static posix_spawnattr_t spawn_attr;

/* Cgroups of processes already forgotten that still held something: removed by the sweep once empty. */
struct lingering {
  struct lingering *next;
  char *dir;
  uint64_t cgroup_id;
  int network_sandbox;
};
static struct lingering *lingering;
static timer_id sweep_timer;

/* The readiness test child, when one runs. */
static pid_t test_pid;
static void (*test_done)(int, void *);
static void *test_arg;

static void (*shutdown_done)(void);
static timer_id shutdown_timer;

static void out_ready(struct watch *w, uint32_t events);
static void in_ready(struct watch *w, uint32_t events);
static void check_close(struct proc *p);
static void publish_exit(struct proc *p);
static void stdin_closed(struct proc *p);
static void flush_stdin(struct proc *p);
static void update_interest(struct proc *p);
static int lingering_network_sandbox(uint64_t cgroup_id);
static void shutdown_give_up(void *arg);

struct proc *proc_by_handle(uint32_t handle) { return map_get(&by_handle, handle); }
struct proc *procs_first(void) { return all_head; }
int procs_count(void) { return count; }
int procs_network_sandboxes(void) { return network_sandboxes; }

static void reap_ready(struct watch *w, uint32_t events);

int proc_init(void) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGCHLD);
  sigprocmask(SIG_BLOCK, &set, NULL);
  child_signals.fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  if (child_signals.fd < 0) return -1;
  child_signals.ready = reap_ready;
  loop_watch(&child_signals, EPOLLIN);
  /* Every child: its own session, every signal at its default, nothing blocked. */
  posix_spawnattr_init(&spawn_attr);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(&spawn_attr, &all);
  posix_spawnattr_setsigmask(&spawn_attr, &none);
  posix_spawnattr_setflags(&spawn_attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  return 0;
}

/* ---- the retention budget ------------------------------------------------------------------- */

static void evict_for(uint64_t bytes);

void budget_charge(int64_t bytes) {
  budget_used = (uint64_t)((int64_t)budget_used + bytes);
  if (budget_used > cfg.retention_budget) evict_for(budget_used - cfg.retention_budget + cfg.retention_budget / 8);
}

static void charge_log(struct proc *p) {
  int64_t now = (int64_t)outlog_charge(&p->log);
  int64_t delta = now - p->charged;
  p->charged = now;
  budget_used = (uint64_t)((int64_t)budget_used + delta);
}

/*
 * Past the budget, closed processes are forgotten, the one closed longest
 * ago first; if that is not enough, the oldest output of the session that
 * retains most is evicted, its largest processes first. A session that
 * floods evicts its own output before anyone else's.
 */
static void evict_for(uint64_t bytes) {
  uint64_t freed = 0;
  while (freed < bytes && closed_head) {
    struct proc *p = closed_head;
    freed += (uint64_t)p->charged;
    struct wbuf b;
    wb_init(&b);
    size_t start = wb_begin(&b, MSG_FORGOTTEN);
    wb_u32(&b, p->handle);
    wb_end(&b, start);
    link_send(&b);
    wb_free(&b);
    proc_forget(p);
  }
  while (freed < bytes) {
    struct session *largest = NULL;
    uint64_t largest_charge = 0;
    for (struct session *s = sessions_first(); s; s = s->next) {
      uint64_t charge = 0;
      for (struct proc *p = s->procs; p; p = p->session_next) charge += (uint64_t)p->charged;
      if (charge > largest_charge) largest = s, largest_charge = charge;
    }
    if (!largest) return;
    int progressed = 0;
    while (freed < bytes) {
      struct proc *biggest = NULL;
      for (struct proc *p = largest->procs; p; p = p->session_next)
        if (p->log.count > 1 && (!biggest || p->charged > biggest->charged)) biggest = p;
      if (!biggest) break;
      uint64_t released = outlog_evict(&biggest->log, bytes - freed);
      charge_log(biggest);
      freed += released;
      progressed |= released > 0;
    }
    /* Every process is down to its newest chunk, which is always kept. */
    if (!progressed) return;
  }
}

/* ---- spawning --------------------------------------------------------------------------------- */

static void set_terminal_modes(int slave, uint16_t cols, uint16_t rows, int master) {
  /*
   * The termios node-pty's fork sets (its pty.cc), where a PTY's kernel
   * defaults differ: iflag BRKINT, IXANY, IMAXBEL and IUTF8, cflag HUPCL,
   * VEOL and VEOL2 "undefined" rather than NUL.
   */
  struct termios t;
  if (tcgetattr(slave, &t) == 0) {
    t.c_iflag |= BRKINT | IXANY | IMAXBEL | IUTF8;
    t.c_cflag |= HUPCL;
    t.c_cc[VEOL] = t.c_cc[VEOL2] = _POSIX_VDISABLE;
    tcsetattr(slave, TCSANOW, &t);
  }
  struct winsize size = {.ws_col = cols, .ws_row = rows};
  ioctl(master, TIOCSWINSZ, &size);
}

static int open_terminal(uint16_t cols, uint16_t rows, int *master_out, int *slave_out, char *path, size_t path_len) {
  int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (master < 0) return -1;
  if (grantpt(master) < 0 || unlockpt(master) < 0 || ptsname_r(master, path, path_len) != 0) goto fail;
  /* O_NOCTTY: the host leads a session with no terminal and must not take this one. */
  int slave = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (slave < 0) goto fail;
  set_terminal_modes(slave, cols, rows, master);
  set_nonblocking(master);
  *master_out = master, *slave_out = slave;
  return 0;
fail:;
  int saved = errno;
  close(master);
  errno = saved;
  return -1;
}

static void fail_message(char *why, size_t why_len, const char *what, int err) {
  snprintf(why, why_len, "%s: %s", what, strerror(err));
}

static void register_proc(struct proc *p) {
  map_put(&by_handle, p->handle, p);
  map_put(&by_pid, (uint64_t)p->pid, p);
  p->all_prev = all_tail;
  if (all_tail) all_tail->all_next = p;
  else all_head = p;
  all_tail = p;
  p->session_next = p->session->procs;
  p->session->procs = p;
  count++;
}

struct proc *proc_start(struct session *s, uint32_t flags, uint16_t cols, uint16_t rows, const char *process_id, const char *file,
                        char *const argv[], char *const envp[], const char *cwd, const uint8_t *meta, uint32_t meta_len, int *err, int *stage,
                        char *why, size_t why_len) {
  int tty = (flags & START_TTY) != 0;
  int dir = -1, master = -1, slave = -1, in_r = -1, in_w = -1, out_r = -1, out_w = -1, err_r = -1, err_w = -1;
  char tty_path[128] = "";
  char *cgroup = NULL;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  struct proc *p = NULL;

  /* The working directory first: its failure is named after it, not the program. */
  dir = open(cwd, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) {
    *err = errno, *stage = 1;
    fail_message(why, why_len, cwd, errno);
    goto fail;
  }
  if (tty) {
    if (open_terminal(cols, rows, &master, &slave, tty_path, sizeof tty_path) < 0) {
      *err = errno, *stage = 3;
      fail_message(why, why_len, "cannot open a terminal", errno);
      goto fail;
    }
    /* Opened without O_NOCTTY after setsid: it becomes the child's controlling terminal. */
    posix_spawn_file_actions_addopen(&actions, 0, tty_path, O_RDWR, 0);
    posix_spawn_file_actions_adddup2(&actions, 0, 1);
    posix_spawn_file_actions_adddup2(&actions, 0, 2);
  } else {
    int fds[2];
    if (flags & START_PIPE_STDIN) {
      if (pipe2(fds, O_CLOEXEC) < 0) goto pipe_fail;
      in_r = fds[0], in_w = fds[1];
    } else {
      in_r = open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (in_r < 0) goto pipe_fail;
    }
    if (pipe2(fds, O_CLOEXEC) < 0) goto pipe_fail;
    out_r = fds[0], out_w = fds[1];
    if (pipe2(fds, O_CLOEXEC) < 0) goto pipe_fail;
    err_r = fds[0], err_w = fds[1];
    posix_spawn_file_actions_adddup2(&actions, in_r, 0);
    posix_spawn_file_actions_adddup2(&actions, out_w, 1);
    posix_spawn_file_actions_adddup2(&actions, err_w, 2);
  }
  posix_spawn_file_actions_addfchdir_np(&actions, dir);

  cgroup = trees_process_new(s->cgroup);
  pid_t pid;
  if (trees_enter(cgroup, s->cgroup) < 0) {
    *err = errno, *stage = 5;
    fail_message(why, why_len, "cannot enter the process's cgroup", errno);
    trees_leave();
    goto fail;
  }
  int rc = posix_spawn(&pid, file, &actions, &spawn_attr, argv, envp);
  trees_leave();
  if (rc != 0) {
    *err = rc, *stage = 2;
    fail_message(why, why_len, file, rc);
    goto fail;
  }

  p = xcalloc(1, sizeof *p);
  p->handle = next_handle++;
  p->session = s;
  p->process_id = xstrdup(process_id);
  p->process_id_len = (uint16_t)strlen(process_id);
  if (meta_len) {
    p->meta = xmalloc(meta_len);
    memcpy(p->meta, meta, meta_len);
    p->meta_len = meta_len;
  }
  p->flags = flags;
  p->pid = pid;
  p->outer_pid = outer_pid_of(pid);
  p->start_ms = now_ms();
  struct timespec wall;
  clock_gettime(CLOCK_REALTIME, &wall);
  p->start_epoch_ms = (uint64_t)wall.tv_sec * 1000 + (uint64_t)wall.tv_nsec / 1000000;
  p->next_seq = 1;
  outlog_init(&p->log);
  p->chunk_limit = DEFAULT_CHUNK;
  p->cgroup = cgroup;
  cgroup = NULL;
  p->cgroup_id = (flags & START_NETWORK_SANDBOX) ? trees_cgroup_id(p->cgroup) : 0;
  if (flags & START_NETWORK_SANDBOX) network_sandboxes++;
  p->stdin_open = 1;
  p->in = (struct watch){.fd = -1, .ready = in_ready, .owner = p};
  p->out[0] = (struct watch){.fd = -1, .ready = out_ready, .owner = p};
  p->out[1] = (struct watch){.fd = -1, .ready = out_ready, .owner = p};
  if (tty) {
    p->out[0].fd = master;
    master = -1;
    p->streams = 1;
  } else {
    set_nonblocking(out_r), set_nonblocking(err_r);
    p->out[0].fd = out_r, p->out[1].fd = err_r;
    out_r = err_r = -1;
    p->streams = 2;
    if (in_w >= 0) {
      set_nonblocking(in_w);
      p->in.fd = in_w;
      in_w = -1;
    } else {
      p->stdin_open = 0;
    }
  }
  register_proc(p);
  update_interest(p);

fail:
  posix_spawn_file_actions_destroy(&actions);
  /* The child holds its own copies (exec has happened: posix_spawn waits for it), or there is no child. */
  int close_fds[] = {dir, master, slave, in_r, in_w, out_r, out_w, err_r, err_w};
  for (size_t i = 0; i < sizeof close_fds / sizeof *close_fds; i++)
    if (close_fds[i] >= 0) close(close_fds[i]);
  if (cgroup) {
    trees_remove(cgroup);
    free(cgroup);
  }
  return p;
pipe_fail:
  *err = errno, *stage = 4;
  fail_message(why, why_len, "cannot make pipes", errno);
  goto fail;
}

/* ---- output ----------------------------------------------------------------------------------- */

static int is_tty(const struct proc *p) { return (p->flags & START_TTY) != 0; }

/* Whether the process's output may be read now: not paused by the daemon, not too far ahead of it. */
static int may_read(const struct proc *p) {
  return !p->paused && p->queued <= PROC_QUEUE_LIMIT && !link_backlogged();
}

static void update_interest(struct proc *p) {
  int reading = may_read(p);
  for (int i = 0; i < p->streams; i++) {
    struct watch *w = &p->out[i];
    if (w->fd < 0) continue;
    uint32_t events = reading ? EPOLLIN : 0;
    if (is_tty(p) && p->inq) events |= EPOLLOUT;
    loop_watch(w, events);
  }
  if (p->in.fd >= 0) loop_watch(&p->in, p->inq ? EPOLLOUT : 0);
}

static void emit_output(struct proc *p, uint8_t stream, const uint8_t *data, size_t len) {
  struct chunk *c = chunk_new(len);
  memcpy(c->data, data, len);
  c->seq = p->next_seq++;
  c->stream = stream;
  c->at_ms = (uint32_t)(now_ms() - p->start_ms);
  link_send_output(p, c);
  int64_t charged = outlog_append(&p->log, c, cfg.retained_bytes);
  p->charged += charged;
  budget_charge(charged);
}

static void end_stream(struct proc *p, struct watch *w) {
  loop_forget(w);
  close(w->fd);
  w->fd = -1;
  p->ended_streams++;
  if (is_tty(p)) stdin_closed(p);
  if (p->ended_streams == p->streams && p->reaped && !p->exit_published) publish_exit(p);
  check_close(p);
}

/* Deepens a pipe a fast writer keeps full, within the bound on deepened pipes. */
static void maybe_deepen(struct proc *p, int fd, size_t read_bytes) {
  if (p->deepened || deep_pipes >= MAX_DEEP_PIPES) return;
  int size = fcntl(fd, F_GETPIPE_SZ);
  if (size <= 0 || read_bytes < (size_t)size || size >= DEEP_PIPE_BYTES) return;
  if (fcntl(fd, F_SETPIPE_SZ, DEEP_PIPE_BYTES) > 0) {
    p->deepened = 1;
    deep_pipes++;
  }
}

static void out_ready(struct watch *w, uint32_t events) {
  struct proc *p = w->owner;
  if ((events & EPOLLOUT) && is_tty(p)) flush_stdin(p);
  if (w->fd < 0 || !(events & (EPOLLIN | EPOLLHUP | EPOLLERR))) return;
  if (!may_read(p)) {
    update_interest(p);
    return;
  }
  uint8_t stream = is_tty(p) ? STREAM_PTY : w == &p->out[0] ? STREAM_STDOUT : STREAM_STDERR;
  size_t cap = p->chunk_limit < sizeof scratch ? p->chunk_limit : sizeof scratch;
  if (is_tty(p) && cap > PTY_BURST_MAX) cap = PTY_BURST_MAX;
  if (is_tty(p) && cap < PTY_READ_MAX) cap = PTY_READ_MAX;
  size_t len = 0;
  int ended = 0;
  /* A burst: read on while the kernel has more and the chunk has room, so a fast writer's output leaves in few chunks. */
  while (len < cap) {
    ssize_t n = read(w->fd, scratch + len, cap - len);
    if (n > 0) {
      len += (size_t)n;
      if (!is_tty(p)) maybe_deepen(p, w->fd, (size_t)n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) break;
    /* 0: end of file. EIO on a terminal: every slave is closed and everything was read. */
    ended = 1;
    break;
  }
  if (len > 0) emit_output(p, stream, scratch, len);
  if (ended) {
    end_stream(p, w);
    return;
  }
  if (!may_read(p)) update_interest(p);
}

void proc_sent(struct proc *p, uint64_t bytes) {
  int held = !may_read(p);
  p->queued -= bytes < p->queued ? bytes : p->queued;
  if (held && may_read(p)) update_interest(p);
}

void procs_queue_drained(void) {
  for (struct proc *p = all_head; p; p = p->all_next) update_interest(p);
}

/* ---- exit and close --------------------------------------------------------------------------- */

/* Upstream's guess whether a sandboxed command failed because the sandbox stopped it (sandbox/sandbox-denied.ts). */
static int likely_denied(struct proc *p) {
  static const char *phrases[] = {"operation not permitted", "permission denied", "read-only file system", "seccomp", "sandbox", "landlock", "failed to write file"};
  if (p->exit_code == 0) return 0;
  /* Each chunk with the tail of the one before, lowercased: a phrase split across chunks is found too. */
  char window[64 + MAX_CHUNK];
  size_t carry = 0;
  for (struct chunk *c = p->log.head; c; c = c->next) {
    size_t n = c->len < MAX_CHUNK ? c->len : MAX_CHUNK;
    for (size_t i = 0; i < n; i++) {
      unsigned char ch = c->data[i];
      window[carry + i] = (char)(ch >= 'A' && ch <= 'Z' ? ch + 32 : ch == 0 ? ' ' : ch);
    }
    window[carry + n] = 0;
    for (size_t k = 0; k < sizeof phrases / sizeof *phrases; k++)
      if (memmem(window, carry + n, phrases[k], strlen(phrases[k]))) return 1;
    size_t keep = carry + n < 32 ? carry + n : 32;
    memmove(window, window + carry + n - keep, keep);
    carry = keep;
  }
  if (p->exit_code == 2 || p->exit_code == 126 || p->exit_code == 127) return 0;
  return p->exit_code == 128 + SIGSYS;
}

static void publish_exit(struct proc *p) {
  if (p->exit_published || !p->reaped) return;
  timer_cancel(p->exit_timer);
  p->exit_timer = 0;
  p->exit_published = 1;
  p->exit_seq = p->next_seq++;
  if (p->flags & START_SANDBOXED) p->denied = likely_denied(p);
  struct wbuf b;
  wb_init(&b);
  size_t start = wb_begin(&b, MSG_EXITED);
  wb_u32(&b, p->handle);
  wb_u64(&b, p->exit_seq);
  wb_i32(&b, p->exit_code);
  wb_u8(&b, (uint8_t)p->exit_signal);
  wb_u8(&b, (uint8_t)p->denied);
  wb_end(&b, start);
  link_send(&b);
  wb_free(&b);
  check_close(p);
}

static void exit_waited(void *arg) {
  struct proc *p = arg;
  p->exit_timer = 0;
  publish_exit(p);
}

static void sweep(void *arg);

static void linger(struct proc *p) {
  struct lingering *l = xcalloc(1, sizeof *l);
  l->dir = p->cgroup;
  l->cgroup_id = p->cgroup_id;
  l->network_sandbox = (p->flags & START_NETWORK_SANDBOX) != 0;
  p->cgroup = NULL;
  l->next = lingering;
  lingering = l;
  if (!sweep_timer) sweep_timer = timer_after(SWEEP_MS, sweep, NULL);
}

static void sweep(void *arg) {
  (void)arg;
  sweep_timer = 0;
  for (struct lingering **at = &lingering; *at;) {
    struct lingering *l = *at;
    if (trees_remove(l->dir) == 0) {
      *at = l->next;
      if (l->network_sandbox) network_sandboxes--;
      free(l->dir);
      free(l);
    } else {
      at = &l->next;
    }
  }
  if (lingering) sweep_timer = timer_after(SWEEP_MS, sweep, NULL);
}

static void check_close(struct proc *p) {
  if (p->closed || !p->exit_published || p->ended_streams < p->streams) return;
  p->closed = 1;
  p->closed_seq = p->next_seq++;
  p->closed_at = now_ms();
  struct wbuf b;
  wb_init(&b);
  size_t start = wb_begin(&b, MSG_CLOSED);
  wb_u32(&b, p->handle);
  wb_u64(&b, p->closed_seq);
  wb_end(&b, start);
  link_send(&b);
  wb_free(&b);
  /*
   * The leader is gone and its output closed: anything left in its group is
   * an orphan nobody can read from or signal through the protocol. After a
   * terminate, the rest of its tree goes too; what it started in a session
   * of its own lives on until its session ends.
   */
  if (p->kill_timer) {
    timer_cancel(p->kill_timer);
    p->kill_timer = 0;
    trees_signal(p->cgroup, p->pid, SIGKILL);
  } else {
    kill(-p->pid, SIGKILL);
  }
  p->closed_prev = closed_tail;
  if (closed_tail) closed_tail->closed_next = p;
  else closed_head = p;
  closed_tail = p;
}

static void on_reaped(struct proc *p, int status) {
  p->reaped = 1;
  if (WIFSIGNALED(status)) {
    p->exit_signal = WTERMSIG(status);
    p->exit_code = 128 + p->exit_signal;
  } else {
    p->exit_code = WEXITSTATUS(status);
  }
  map_del(&by_pid, (uint64_t)p->pid);
  if (p->session) session_process_exited(p->session);
  /* A pipe's stdin ends with the child (as it did when Node held it): later writes are stdinClosed. */
  if (!is_tty(p)) stdin_closed(p);
  if (p->ended_streams == p->streams) publish_exit(p);
  else p->exit_timer = timer_after(cfg.exit_wait_ms, exit_waited, p);
  if (shutdown_done) {
    int running = 0;
    for (struct proc *q = all_head; q && !running; q = q->all_next) running = !q->reaped;
    if (!running) {
      timer_cancel(shutdown_timer);
      void (*done)(void) = shutdown_done;
      shutdown_done = NULL;
      done();
    }
  }
}

static void reap_ready(struct watch *w, uint32_t events) {
  (void)events;
  struct signalfd_siginfo info;
  while (read(w->fd, &info, sizeof info) == sizeof info) {
  }
  procs_reap();
}

void procs_reap(void) {
  for (;;) {
    int status;
    pid_t pid = waitpid(-1, &status, WNOHANG);
    if (pid <= 0) return;
    if (pid == test_pid) {
      test_pid = 0;
      void (*done)(int, void *) = test_done;
      test_done = NULL;
      if (done) done(WIFEXITED(status) && WEXITSTATUS(status) == 0, test_arg);
      continue;
    }
    struct proc *p = map_get(&by_pid, (uint64_t)pid);
    /* Anything else is an orphan that came to this init or subreaper: reaped, nothing to tell. */
    if (p) on_reaped(p, status);
  }
}

/* ---- input ------------------------------------------------------------------------------------ */

static int stdin_fd(const struct proc *p) { return is_tty(p) ? p->out[0].fd : p->in.fd; }

static void answer_write(uint32_t id, uint8_t status) {
  struct wbuf b;
  wb_init(&b);
  size_t start = wb_begin(&b, MSG_WRITTEN);
  wb_u32(&b, id);
  wb_u8(&b, status);
  wb_end(&b, start);
  link_send(&b);
  wb_free(&b);
}

static void free_input(struct proc *p) {
  for (struct inbuf *q = p->inq, *next; q; q = next) next = q->next, free(q);
  p->inq = p->inq_tail = NULL;
  p->inq_bytes = 0;
}

static void stdin_closed(struct proc *p) {
  if (!p->stdin_open) return;
  p->stdin_open = 0;
  free_input(p);
  if (p->in.fd >= 0) {
    loop_forget(&p->in);
    close(p->in.fd);
    p->in.fd = -1;
  }
  if (p->has_waiting) {
    p->has_waiting = 0;
    free(p->waiting_data);
    p->waiting_data = NULL;
    answer_write(p->waiting_id, 1);
  }
  update_interest(p);
}

static void queue_input(struct proc *p, const uint8_t *data, uint32_t len) {
  struct inbuf *q = xmalloc(sizeof *q + len);
  q->next = NULL;
  q->len = len, q->off = 0;
  memcpy(q->data, data, len);
  if (p->inq_tail) p->inq_tail->next = q;
  else p->inq = q;
  p->inq_tail = q;
  p->inq_bytes += len;
}

/* A waiting write goes in once what the child has not read leaves room for it. */
static void admit_waiting(struct proc *p) {
  if (!p->has_waiting || p->inq_bytes + p->waiting_len > p->waiting_bound) return;
  p->has_waiting = 0;
  queue_input(p, p->waiting_data, p->waiting_len);
  free(p->waiting_data);
  p->waiting_data = NULL;
  answer_write(p->waiting_id, 0);
  flush_stdin(p);
}

static void flush_stdin(struct proc *p) {
  int fd = stdin_fd(p);
  while (p->inq && fd >= 0) {
    struct inbuf *q = p->inq;
    ssize_t n = write(fd, q->data + q->off, q->len - q->off);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) break;
      /* EPIPE: the reader is gone; EIO: the terminal's other side is. */
      if (is_tty(p)) {
        free_input(p);
      } else {
        stdin_closed(p);
        return;
      }
      break;
    }
    q->off += (uint32_t)n;
    p->inq_bytes -= (uint64_t)n;
    if (q->off == q->len) {
      p->inq = q->next;
      if (!p->inq) p->inq_tail = NULL;
      free(q);
    }
  }
  if (!p->inq && p->stdin_closing && !is_tty(p)) {
    stdin_closed(p);
    return;
  }
  update_interest(p);
  if (p->has_waiting) admit_waiting(p);
}

static void in_ready(struct watch *w, uint32_t events) {
  struct proc *p = w->owner;
  if (events & (EPOLLERR | EPOLLHUP)) {
    stdin_closed(p);
    return;
  }
  flush_stdin(p);
}

int proc_write(struct proc *p, uint32_t id, uint32_t bound, const uint8_t *data, uint32_t len) {
  if (!p->stdin_open || p->stdin_closing || stdin_fd(p) < 0) return 1;
  if (p->has_waiting || len > bound) return 2;
  if (p->inq_bytes + len > bound) {
    p->has_waiting = 1;
    p->waiting_id = id, p->waiting_bound = bound, p->waiting_len = len;
    p->waiting_data = xmalloc(len ? len : 1);
    memcpy(p->waiting_data, data, len);
    return 4;
  }
  if (len == 0) return 0;
  queue_input(p, data, len);
  flush_stdin(p);
  return 0;
}

int proc_close_stdin(struct proc *p) {
  if (!p->stdin_open || stdin_fd(p) < 0) return 1;
  if (is_tty(p)) {
    /* The terminal's VEOF character, Ctrl-D, as node-pty configures it. */
    static const uint8_t eof = 4;
    queue_input(p, &eof, 1);
    flush_stdin(p);
    return 0;
  }
  p->stdin_closing = 1;
  flush_stdin(p);
  return 0;
}

/* ---- control ---------------------------------------------------------------------------------- */

void proc_signal(struct proc *p, int sig) {
  if (p->closed || p->pid <= 0) return;
  pid_t group = p->pid;
  /* On a terminal, where a key press would go: its foreground job. */
  if (is_tty(p) && p->out[0].fd >= 0) {
    pid_t foreground = tcgetpgrp(p->out[0].fd);
    if (foreground > 0) group = foreground;
  }
  kill(-group, sig);
}

static void kill_after_grace(void *arg) {
  struct proc *p = arg;
  p->kill_timer = 0;
  trees_signal(p->cgroup, p->pid, SIGKILL);
}

int proc_terminate(struct proc *p) {
  if (p->reaped) return 0;
  p->terminating = 1;
  trees_signal(p->cgroup, p->pid, SIGTERM);
  if (!p->kill_timer) p->kill_timer = timer_after(cfg.kill_grace_ms, kill_after_grace, p);
  return 1;
}

void proc_resize(struct proc *p, uint16_t cols, uint16_t rows) {
  if (!is_tty(p) || p->out[0].fd < 0) return;
  struct winsize size = {.ws_col = cols, .ws_row = rows};
  ioctl(p->out[0].fd, TIOCSWINSZ, &size);
}

void proc_set_paused(struct proc *p, int paused) {
  if (p->paused == paused) return;
  p->paused = paused;
  update_interest(p);
}

void procs_daemon_gone(void) {
  for (struct proc *p = all_head; p; p = p->all_next) {
    p->chunk_limit = DEFAULT_CHUNK;
    proc_set_paused(p, 0);
  }
}

void proc_limit(struct proc *p, uint32_t bytes) {
  p->chunk_limit = bytes < 1024 ? 1024 : bytes > MAX_CHUNK ? MAX_CHUNK : bytes;
}

void proc_forget(struct proc *p) {
  if (!p->reaped) trees_signal(p->cgroup, p->pid, SIGKILL);
  timer_cancel(p->exit_timer);
  timer_cancel(p->kill_timer);
  for (int i = 0; i < 2; i++) {
    if (p->out[i].fd >= 0) {
      loop_forget(&p->out[i]);
      close(p->out[i].fd);
      p->out[i].fd = -1;
    }
  }
  if (p->in.fd >= 0) {
    loop_forget(&p->in);
    close(p->in.fd);
  }
  free_input(p);
  free(p->waiting_data);
  if (p->deepened) deep_pipes--;
  budget_used -= (uint64_t)p->charged;
  outlog_free(&p->log);
  map_del(&by_handle, p->handle);
  if (!p->reaped) map_del(&by_pid, (uint64_t)p->pid);
  if (p->all_prev) p->all_prev->all_next = p->all_next;
  else all_head = p->all_next;
  if (p->all_next) p->all_next->all_prev = p->all_prev;
  else all_tail = p->all_prev;
  if (p->closed) {
    if (p->closed_prev) p->closed_prev->closed_next = p->closed_next;
    else closed_head = p->closed_next;
    if (p->closed_next) p->closed_next->closed_prev = p->closed_prev;
    else closed_tail = p->closed_prev;
  }
  for (struct proc **at = &p->session->procs; *at; at = &(*at)->session_next) {
    if (*at == p) {
      *at = p->session_next;
      break;
    }
  }
  int lingers = 0;
  if (p->cgroup) {
    if (trees_remove(p->cgroup) == 0) free(p->cgroup);
    else linger(p), lingers = 1;
  }
  /*
   * Peer checks stay needed while anything of a network sandbox may live: in
   * its cgroup until that is empty; without cgroups nothing tells, so for
   * the host's life.
   */
  if ((p->flags & START_NETWORK_SANDBOX) && p->cgroup_id && !lingers) network_sandboxes--;
  count--;
  struct session *s = p->session;
  free(p->process_id);
  free(p->meta);
  loop_free_later(p);
  session_maybe_free(s);
}

void proc_state(struct wbuf *b, struct proc *p) {
  wb_u64(b, p->next_seq);
  wb_u8(b, (uint8_t)p->exit_published);
  wb_i32(b, p->exit_published ? p->exit_code : 0);
  wb_u8(b, (uint8_t)p->exit_signal);
  wb_u64(b, p->exit_seq);
  wb_u8(b, (uint8_t)p->closed);
  wb_u64(b, p->closed_seq);
  wb_u8(b, (uint8_t)p->denied);
  wb_u64(b, p->log.head ? p->log.head->seq : 0);
  wb_u64(b, p->log.retained);
  wb_u64(b, (uint64_t)p->charged);
  wb_u64(b, p->start_epoch_ms);
  wb_u8(b, (uint8_t)p->reaped);
  wb_i32(b, p->outer_pid);
}

/* ---- the peer check's view of sandboxes --------------------------------------------------------- */

static int lingering_network_sandbox(uint64_t cgroup_id) {
  for (struct lingering *l = lingering; l; l = l->next)
    if (l->network_sandbox && cgroup_id && l->cgroup_id == cgroup_id) return 1;
  return 0;
}

int procs_is_sandbox_cgroup(uint64_t cgroup_id) {
  if (!cgroup_id) return 0;
  for (struct proc *p = all_head; p; p = p->all_next)
    if ((p->flags & START_NETWORK_SANDBOX) && p->cgroup_id == cgroup_id) return 1;
  return lingering_network_sandbox(cgroup_id);
}

int procs_is_sandboxed_outer_pid(pid_t outer) {
  /* Up the chain of parents in the machine's /proc: a sandbox's processes all descend from its process. */
  int proc_dir = procfs_outer();
  for (int depth = 0; outer > 1 && depth < 4096; depth++) {
    for (struct proc *p = all_head; p; p = p->all_next)
      if ((p->flags & START_NETWORK_SANDBOX) && p->outer_pid == outer && !p->reaped) return 1;
    struct proc_stat st;
    if (read_proc_stat(proc_dir, outer, &st) < 0) return 0;
    outer = st.ppid;
  }
  return 0;
}

/* ---- shutdown and readiness ------------------------------------------------------------------- */

static void shutdown_kill(void *arg) {
  (void)arg;
  shutdown_timer = 0;
  trees_kill_all();
  for (struct proc *p = all_head; p; p = p->all_next)
    if (!p->reaped) trees_signal(p->cgroup, p->pid, SIGKILL);
  /* Whatever is still running after this is stuck in the kernel: stop waiting for it after a while. */
  if (shutdown_done) shutdown_timer = timer_after(2000, shutdown_give_up, NULL);
}

static void shutdown_give_up(void *arg) {
  (void)arg;
  shutdown_timer = 0;
  void (*done)(void) = shutdown_done;
  shutdown_done = NULL;
  if (done) done();
}

void procs_shutdown(uint32_t grace_ms, void (*done)(void)) {
  int running = 0;
  for (struct proc *p = all_head; p; p = p->all_next) {
    if (p->reaped) continue;
    running = 1;
    trees_signal(p->cgroup, p->pid, SIGTERM);
  }
  if (!running) {
    trees_kill_all();
    done();
    return;
  }
  shutdown_done = done;
  shutdown_timer = timer_after(grace_ms, shutdown_kill, NULL);
}

void proc_test_spawn(void (*done)(int ok, void *arg), void *arg) {
  if (test_pid) {
    done(1, arg); /* one is running: the last answer stands */
    return;
  }
  static char *const argv[] = {"true", NULL};
  static char *const envp[] = {NULL};
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  const char *candidates[] = {"/usr/bin/true", "/bin/true"};
  int rc = ENOENT;
  for (size_t i = 0; i < 2 && rc == ENOENT; i++) rc = posix_spawn(&test_pid, candidates[i], &actions, &spawn_attr, argv, envp);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    test_pid = 0;
    done(0, arg);
    return;
  }
  test_done = done, test_arg = arg;
}
