/*
 * execmux-host: holds every process the daemon starts, their pipes and
 * terminals, and their retained output, in a small process of its own that
 * outlives the daemon. The daemon (Node) may crash, be killed or be upgraded;
 * the same `execmux serve` started again finds this host by its socket and
 * every process and every byte of output is still here.
 *
 * It runs as the init of a PID namespace of its own where the machine
 * allows it (root): then everything it started dies with it, even when every
 * execmux process is SIGKILLed at once. Elsewhere it is a child subreaper, so
 * orphans still come to it to be reaped.
 *
 *   execmux-host (--socket PATH | --fd N) [--ready-fd N] [--containment auto|cgroup|process-tree]
 *                [--pid-namespace auto|on|off] [--pids-max N]
 */
#define _GNU_SOURCE
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "address.h"
#include "host.h"
#include "link.h"
#include "loop.h"
#include "procfs.h"
#include "proto.h"
#include "trees.h"
#include "util.h"

struct host_config cfg = {
    .retained_bytes = 1024 * 1024,
    .retention_budget = 1024ull * 1024 * 1024,
    .kill_grace_ms = 2000,
    .exit_wait_ms = 50,
    .end_with_daemon = 1,
};

static const char *socket_path;
static int private_fd = -1;
static int in_pid_namespace;
static int shutting_down;
static struct watch signals = {.fd = -1};

static void finish(int code) {
  trees_kill_all();
  for (struct proc *p = procs_first(); p; p = p->all_next)
    if (!p->reaped) trees_signal(p->cgroup, p->pid, SIGKILL);
  /* Reap what is dying, a little while: cgroups are removed only once empty. */
  for (int i = 0; i < 200 && procs_count() > 0; i++) {
    int any = 0;
    for (struct proc *p = procs_first(); p; p = p->all_next) any |= !p->reaped;
    if (!any) break;
    usleep(5000);
    procs_reap();
  }
  trees_dispose();
  if (socket_path) address_release(socket_path);
  loop_stop(code);
}

/* ---- replies ------------------------------------------------------------------------------------ */

static void answer(uint32_t id, uint8_t value) {
  struct wbuf b;
  wb_init(&b);
  size_t start = wb_begin(&b, MSG_ANSWER);
  wb_u32(&b, id);
  wb_u8(&b, value);
  wb_end(&b, start);
  link_send(&b);
  wb_free(&b);
}

static void refuse(uint32_t id, const char *why) {
  struct wbuf b;
  wb_init(&b);
  size_t start = wb_begin(&b, MSG_REFUSED);
  wb_u32(&b, id);
  wb_str(&b, why);
  wb_end(&b, start);
  link_send(&b);
  wb_free(&b);
}

static void send_restore(void) {
  struct wbuf b;
  wb_init(&b);
  for (struct session *s = sessions_first(); s; s = s->next) {
    size_t start = wb_begin(&b, MSG_RESTORE_SESSION);
    wb_str(&b, s->id);
    wb_u64(&b, (uint64_t)s->ttl_ms);
    wb_bytes(&b, s->blob, s->blob_len);
    wb_end(&b, start);
    link_send(&b);
  }
  for (struct proc *p = procs_first(); p; p = p->all_next) {
    size_t start = wb_begin(&b, MSG_RESTORE_PROCESS);
    wb_u32(&b, p->handle);
    wb_str(&b, p->session->id);
    wb_str(&b, p->process_id);
    wb_u8(&b, (uint8_t)p->flags);
    wb_i32(&b, p->outer_pid);
    wb_bytes(&b, p->meta, p->meta_len);
    proc_state(&b, p);
    wb_end(&b, start);
    link_send(&b);
  }
  size_t start = wb_begin(&b, MSG_RESTORE_END);
  wb_end(&b, start);
  link_send(&b);
  wb_free(&b);
}

