#include "map.h"

#include <stdlib.h>

#include "util.h"

static char tombstone;
#define TOMBSTONE ((void *)&tombstone)

static size_t hash(uint64_t key) {
  key ^= key >> 33;
  key *= 0xff51afd7ed558ccdULL;
  key ^= key >> 33;
  return (size_t)key;
}

void *map_get(const struct map *m, uint64_t key) {
  if (!m->cap) return NULL;
  for (size_t i = hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    struct map_slot *s = &m->slots[i];
    if (!s->value) return NULL;
    if (s->value != TOMBSTONE && s->key == key) return s->value;
  }
}

static void grow(struct map *m) {
  struct map_slot *old = m->slots;
  size_t old_cap = m->cap;
  m->cap = old_cap ? (m->len * 4 > old_cap ? old_cap * 2 : old_cap) : 64;
  m->slots = xcalloc(m->cap, sizeof *m->slots);
  m->len = m->used = 0;
  for (size_t i = 0; i < old_cap; i++) {
    if (old[i].value && old[i].value != TOMBSTONE) map_put(m, old[i].key, old[i].value);
  }
  free(old);
}

void map_put(struct map *m, uint64_t key, void *value) {
  if ((m->used + 1) * 4 > m->cap * 3) grow(m);
  size_t tomb = (size_t)-1;
  for (size_t i = hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    struct map_slot *s = &m->slots[i];
    if (!s->value) {
      if (tomb != (size_t)-1) s = &m->slots[tomb];
      else m->used++;
      s->key = key, s->value = value;
      m->len++;
      return;
    }
    if (s->value == TOMBSTONE) {
      if (tomb == (size_t)-1) tomb = i;
    } else if (s->key == key) {
      s->value = value;
      return;
    }
  }
}

void map_del(struct map *m, uint64_t key) {
  if (!m->cap) return;
  for (size_t i = hash(key) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
    struct map_slot *s = &m->slots[i];
    if (!s->value) return;
    if (s->value != TOMBSTONE && s->key == key) {
      s->value = TOMBSTONE;
      m->len--;
      return;
    }
  }
}
