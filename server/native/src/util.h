/* Small helpers every file uses: allocation that cannot return NULL, time, logging. */
#ifndef EXECMUX_UTIL_H
#define EXECMUX_UTIL_H

#include <stddef.h>
#include <stdint.h>

void *xmalloc(size_t n);
void *xcalloc(size_t count, size_t n);
void *xrealloc(void *p, size_t n);
char *xstrdup(const char *s);

/* Milliseconds of a monotonic clock. */
uint64_t now_ms(void);

enum log_level { LOG_DEBUG = 20, LOG_INFO = 30, LOG_WARN = 40, LOG_ERROR = 50 };
/* To the daemon while one is attached (it logs as its own), else to stderr. */
void logf_(enum log_level level, const char *format, ...) __attribute__((format(printf, 2, 3)));

/* Sets O_NONBLOCK (and FD_CLOEXEC); returns -1 with errno on failure. */
int set_nonblocking(int fd);
/* write() until done or an error other than EINTR (for small blocking writes). */
int write_all(int fd, const void *p, size_t n);

#endif