static void on_hello(uint32_t id, struct rbuf *r) {
  uint32_t version = rb_u32(r);
  uint32_t daemon_pid = rb_u32(r);
  uint64_t retained = rb_u64(r), budget = rb_u64(r);
  uint32_t grace = rb_u32(r), exit_wait = rb_u32(r), end_with_daemon = rb_u32(r);
  if (r->bad) return refuse(id, "malformed hello");
  if (version != PROTOCOL_VERSION) {
    char why[160];
    snprintf(why, sizeof why, "this process host speaks link version %d and the daemon %u: start the matching execmux, or stop the host", PROTOCOL_VERSION, version);
    return refuse(id, why);
  }
  cfg.retained_bytes = retained ? retained : cfg.retained_bytes;
  cfg.retention_budget = budget ? budget : cfg.retention_budget;
  cfg.kill_grace_ms = grace;
  cfg.exit_wait_ms = exit_wait;
  cfg.daemon_pid = daemon_pid;
  /* A private host (over a descriptor) always ends with its daemon. */
  cfg.end_with_daemon = private_fd >= 0 || end_with_daemon;
  const struct trees_info *trees = trees_info();
  struct wbuf b;
  wb_init(&b);
  size_t start = wb_begin(&b, MSG_HELLO_OK);
  wb_u32(&b, id);
  wb_u32(&b, PROTOCOL_VERSION);
  wb_i32(&b, procfs_outer() >= 0 ? outer_pid_of(getpid()) : getpid());
  wb_u8(&b, (uint8_t)trees->kind);
  wb_u8(&b, (uint8_t)in_pid_namespace);
  wb_u8(&b, (uint8_t)trees->pids_limit);
  wb_u8(&b, (uint8_t)(procs_network_sandboxes() > 0));
  wb_str(&b, trees->root);
  wb_end(&b, start);
  link_send(&b);
  wb_free(&b);
  send_restore();
  sessions_adopted();
}

static void on_start(uint32_t id, struct rbuf *r) {
  uint32_t flags = rb_u32(r);
  uint16_t cols = rb_u16(r), rows = rb_u16(r);
  char *session_id = rb_str(r), *process_id = rb_str(r), *file = rb_str(r);
  char **argv = rb_strs(r), **envp = rb_strs(r);
  char *cwd = rb_str(r);
  uint32_t meta_len;
  const uint8_t *meta = rb_bytes(r, &meta_len);
  if (r->bad || !argv || !argv[0] || !session_id || !process_id || !file || !cwd || strlen(process_id) > 65535) {
    refuse(id, "malformed start");
  } else {
    struct session *s = session_get(session_id);
    session_ensure_cgroup(s);
    int err = 0, stage = 0;
    char why[512] = "";
    struct proc *p = NULL;
    if ((flags & START_NETWORK_SANDBOX) && trees_info()->kind == CONTAIN_CGROUP && !s->cgroup) {
      /* The peer check tells a network sandbox by its cgroup: without one it could not. */
      err = EAGAIN, stage = 5;
      snprintf(why, sizeof why, "cannot make a cgroup for the sandbox");
    } else {
      p = proc_start(s, flags, cols ? cols : 80, rows ? rows : 24, process_id, file, argv, envp, cwd, meta, meta_len, &err, &stage, why, sizeof why);
    }
    struct wbuf b;
    wb_init(&b);
    if (p) {
      size_t start = wb_begin(&b, MSG_STARTED);
      wb_u32(&b, id);
      wb_u32(&b, p->handle);
      wb_i32(&b, p->outer_pid);
      wb_u64(&b, p->start_epoch_ms);
      wb_u8(&b, (uint8_t)(procs_network_sandboxes() > 0));
      wb_end(&b, start);
    } else {
      size_t start = wb_begin(&b, MSG_START_FAILED);
      wb_u32(&b, id);
      wb_i32(&b, err);
      wb_u8(&b, (uint8_t)stage);
      wb_str(&b, why);
      wb_end(&b, start);
    }
    link_send(&b);
    wb_free(&b);
  }
  free(session_id), free(process_id), free(file), free(cwd);
  free_strs(argv), free_strs(envp);
}

