/*
 * The link to the daemon: one at a time. Over a socket in the state
 * directory (a daemon that dies or is upgraded finds this host again there)
 * or over a descriptor the daemon passed at start (a host private to that
 * daemon: it ends with it). Frames out are queued and written as the socket
 * takes them; process output is queued by reference, never copied.
 */
#ifndef EXECMUX_LINK_H
#define EXECMUX_LINK_H

#include <stdint.h>

#include "wire.h"

struct proc;
struct chunk;

/* Listens on `path` (persistent host) or speaks over `fd` (private host). 0 on success. */
int link_listen(const char *path);
void link_use_fd(int fd);
int link_attached(void);

/* Queues a message built in `b` (from wb_begin to its end); `b` may be reused after. */
void link_send(struct wbuf *b);
/* Queues a process's output chunk as MSG_OUTPUT. */
void link_send_output(struct proc *p, struct chunk *c);
/* Sends a log line to the daemon; 0 when none is attached (the caller logs elsewhere). */
int link_log(int level, const char *text);
/* Whether the daemon is behind on reading: then no process is read until it catches up. */
int link_backlogged(void);
/* Queue limit per process: past it that process is not read. */
#define PROC_QUEUE_LIMIT (512u * 1024)

/* Implemented by main.c: a whole message from the daemon, and the daemon's arrival and departure. */
void on_message(uint8_t type, const uint8_t *payload, uint32_t len);
void on_daemon_gone(int left_on_purpose);

#endif
