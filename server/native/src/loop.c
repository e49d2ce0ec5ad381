#include "loop.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/epoll.h>

#include "util.h"

static int epfd = -1;
static int stopping = 0, stop_code = 0;

int loop_init(void) {
  epfd = epoll_create1(EPOLL_CLOEXEC);
  return epfd;
}

void loop_watch(struct watch *w, uint32_t events) {
  if (w->fd < 0 || events == w->events) return;
  struct epoll_event ev = {.events = events, .data.ptr = w};
  if (events == 0) {
    epoll_ctl(epfd, EPOLL_CTL_DEL, w->fd, NULL);
  } else if (w->events == 0) {
    if (epoll_ctl(epfd, EPOLL_CTL_ADD, w->fd, &ev) < 0 && errno == EEXIST) epoll_ctl(epfd, EPOLL_CTL_MOD, w->fd, &ev);
  } else {
    epoll_ctl(epfd, EPOLL_CTL_MOD, w->fd, &ev);
  }
  w->events = events;
}

void loop_forget(struct watch *w) {
  loop_watch(w, 0);
}

static void **graveyard;
static size_t graveyard_len, graveyard_cap;

void loop_free_later(void *p) {
  if (graveyard_len == graveyard_cap) {
    graveyard_cap = graveyard_cap ? graveyard_cap * 2 : 64;
    graveyard = xrealloc(graveyard, graveyard_cap * sizeof *graveyard);
  }
  graveyard[graveyard_len++] = p;
}

static void bury(void) {
  for (size_t i = 0; i < graveyard_len; i++) free(graveyard[i]);
  graveyard_len = 0;
}

/* Timers: a binary min-heap of deadlines; a cancelled timer stays until it comes up, then is skipped. */
struct timer {
  uint64_t due;
  timer_id id;
  void (*fn)(void *);
  void *arg;
};
static struct timer *heap;
static size_t heap_len, heap_cap;
static timer_id next_id = 1;
/* Cancelled ids still in the heap (few at a time: a sorted small array would do, a flat one does). */
static timer_id *cancelled;
static size_t cancelled_len, cancelled_cap;

static void heap_swap(size_t a, size_t b) {
  struct timer t = heap[a];
  heap[a] = heap[b], heap[b] = t;
}

timer_id timer_after(uint64_t ms, void (*fn)(void *), void *arg) {
  if (heap_len == heap_cap) {
    heap_cap = heap_cap ? heap_cap * 2 : 64;
    heap = xrealloc(heap, heap_cap * sizeof *heap);
  }
  size_t i = heap_len++;
  heap[i] = (struct timer){.due = now_ms() + ms, .id = next_id++, .fn = fn, .arg = arg};
  while (i > 0 && heap[(i - 1) / 2].due > heap[i].due) heap_swap(i, (i - 1) / 2), i = (i - 1) / 2;
  return heap[i].id;
}

void timer_cancel(timer_id id) {
  if (!id) return;
  if (cancelled_len == cancelled_cap) {
    cancelled_cap = cancelled_cap ? cancelled_cap * 2 : 64;
    cancelled = xrealloc(cancelled, cancelled_cap * sizeof *cancelled);
  }
  cancelled[cancelled_len++] = id;
}

static int take_cancelled(timer_id id) {
  for (size_t i = 0; i < cancelled_len; i++) {
    if (cancelled[i] == id) {
      cancelled[i] = cancelled[--cancelled_len];
      return 1;
    }
  }
  return 0;
}

static struct timer heap_pop(void) {
  struct timer top = heap[0];
  heap[0] = heap[--heap_len];
  for (size_t i = 0;;) {
    size_t l = 2 * i + 1, r = l + 1, m = i;
    if (l < heap_len && heap[l].due < heap[m].due) m = l;
    if (r < heap_len && heap[r].due < heap[m].due) m = r;
    if (m == i) break;
    heap_swap(i, m), i = m;
  }
  return top;
}

/* Runs what is due; returns how long until the next timer (-1: none). */
static int run_timers(void) {
  while (heap_len > 0) {
    uint64_t now = now_ms();
    if (heap[0].due > now) {
      uint64_t wait = heap[0].due - now;
      return wait > 60000 ? 60000 : (int)wait;
    }
    struct timer t = heap_pop();
    if (take_cancelled(t.id)) continue;
    t.fn(t.arg);
    bury();
    if (stopping) return 0;
  }
  return -1;
}

void loop_stop(int code) {
  stopping = 1;
  stop_code = code;
}

int loop_run(void) {
  struct epoll_event events[64];
  while (!stopping) {
    int timeout = run_timers();
    if (stopping) break;
    int n = epoll_wait(epfd, events, 64, timeout);
    if (n < 0) {
      if (errno == EINTR) continue;
      logf_(LOG_ERROR, "epoll_wait: %m");
      return 70;
    }
    for (int i = 0; i < n && !stopping; i++) {
      struct watch *w = events[i].data.ptr;
      /* A watch removed by an earlier event of this batch is skipped (its memory lives until bury()). */
      if (w->events == 0) continue;
      w->ready(w, events[i].events);
    }
    bury();
  }
  return stop_code;
}