static void on_read(uint32_t id, struct rbuf *r) {
  struct proc *p = proc_by_handle(rb_u32(r));
  uint64_t after = rb_u64(r), max_bytes = rb_u64(r);
  if (r->bad || !p) return refuse(id, "unknown process");
  struct wbuf b;
  wb_init(&b);
  size_t start = wb_begin(&b, MSG_READ_RESULT);
  wb_u32(&b, id);
  proc_state(&b, p);
  struct gap gap;
  if (outlog_gap(&p->log, after, p->exit_published ? p->exit_seq : 0, &gap)) {
    wb_u8(&b, 1);
    wb_u64(&b, gap.from_seq), wb_u64(&b, gap.to_seq), wb_u64(&b, gap.chunks), wb_u64(&b, gap.bytes);
    wb_u8(&b, (uint8_t)gap.exact);
  } else {
    wb_u8(&b, 0);
  }
  size_t count_at = b.len;
  wb_u32(&b, 0);
  uint32_t count = 0;
  uint64_t total = 0;
  /* The first chunk always, even larger than max_bytes (upstream's rule). */
  for (struct chunk *c = outlog_after(&p->log, after); c; c = c->next) {
    if (count > 0 && total + c->len > max_bytes) break;
    total += c->len;
    wb_u64(&b, c->seq);
    wb_u8(&b, c->stream);
    wb_u32(&b, c->at_ms);
    wb_bytes(&b, c->data, c->len);
    count++;
    if (total >= max_bytes) break;
  }
  b.data[count_at] = (uint8_t)count, b.data[count_at + 1] = (uint8_t)(count >> 8);
  b.data[count_at + 2] = (uint8_t)(count >> 16), b.data[count_at + 3] = (uint8_t)(count >> 24);
  wb_end(&b, start);
  link_send(&b);
  wb_free(&b);
}

static void on_list(uint32_t id, struct rbuf *r) {
  char *session_id = rb_str(r);
  struct session *s = session_id ? session_find(session_id) : NULL;
  free(session_id);
  struct wbuf b;
  wb_init(&b);
  size_t start = wb_begin(&b, MSG_LIST_RESULT);
  wb_u32(&b, id);
  uint32_t count = 0;
  for (struct proc *p = s ? s->procs : NULL; p; p = p->session_next) count++;
  wb_u32(&b, count);
  for (struct proc *p = s ? s->procs : NULL; p; p = p->session_next) {
    wb_u32(&b, p->handle);
    proc_state(&b, p);
  }
  wb_end(&b, start);
  link_send(&b);
  wb_free(&b);
}

static uint32_t shutdown_id;
static void shutdown_done(void) {
  answer(shutdown_id, 1);
}

struct ping {
  uint32_t id;
};
static void ping_done(int ok, void *arg) {
  struct ping *ping = arg;
  answer(ping->id, (uint8_t)ok);
  free(ping);
}

