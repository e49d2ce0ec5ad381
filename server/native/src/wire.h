/*
 * The link between the daemon (Node) and this host: frames of
 *   u32 length (of what follows) | u8 type | payload
 * little-endian, fields in a fixed order per type (see link.c). Process
 * output is the exception that matters for speed: its payload ends with the
 * exact body of the WebSocket binary frame the daemon sends to a client
 * (shared/src/binary-frame.ts), so the daemon can send it as it came.
 */
#ifndef EXECMUX_WIRE_H
#define EXECMUX_WIRE_H

#include <stddef.h>
#include <stdint.h>

/* A growable byte buffer for building a message. */
struct wbuf {
  uint8_t *data;
  size_t len, cap;
};

void wb_init(struct wbuf *b);
void wb_free(struct wbuf *b);
void wb_reserve(struct wbuf *b, size_t more);
void wb_u8(struct wbuf *b, uint8_t v);
void wb_u16(struct wbuf *b, uint16_t v);
void wb_u32(struct wbuf *b, uint32_t v);
void wb_i32(struct wbuf *b, int32_t v);
void wb_u64(struct wbuf *b, uint64_t v);
void wb_bytes(struct wbuf *b, const void *p, size_t n); /* u32 length, then the bytes */
void wb_raw(struct wbuf *b, const void *p, size_t n);
void wb_str(struct wbuf *b, const char *s);
/* Starts a frame of `type`; wb_end fills in its length. Returns the frame's offset. */
size_t wb_begin(struct wbuf *b, uint8_t type);
void wb_end(struct wbuf *b, size_t start);

/* Reading a payload: every getter fails (sets bad) past the end instead of reading it. */
struct rbuf {
  const uint8_t *p;
  size_t left;
  int bad;
};

uint8_t rb_u8(struct rbuf *r);
uint16_t rb_u16(struct rbuf *r);
uint32_t rb_u32(struct rbuf *r);
int32_t rb_i32(struct rbuf *r);
uint64_t rb_u64(struct rbuf *r);
/* A u32-length-prefixed run of bytes, in place (not copied); *n gets its length. */
const uint8_t *rb_bytes(struct rbuf *r, uint32_t *n);
/* The same as a NUL-terminated copy (malloc'd), or NULL when bad or it holds a NUL. */
char *rb_str(struct rbuf *r);
/* A u32 count of strings, as a NULL-terminated malloc'd array of malloc'd strings. */
char **rb_strs(struct rbuf *r);
void free_strs(char **v);

#endif
