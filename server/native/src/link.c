#define _GNU_SOURCE
#include "link.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <unistd.h>

#include "host.h"
#include "loop.h"
#include "proto.h"
#include "util.h"

/* Stop reading processes while this much waits for the daemon; read again below the low mark. */
#define LINK_HIGH (8u * 1024 * 1024)
#define LINK_LOW (2u * 1024 * 1024)
/* The largest message the daemon may send: a write of the daemon's largest stdin chunk and then some. */
#define MAX_INBOUND (64u * 1024 * 1024)

struct segment {
  struct segment *next;
  uint8_t *head; /* owned bytes: a whole message, or an output message's header */
  uint32_t head_len;
  struct chunk *chunk; /* output data after `head`, or NULL */
  uint32_t handle;
  size_t done; /* bytes of this segment already written */
};

static struct watch listener = {.fd = -1};
static struct watch conn = {.fd = -1};
static int private_link;
static struct segment *queue_head, *queue_tail;
static uint64_t queued_bytes;
static int backlogged;
static uint8_t *in_buf;
static size_t in_len, in_cap;
static int left_on_purpose;

static void conn_ready(struct watch *w, uint32_t events);

int link_attached(void) { return conn.fd >= 0; }
int link_backlogged(void) { return backlogged; }

static void update_interest(void) {
  if (conn.fd < 0) return;
  loop_watch(&conn, EPOLLIN | (queue_head ? EPOLLOUT : 0));
}

static void free_segment(struct segment *s) {
  free(s->head);
  if (s->chunk) chunk_unref(s->chunk);
  free(s);
}

static void drop_queue(void) {
  for (struct segment *s = queue_head, *next; s; s = next) {
    next = s->next;
    if (s->chunk) {
      struct proc *p = proc_by_handle(s->handle);
      if (p) proc_sent(p, s->chunk->len);
    }
    free_segment(s);
  }
  queue_head = queue_tail = NULL;
  queued_bytes = 0;
  if (backlogged) {
    backlogged = 0;
    procs_queue_drained();
  }
}

static void disconnect(void) {
  if (conn.fd < 0) return;
  loop_forget(&conn);
  close(conn.fd);
  conn.fd = -1;
  in_len = 0;
  drop_queue();
  int purpose = left_on_purpose;
  left_on_purpose = 0;
  on_daemon_gone(purpose);
}

/* Writes as much of the queue as the socket takes now. */
static void flush(void) {
  while (queue_head && conn.fd >= 0) {
    struct iovec iov[64];
    int n = 0;
    for (struct segment *s = queue_head; s && n < 63; s = s->next) {
      size_t done = s->done;
      if (done < s->head_len) {
        iov[n++] = (struct iovec){s->head + done, s->head_len - done};
        done = s->head_len;
      }
      if (s->chunk) iov[n++] = (struct iovec){s->chunk->data + (done - s->head_len), s->chunk->len - (done - s->head_len)};
    }
    ssize_t written = writev(conn.fd, iov, n);
    if (written < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) break;
      disconnect();
      return;
    }
    size_t left = (size_t)written;
    while (left > 0 && queue_head) {
      struct segment *s = queue_head;
      size_t total = s->head_len + (s->chunk ? s->chunk->len : 0);
      size_t take = total - s->done < left ? total - s->done : left;
      s->done += take, left -= take;
      queued_bytes -= take;
      if (s->done < total) break;
      queue_head = s->next;
      if (!queue_head) queue_tail = NULL;
      if (s->chunk) {
        struct proc *p = proc_by_handle(s->handle);
        if (p) proc_sent(p, s->chunk->len);
      }
      free_segment(s);
    }
  }
  if (backlogged && queued_bytes < LINK_LOW) {
    backlogged = 0;
    procs_queue_drained();
  }
  update_interest();
}

static void enqueue(struct segment *s) {
  size_t total = s->head_len + (s->chunk ? s->chunk->len : 0);
  s->next = NULL;
  s->done = 0;
  if (queue_tail) queue_tail->next = s;
  else queue_head = s;
  queue_tail = s;
  queued_bytes += total;
  if (queued_bytes > LINK_HIGH) backlogged = 1;
  /* At once: an echo must not wait for the next turn of the loop. */
  if (queue_head == s) flush();
  else update_interest();
}

void link_send(struct wbuf *b) {
  if (conn.fd < 0) {
    b->len = 0;
    return;
  }
  struct segment *s = xcalloc(1, sizeof *s);
  s->head = xmalloc(b->len);
  memcpy(s->head, b->data, b->len);
  s->head_len = (uint32_t)b->len;
  b->len = 0;
  enqueue(s);
}

void link_send_output(struct proc *p, struct chunk *c) {
  if (conn.fd < 0) return;
  uint32_t id_len = p->process_id_len;
  uint32_t head_len = 4 + 1 + 4 + 12 + id_len;
  uint8_t *h = xmalloc(head_len);
  uint32_t frame = head_len - 4 + c->len;
  h[0] = (uint8_t)frame, h[1] = (uint8_t)(frame >> 8), h[2] = (uint8_t)(frame >> 16), h[3] = (uint8_t)(frame >> 24);
  h[4] = MSG_OUTPUT;
  h[5] = (uint8_t)p->handle, h[6] = (uint8_t)(p->handle >> 8), h[7] = (uint8_t)(p->handle >> 16), h[8] = (uint8_t)(p->handle >> 24);
  /* The client's binary frame header (big-endian): kind, stream, id length, seq high, seq low. */
  uint8_t *f = h + 9;
  uint32_t hi = (uint32_t)(c->seq >> 32), lo = (uint32_t)c->seq;
  f[0] = 1, f[1] = c->stream, f[2] = (uint8_t)(id_len >> 8), f[3] = (uint8_t)id_len;
  f[4] = (uint8_t)(hi >> 24), f[5] = (uint8_t)(hi >> 16), f[6] = (uint8_t)(hi >> 8), f[7] = (uint8_t)hi;
  f[8] = (uint8_t)(lo >> 24), f[9] = (uint8_t)(lo >> 16), f[10] = (uint8_t)(lo >> 8), f[11] = (uint8_t)lo;
  memcpy(f + 12, p->process_id, id_len);
  struct segment *s = xcalloc(1, sizeof *s);
  s->head = h;
  s->head_len = head_len;
  chunk_ref(c);
  s->chunk = c;
  s->handle = p->handle;
  p->queued += c->len;
  enqueue(s);
}

