/*
 * A process's retained output, as the daemon's OutputLog kept it before
 * this host existed: chunks in seq order, the oldest evicted once their
 * charge (bytes plus CHUNK_OVERHEAD each) passes the cap or there are more
 * than MAX_CHUNKS; the newest is always kept. It remembers the end offsets
 * of the last LEDGER evicted chunks, so a late reader is told exactly which
 * seqs and how many bytes it missed (a gap).
 *
 * Chunks are reference-counted: one held by the log, one by each queued
 * send of it to the daemon, so a chunk is never copied to be sent.
 */
#ifndef EXECMUX_OUTLOG_H
#define EXECMUX_OUTLOG_H

#include <stddef.h>
#include <stdint.h>

#define CHUNK_OVERHEAD 176
#define MAX_CHUNKS 50000
#define LEDGER 4096

enum stream_id { STREAM_STDOUT = 0, STREAM_STDERR = 1, STREAM_PTY = 2 };

struct chunk {
  struct chunk *next; /* the next newer one in its log */
  uint32_t refs;
  uint32_t len;
  uint64_t seq;
  uint64_t start_offset; /* bytes of output (all streams) before this chunk */
  uint32_t at_ms;        /* milliseconds after the process started */
  uint8_t stream;
  uint8_t data[];
};

struct chunk *chunk_new(size_t len);
void chunk_ref(struct chunk *c);
void chunk_unref(struct chunk *c);

struct outlog {
  struct chunk *head, *tail;
  uint32_t count;
  uint64_t retained;  /* bytes */
  uint64_t produced;  /* bytes ever appended */
  uint64_t evicted;   /* chunks ever evicted */
  /* ring of (seq, end offset) of evicted chunks */
  uint64_t *ledger_seq, *ledger_end;
  uint32_t ledger_start, ledger_len;
  int64_t dropped_seq; /* last entry that fell out of the ring, or -1 */
  uint64_t dropped_end;
  int64_t first_evicted_seq; /* -1: nothing evicted yet */
  /* Where the last lookup ended: readers mostly ask just past it (a replay, a reader keeping up). */
  struct chunk *hint;
};

struct gap {
  uint64_t from_seq, to_seq, chunks, bytes;
  int exact;
};

void outlog_init(struct outlog *log);
/* Charged memory: bytes plus CHUNK_OVERHEAD per chunk. */
uint64_t outlog_charge(const struct outlog *log);
/* Appends (taking the caller's reference); evicts down to cap_bytes. Returns the charge added (may be negative). */
int64_t outlog_append(struct outlog *log, struct chunk *c, uint64_t cap_bytes);
/* Evicts the oldest (never the newest) until `bytes` of charge are freed or one is left; returns what was freed. */
uint64_t outlog_evict(struct outlog *log, uint64_t bytes);
/* The first chunk with seq > after_seq, or NULL. */
struct chunk *outlog_after(struct outlog *log, uint64_t after_seq);
/* What a reader at `after_seq` can no longer get; 0 when nothing. exit_seq: 0 when none. */
int outlog_gap(const struct outlog *log, uint64_t after_seq, uint64_t exit_seq, struct gap *out);
void outlog_free(struct outlog *log);

#endif