void on_message(uint8_t type, const uint8_t *payload, uint32_t len) {
  struct rbuf r = {.p = payload, .left = len};
  switch (type) {
    case MSG_HELLO: {
      uint32_t id = rb_u32(&r);
      on_hello(id, &r);
      break;
    }
    case MSG_START: {
      uint32_t id = rb_u32(&r);
      on_start(id, &r);
      break;
    }
    case MSG_WRITE: {
      uint32_t id = rb_u32(&r);
      struct proc *p = proc_by_handle(rb_u32(&r));
      uint32_t bound = rb_u32(&r), n;
      const uint8_t *data = rb_bytes(&r, &n);
      if (r.bad) return refuse(id, "malformed write");
      int status = p ? proc_write(p, id, bound, data, n) : 3;
      if (status != 4) {
        struct wbuf b;
        wb_init(&b);
        size_t start = wb_begin(&b, MSG_WRITTEN);
        wb_u32(&b, id);
        wb_u8(&b, (uint8_t)status);
        wb_end(&b, start);
        link_send(&b);
        wb_free(&b);
      }
      break;
    }
    case MSG_CLOSE_STDIN: {
      uint32_t id = rb_u32(&r);
      struct proc *p = proc_by_handle(rb_u32(&r));
      struct wbuf b;
      wb_init(&b);
      size_t start = wb_begin(&b, MSG_WRITTEN);
      wb_u32(&b, id);
      wb_u8(&b, (uint8_t)(p ? proc_close_stdin(p) : 3));
      wb_end(&b, start);
      link_send(&b);
      wb_free(&b);
      break;
    }
    case MSG_SIGNAL: {
      struct proc *p = proc_by_handle(rb_u32(&r));
      uint8_t sig = rb_u8(&r);
      if (p && !r.bad && sig > 0 && sig < 65) proc_signal(p, sig);
      break;
    }
    case MSG_TERMINATE: {
      uint32_t id = rb_u32(&r);
      struct proc *p = proc_by_handle(rb_u32(&r));
      answer(id, (uint8_t)(p && !r.bad ? proc_terminate(p) : 0));
      break;
    }
    case MSG_RESIZE: {
      struct proc *p = proc_by_handle(rb_u32(&r));
      uint16_t cols = rb_u16(&r), rows = rb_u16(&r);
      if (p && !r.bad) proc_resize(p, cols, rows);
      break;
    }
    case MSG_PAUSE: {
      struct proc *p = proc_by_handle(rb_u32(&r));
      uint8_t paused = rb_u8(&r);
      if (p && !r.bad) proc_set_paused(p, paused);
      break;
    }
    case MSG_LIMIT: {
      struct proc *p = proc_by_handle(rb_u32(&r));
      uint32_t bytes = rb_u32(&r);
      if (p && !r.bad) proc_limit(p, bytes);
      break;
    }
    case MSG_READ: {
      uint32_t id = rb_u32(&r);
      on_read(id, &r);
      break;
    }
    case MSG_FORGET: {
      struct proc *p = proc_by_handle(rb_u32(&r));
      if (p && !r.bad) proc_forget(p);
      break;
    }
    case MSG_KILL_SESSION: {
      char *id = rb_str(&r);
      struct session *s = id ? session_find(id) : NULL;
      if (s) session_kill(s);
      free(id);
      break;
    }
    case MSG_SESSION: {
      char *id = rb_str(&r);
      int64_t ttl = (int64_t)rb_u64(&r);
      uint8_t attached = rb_u8(&r);
      uint8_t keep_while_running = rb_u8(&r);
      uint32_t n;
      const uint8_t *blob = rb_bytes(&r, &n);
      if (id && !r.bad) session_put(id, ttl, attached, keep_while_running, blob, n);
      free(id);
      break;
    }
    case MSG_DROP_SESSION: {
      char *id = rb_str(&r);
      struct session *s = id ? session_find(id) : NULL;
      if (s) session_drop(s);
      free(id);
      break;
    }
    case MSG_SHUTDOWN: {
      shutdown_id = rb_u32(&r);
      uint32_t grace = rb_u32(&r);
      shutting_down = 1;
      procs_shutdown(grace, shutdown_done);
      break;
    }
    case MSG_PEER: {
      uint32_t id = rb_u32(&r);
      uint8_t family = rb_u8(&r);
      uint8_t local[16], remote[16];
      for (int i = 0; i < 16; i++) local[i] = rb_u8(&r);
      uint16_t local_port = rb_u16(&r);
      for (int i = 0; i < 16; i++) remote[i] = rb_u8(&r);
      uint16_t remote_port = rb_u16(&r);
      if (r.bad) return refuse(id, "malformed peer");
      answer(id, (uint8_t)peer_is_sandboxed(family, local, local_port, remote, remote_port));
      break;
    }
    case MSG_PING: {
      uint32_t id = rb_u32(&r);
      if (rb_u8(&r)) {
        struct ping *ping = xmalloc(sizeof *ping);
        ping->id = id;
        proc_test_spawn(ping_done, ping);
      } else {
        answer(id, 1);
      }
      break;
    }
    case MSG_LIST: {
      uint32_t id = rb_u32(&r);
      on_list(id, &r);
      break;
    }
    case MSG_LEAVE:
      break;
    default:
      logf_(LOG_WARN, "unknown message %u from the daemon", type);
  }
}