int link_log(int level, const char *text) {
  if (conn.fd < 0) return 0;
  struct wbuf b;
  wb_init(&b);
  size_t start = wb_begin(&b, MSG_LOG);
  wb_u8(&b, (uint8_t)level);
  wb_str(&b, text);
  wb_end(&b, start);
  link_send(&b);
  wb_free(&b);
  return 1;
}

/* Cuts whole frames out of what arrived and hands each on. */
static void consume(void) {
  size_t at = 0;
  while (in_len - at >= 5) {
    const uint8_t *p = in_buf + at;
    uint32_t len = (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
    if (len < 1 || len > MAX_INBOUND) {
      logf_(LOG_ERROR, "the daemon sent a frame of %u bytes; dropping the link", len);
      disconnect();
      return;
    }
    if (in_len - at - 4 < len) break;
    if (len == 1 && p[4] == MSG_LEAVE) left_on_purpose = 1;
    on_message(p[4], p + 5, len - 1);
    at += 4 + len;
    if (conn.fd < 0) return;
  }
  if (at > 0) {
    memmove(in_buf, in_buf + at, in_len - at);
    in_len -= at;
  }
}

static void conn_ready(struct watch *w, uint32_t events) {
  (void)w;
  if (events & EPOLLOUT) flush();
  if (conn.fd < 0) return;
  if (events & (EPOLLIN | EPOLLHUP | EPOLLERR)) {
    for (int reads = 0; reads < 16 && conn.fd >= 0; reads++) {
      if (in_cap - in_len < 65536) {
        in_cap = in_cap ? in_cap * 2 : 131072;
        while (in_cap - in_len < 65536) in_cap *= 2;
        in_buf = xrealloc(in_buf, in_cap);
      }
      ssize_t n = read(conn.fd, in_buf + in_len, in_cap - in_len);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) break;
      if (n <= 0) {
        disconnect();
        return;
      }
      in_len += (size_t)n;
      consume();
    }
    /* A long message grew the buffer; give the memory back once it is through. */
    if (in_len == 0 && in_cap > 1024 * 1024) {
      free(in_buf);
      in_buf = NULL, in_cap = 0;
    }
  }
}

/*
 * Connections turned away while a daemon is attached. Each is told why
 * (MSG_REFUSED) and kept open, its input read and dropped, until it closes:
 * closed at once, a daemon whose hello met the closed socket saw only the
 * link drop, never why. At most REFUSED_MAX at a time; more are closed at once.
 */
#define REFUSED_MAX 8
static struct watch refused[REFUSED_MAX]; /* free while .ready is NULL */

static void refused_ready(struct watch *w, uint32_t events) {
  (void)events;
  char sink[4096];
  for (;;) {
    ssize_t n = read(w->fd, sink, sizeof sink);
    if (n > 0 || (n < 0 && errno == EINTR)) continue;
    if (n < 0 && errno == EAGAIN) return;
    break; /* its end of file, or an error: it is gone */
  }
  loop_forget(w);
  close(w->fd);
  *w = (struct watch){.fd = -1};
}

static void accept_ready(struct watch *w, uint32_t events) {
  (void)events;
  int fd = accept4(w->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
  if (fd < 0) return;
  if (conn.fd >= 0) {
    struct wbuf b;
    wb_init(&b);
    size_t start = wb_begin(&b, MSG_REFUSED);
    wb_u32(&b, 0);
    char why[128];
    snprintf(why, sizeof why, "another execmux daemon (pid %u) is attached to this process host", cfg.daemon_pid);
    wb_str(&b, why);
    wb_end(&b, start);
    (void)!write(fd, b.data, b.len);
    wb_free(&b);
    for (int i = 0; i < REFUSED_MAX; i++) {
      if (refused[i].ready) continue;
      refused[i] = (struct watch){.fd = fd, .ready = refused_ready};
      loop_watch(&refused[i], EPOLLIN);
      return;
    }
    close(fd);
    return;
  }
  conn = (struct watch){.fd = fd, .ready = conn_ready};
  update_interest();
}

int link_listen(const char *path) {
  int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  struct sockaddr_un address = {.sun_family = AF_UNIX};
  if (strlen(path) >= sizeof address.sun_path) {
    close(fd);
    errno = ENAMETOOLONG;
    return -1;
  }
  strcpy(address.sun_path, path);
  unlink(path);
  if (bind(fd, (struct sockaddr *)&address, sizeof address) < 0 || listen(fd, 16) < 0) {
    int saved = errno;
    close(fd);
    errno = saved;
    return -1;
  }
  listener = (struct watch){.fd = fd, .ready = accept_ready};
  loop_watch(&listener, EPOLLIN);
  return 0;
}

void link_use_fd(int fd) {
  private_link = 1;
  set_nonblocking(fd);
  conn = (struct watch){.fd = fd, .ready = conn_ready};
  update_interest();
}
