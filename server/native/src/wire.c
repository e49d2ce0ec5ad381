#include "wire.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

void wb_init(struct wbuf *b) { b->data = NULL, b->len = 0, b->cap = 0; }
void wb_free(struct wbuf *b) { free(b->data), wb_init(b); }

void wb_reserve(struct wbuf *b, size_t more) {
  if (b->len + more <= b->cap) return;
  size_t cap = b->cap ? b->cap : 256;
  while (cap < b->len + more) cap *= 2;
  b->data = xrealloc(b->data, cap);
  b->cap = cap;
}

void wb_raw(struct wbuf *b, const void *p, size_t n) {
  wb_reserve(b, n);
  if (n) memcpy(b->data + b->len, p, n);
  b->len += n;
}
void wb_u8(struct wbuf *b, uint8_t v) { wb_raw(b, &v, 1); }
void wb_u16(struct wbuf *b, uint16_t v) {
  uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
  wb_raw(b, x, 2);
}
void wb_u32(struct wbuf *b, uint32_t v) {
  uint8_t x[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16), (uint8_t)(v >> 24)};
  wb_raw(b, x, 4);
}
void wb_i32(struct wbuf *b, int32_t v) { wb_u32(b, (uint32_t)v); }
void wb_u64(struct wbuf *b, uint64_t v) {
  wb_u32(b, (uint32_t)v);
  wb_u32(b, (uint32_t)(v >> 32));
}
void wb_bytes(struct wbuf *b, const void *p, size_t n) {
  wb_u32(b, (uint32_t)n);
  wb_raw(b, p, n);
}
void wb_str(struct wbuf *b, const char *s) { wb_bytes(b, s, s ? strlen(s) : 0); }

size_t wb_begin(struct wbuf *b, uint8_t type) {
  size_t start = b->len;
  wb_u32(b, 0);
  wb_u8(b, type);
  return start;
}

void wb_end(struct wbuf *b, size_t start) {
  uint32_t n = (uint32_t)(b->len - start - 4);
  uint8_t *p = b->data + start;
  p[0] = (uint8_t)n, p[1] = (uint8_t)(n >> 8), p[2] = (uint8_t)(n >> 16), p[3] = (uint8_t)(n >> 24);
}

static const uint8_t *take(struct rbuf *r, size_t n) {
  if (r->bad || r->left < n) {
    r->bad = 1;
    return NULL;
  }
  const uint8_t *p = r->p;
  r->p += n, r->left -= n;
  return p;
}

uint8_t rb_u8(struct rbuf *r) {
  const uint8_t *p = take(r, 1);
  return p ? p[0] : 0;
}
uint16_t rb_u16(struct rbuf *r) {
  const uint8_t *p = take(r, 2);
  return p ? (uint16_t)(p[0] | p[1] << 8) : 0;
}
uint32_t rb_u32(struct rbuf *r) {
  const uint8_t *p = take(r, 4);
  return p ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24 : 0;
}
int32_t rb_i32(struct rbuf *r) { return (int32_t)rb_u32(r); }
uint64_t rb_u64(struct rbuf *r) {
  uint64_t lo = rb_u32(r);
  return lo | (uint64_t)rb_u32(r) << 32;
}
const uint8_t *rb_bytes(struct rbuf *r, uint32_t *n) {
  *n = rb_u32(r);
  const uint8_t *p = take(r, *n);
  if (!p) *n = 0;
  return p;
}
char *rb_str(struct rbuf *r) {
  uint32_t n;
  const uint8_t *p = rb_bytes(r, &n);
  if (!p && n == 0 && r->bad) return NULL;
  if (n && memchr(p, 0, n)) {
    r->bad = 1;
    return NULL;
  }
  char *s = xmalloc(n + 1);
  if (n) memcpy(s, p, n);
  s[n] = 0;
  return s;
}
char **rb_strs(struct rbuf *r) {
  uint32_t count = rb_u32(r);
  if (r->bad || count > r->left / 4) {
    r->bad = 1;
    return NULL;
  }
  char **v = xcalloc(count + 1, sizeof *v);
  for (uint32_t i = 0; i < count; i++) {
    v[i] = rb_str(r);
    if (!v[i]) {
      free_strs(v);
      r->bad = 1;
      return NULL;
    }
  }
  return v;
}
void free_strs(char **v) {
  if (!v) return;
  for (char **s = v; *s; s++) free(*s);
  free(v);
}
