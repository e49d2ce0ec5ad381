/* An open-addressing hash map from a 64-bit key (a handle, a pid) to a pointer. */
#ifndef EXECMUX_MAP_H
#define EXECMUX_MAP_H

#include <stddef.h>
#include <stdint.h>

struct map_slot {
  uint64_t key;
  void *value; /* NULL: empty; TOMBSTONE: deleted */
};

struct map {
  struct map_slot *slots;
  size_t cap, len, used; /* used counts tombstones too */
};

void *map_get(const struct map *m, uint64_t key);
void map_put(struct map *m, uint64_t key, void *value);
void map_del(struct map *m, uint64_t key);

#endif
