/*
 * The host's one thread: epoll over every descriptor it reads or writes,
 * and timers. Nothing wakes it but an event or a timer that is due: at rest
 * (no output, no timer) it sleeps in epoll_wait with no timeout.
 */
#ifndef EXECMUX_LOOP_H
#define EXECMUX_LOOP_H

#include <stdint.h>
#include <sys/epoll.h>

struct watch {
  int fd;
  uint32_t events; /* EPOLLIN / EPOLLOUT as registered now (0: not in epoll) */
  void (*ready)(struct watch *w, uint32_t events);
  void *owner;
};

int loop_init(void);
/* Registers, changes or (events 0) removes what `w` waits for. */
void loop_watch(struct watch *w, uint32_t events);
/* The descriptor is about to close: forget it. */
void loop_forget(struct watch *w);

typedef uint64_t timer_id;
timer_id timer_after(uint64_t ms, void (*fn)(void *arg), void *arg);
void timer_cancel(timer_id id);

/*
 * Frees `p` once the current batch of events is handled: a watch whose
 * owner goes away may still be named by a later event of the same batch.
 */
void loop_free_later(void *p);

/* Runs until loop_stop(); returns the code given to it. */
int loop_run(void);
void loop_stop(int code);

#endif
