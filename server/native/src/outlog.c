#include "outlog.h"

#include <stdlib.h>

#include "util.h"

struct chunk *chunk_new(size_t len) {
  struct chunk *c = xmalloc(sizeof *c + len);
  c->next = NULL;
  c->refs = 1;
  c->len = (uint32_t)len;
  return c;
}
void chunk_ref(struct chunk *c) { c->refs++; }
void chunk_unref(struct chunk *c) {
  if (--c->refs == 0) free(c);
}

void outlog_init(struct outlog *log) {
  *log = (struct outlog){.dropped_seq = -1, .first_evicted_seq = -1};
}

uint64_t outlog_charge(const struct outlog *log) { return log->retained + (uint64_t)log->count * CHUNK_OVERHEAD; }

static void ledger_record(struct outlog *log, uint64_t seq, uint64_t end) {
  if (log->first_evicted_seq < 0) log->first_evicted_seq = (int64_t)seq;
  if (!log->ledger_seq) {
    log->ledger_seq = xmalloc(LEDGER * sizeof *log->ledger_seq);
    log->ledger_end = xmalloc(LEDGER * sizeof *log->ledger_end);
  }
  if (log->ledger_len == LEDGER) {
    log->dropped_seq = (int64_t)log->ledger_seq[log->ledger_start];
    log->dropped_end = log->ledger_end[log->ledger_start];
    log->ledger_start = (log->ledger_start + 1) % LEDGER;
    log->ledger_len--;
  }
  uint32_t slot = (log->ledger_start + log->ledger_len) % LEDGER;
  log->ledger_seq[slot] = seq;
  log->ledger_end[slot] = end;
  log->ledger_len++;
}

/* Returns the charge freed. */
static uint64_t evict_oldest(struct outlog *log) {
  struct chunk *c = log->head;
  if (log->hint == c) log->hint = NULL;
  log->head = c->next;
  if (!log->head) log->tail = NULL;
  log->count--;
  log->retained -= c->len;
  log->evicted++;
  ledger_record(log, c->seq, c->start_offset + c->len);
  uint64_t freed = (uint64_t)c->len + CHUNK_OVERHEAD;
  chunk_unref(c);
  return freed;
}

int64_t outlog_append(struct outlog *log, struct chunk *c, uint64_t cap_bytes) {
  c->start_offset = log->produced;
  c->next = NULL;
  if (log->tail) log->tail->next = c;
  else log->head = c;
  log->tail = c;
  log->count++;
  log->produced += c->len;
  log->retained += c->len;
  int64_t charged = (int64_t)c->len + CHUNK_OVERHEAD;
  while ((outlog_charge(log) > cap_bytes || log->count > MAX_CHUNKS) && log->count > 1) charged -= (int64_t)evict_oldest(log);
  return charged;
}

uint64_t outlog_evict(struct outlog *log, uint64_t bytes) {
  uint64_t freed = 0;
  while (freed < bytes && log->count > 1) freed += evict_oldest(log);
  return freed;
}

struct chunk *outlog_after(struct outlog *log, uint64_t after_seq) {
  if (!log->tail || log->tail->seq <= after_seq) return NULL;
  struct chunk *c = log->hint && log->hint->seq <= after_seq ? log->hint : log->head;
  while (c && c->seq <= after_seq) c = c->next;
  log->hint = c;
  return c;
}

/* Output bytes produced up to and including seq `cursor`, as far as evicted chunks tell. */
static uint64_t end_offset_through(const struct outlog *log, uint64_t cursor, int *exact) {
  *exact = 1;
  if (!log->ledger_seq || log->first_evicted_seq < 0 || cursor < (uint64_t)log->first_evicted_seq) return 0;
  uint32_t low = 0, high = log->ledger_len;
  while (low < high) {
    uint32_t mid = (low + high) / 2;
    if (log->ledger_seq[(log->ledger_start + mid) % LEDGER] <= cursor) low = mid + 1;
    else high = mid;
  }
  if (low > 0) return log->ledger_end[(log->ledger_start + low - 1) % LEDGER];
  if (log->dropped_seq < 0) return 0;
  if (cursor >= (uint64_t)log->dropped_seq) return log->dropped_end;
  *exact = 0;
  return log->dropped_end;
}

int outlog_gap(const struct outlog *log, uint64_t after_seq, uint64_t exit_seq, struct gap *out) {
  const struct chunk *first = log->head;
  if (log->evicted == 0 || !first || after_seq + 1 >= first->seq) return 0;
  out->from_seq = after_seq + 1;
  out->to_seq = first->seq - 1;
  int exit_in_range = exit_seq != 0 && exit_seq >= out->from_seq && exit_seq <= out->to_seq;
  out->chunks = out->to_seq - out->from_seq + 1 - (exit_in_range ? 1 : 0);
  int exact;
  uint64_t known = end_offset_through(log, after_seq, &exact);
  out->bytes = first->start_offset - known;
  out->exact = exact;
  return 1;
}

void outlog_free(struct outlog *log) {
  for (struct chunk *c = log->head, *next; c; c = next) next = c->next, chunk_unref(c);
  free(log->ledger_seq);
  free(log->ledger_end);
  outlog_init(log);
}