void on_daemon_gone(int left_on_purpose) {
  if (shutting_down || cfg.end_with_daemon || private_fd >= 0) {
    finish(0);
    return;
  }
  if (!left_on_purpose) logf_(LOG_WARN, "the daemon went away without a word; processes keep running until one attaches again");
  /* Paused for its clients, which are gone with it: a process would block until a daemon came back, and stay blocked after. */
  procs_daemon_gone();
  sessions_orphaned();
  if (!sessions_first()) finish(0);
}

/* A session expired with no daemon: a host with nothing left and nobody to serve ends. */
void host_idle_check(void) {
  if (!link_attached() && !sessions_first()) finish(0);
}

static void stop_after_shutdown(void) { finish(0); }

static void signal_ready(struct watch *w, uint32_t events) {
  (void)events;
  struct signalfd_siginfo info;
  while (read(w->fd, &info, sizeof info) == sizeof info) {
    if (info.ssi_signo == SIGTERM) {
      logf_(LOG_INFO, "SIGTERM: every process is terminated and the host stops");
      shutting_down = 1;
      procs_shutdown(cfg.kill_grace_ms, stop_after_shutdown);
    }
  }
}

static void ignore_signal(int sig) { (void)sig; }

/* ---- start-up ------------------------------------------------------------------------------------ */

static void usage(void) {
  fprintf(stderr, "usage: execmux-host (--socket PATH | --fd N) [--ready-fd N] [--containment auto|cgroup|process-tree] [--pid-namespace auto|on|off] [--pids-max N]\n");
  exit(64);
}

/* Every descriptor but the ones named is closed: nothing the daemon held may reach a child. */
static void close_inherited(int keep1, int keep2) {
  for (int fd = 3; fd < 65536; fd++) {
    if (fd == keep1 || fd == keep2) continue;
    if (fcntl(fd, F_GETFD) >= 0) close(fd);
  }
}

/*
 * A PID namespace whose init is this host, and a mount namespace with its
 * own /proc so that children's ps, kill and $$ agree with each other. The
 * process that called us exits once the init is up; the init carries on,
 * handed to the machine's init (or the nearest subreaper), which reaps it
 * when it ends. Not born a child of the daemon (CLONE_PARENT): Node reaps
 * only the children it spawned, so each private host that ended stayed a
 * zombie of a long-lived process that had opened and closed daemons.
 */
static int enter_pid_namespace(int ready_fd) {
  if (unshare(CLONE_NEWPID | CLONE_NEWNS) < 0) return -1;
  /* Mounts made on the machine later still reach the children; theirs reach nothing outside. */
  if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0) return -1;
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) < 0) return -1;
  pid_t init = fork();
  if (init < 0) return -1;
  if (init > 0) {
    /* The caller's process: wait for the init's word, pass it on, and leave it running. */
    close(pipe_fds[1]);
    char line[256];
    ssize_t n = read(pipe_fds[0], line, sizeof line);
    if (n > 0 && ready_fd >= 0) (void)!write(ready_fd, line, (size_t)n);
    _exit(n > 0 ? 0 : 71);
  }
  close(pipe_fds[0]);
  int outer_proc = open("/proc", O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (outer_proc >= 0 && mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) == 0) procfs_set_outer(outer_proc);
  else if (outer_proc >= 0) close(outer_proc);
  return pipe_fds[1];
}

int main(int argc, char **argv) {
  const char *containment = "auto", *pid_namespace = "auto";
  int ready_fd = -1;
  uint32_t pids_max = 0;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!v) usage();
    if (!strcmp(a, "--socket")) socket_path = v;
    else if (!strcmp(a, "--fd")) private_fd = atoi(v);
    else if (!strcmp(a, "--ready-fd")) ready_fd = atoi(v);
    else if (!strcmp(a, "--containment")) containment = v;
    else if (!strcmp(a, "--pid-namespace")) pid_namespace = v;
    else if (!strcmp(a, "--pids-max")) pids_max = (uint32_t)strtoul(v, NULL, 10);
    else usage();
    i++;
  }
  if (!socket_path == (private_fd < 0)) usage();
  close_inherited(private_fd, ready_fd);
  umask(077);
  signal(SIGPIPE, SIG_IGN);
  /* Away from the daemon's session and process group: a Ctrl-C or a group signal meant for it is not for us. */
  if (socket_path) setsid();
  prctl(PR_SET_CHILD_SUBREAPER, 1);

  int ready_pipe = -1;
  if (strcmp(pid_namespace, "off") != 0) {
    ready_pipe = enter_pid_namespace(ready_fd);
    if (ready_pipe >= 0) {
      in_pid_namespace = 1;
    } else if (!strcmp(pid_namespace, "on")) {
      fprintf(stderr, "execmux-host: --spawner-pid-namespace on: no PID namespace here (%s; it needs root)\n", strerror(errno));
      return 78;
    }
  }

  if (trees_init(containment, pids_max) < 0) {
    fprintf(stderr, "execmux-host: --process-containment cgroup: no cgroup v2 with cgroup.kill that this host may create cgroups in\n");
    return 78;
  }
  if (loop_init() < 0 || proc_init() < 0) {
    fprintf(stderr, "execmux-host: cannot start its event loop: %s\n", strerror(errno));
    return 71;
  }
  /* SIGTERM ends everything. Handlers of our own: an init ignores a signal it has no handler for. */
  struct sigaction action = {.sa_handler = ignore_signal};
  sigaction(SIGTERM, &action, NULL);
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGTERM);
  sigprocmask(SIG_BLOCK, &set, NULL);
  signals.fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
  signals.ready = signal_ready;
  loop_watch(&signals, EPOLLIN);
  signal(SIGINT, SIG_IGN);
  signal(SIGHUP, SIG_IGN);

  if (socket_path) {
    if (address_lock(socket_path) < 0) {
      /* Another host serves this address (it is starting too): the daemon connects to that one. */
      const char busy[] = "busy\n";
      if (ready_pipe >= 0) (void)!write(ready_pipe, busy, sizeof busy - 1);
      else if (ready_fd >= 0) (void)!write(ready_fd, busy, sizeof busy - 1);
      trees_dispose();
      return 0;
    }
    address_sweep(socket_path);
    if (link_listen(socket_path) < 0) {
      fprintf(stderr, "execmux-host: cannot listen on %s: %s\n", socket_path, strerror(errno));
      trees_dispose();
      return 71;
    }
  } else {
    link_use_fd(private_fd);
  }
  char line[64];
  int n = snprintf(line, sizeof line, "ready %d\n", (int)(procfs_outer() >= 0 ? outer_pid_of(getpid()) : getpid()));
  if (ready_pipe >= 0) {
    (void)!write(ready_pipe, line, (size_t)n);
    close(ready_pipe);
  } else if (ready_fd >= 0) {
    (void)!write(ready_fd, line, (size_t)n);
  }
  if (ready_fd >= 0) close(ready_fd);
  return loop_run();
}
