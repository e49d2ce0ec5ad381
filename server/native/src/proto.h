/*
 * Message types of the link (see wire.h for the framing). The daemon's side
 * is server/src/host/host-link.ts; PROTOCOL_VERSION changes with any change
 * here, and a daemon and a host that disagree refuse each other at HELLO.
 */
#ifndef EXECMUX_PROTO_H
#define EXECMUX_PROTO_H

#define PROTOCOL_VERSION 2

/* daemon -> host (those with an id are answered with that id) */
enum {
  MSG_HELLO = 1,        /* id, u32 version, u32 daemon pid, u64 retained bytes, u64 retention budget, u32 kill grace ms, u32 exit wait ms, u32 end with daemon */
  MSG_START = 2,        /* id, u32 flags, u16 cols, u16 rows, str session, str process id, str file, strs argv, strs env, str cwd, bytes meta */
  MSG_WRITE = 3,        /* id, u32 handle, u32 bound, bytes data */
  MSG_CLOSE_STDIN = 4,  /* id, u32 handle */
  MSG_SIGNAL = 5,       /* u32 handle, u8 signal */
  MSG_TERMINATE = 6,    /* id, u32 handle */
  MSG_RESIZE = 7,       /* u32 handle, u16 cols, u16 rows */
  MSG_PAUSE = 8,        /* u32 handle, u8 paused */
  MSG_LIMIT = 9,        /* u32 handle, u32 bytes */
  MSG_READ = 10,        /* id, u32 handle, u64 after seq, u64 max bytes */
  MSG_FORGET = 11,      /* u32 handle */
  MSG_KILL_SESSION = 12,/* str session */
  MSG_SESSION = 13,     /* str session, i64 ttl ms when detached (-1: never), u8 attached, u8 keep while running, bytes blob */
  MSG_DROP_SESSION = 14,/* str session: forgotten (its processes are killed and forgotten) */
  MSG_SHUTDOWN = 15,    /* id, u32 grace ms */
  MSG_PEER = 16,        /* id, u8 family (4/6), 16 bytes local address, u16 local port, 16 bytes remote address, u16 remote port */
  MSG_PING = 17,        /* id, u8 spawn a test child */
  MSG_LIST = 18,        /* id, str session */
  MSG_LEAVE = 19,       /* the daemon leaves on purpose (upgrade): keep everything for the next one */
};

/* host -> daemon */
enum {
  MSG_OUTPUT = 101,     /* u32 handle, then the client's binary frame: u8 1, u8 stream, u16be id length, u32be seq hi, u32be seq lo, id, data */
  MSG_EXITED = 102,     /* u32 handle, u64 seq, i32 exit code, u8 signal, u8 sandbox denied */
  MSG_CLOSED = 103,     /* u32 handle, u64 seq */
  MSG_FORGOTTEN = 104,  /* u32 handle: the retention budget forgot a closed process */
  MSG_LOG = 105,        /* u8 level, str text */
  MSG_RESTORE_SESSION = 106, /* str session, i64 ttl ms, bytes blob */
  MSG_RESTORE_PROCESS = 107, /* u32 handle, str session, str process id, u8 flags, i32 pid, bytes meta, state */
  MSG_RESTORE_END = 108,
  MSG_SESSION_EXPIRED = 109, /* str session: expired while no daemon was attached (sent on restore: never) */
  MSG_HELLO_OK = 120,   /* id, u32 version, i32 host pid, u8 containment, u8 pid namespace, u8 pids limit, u8 peer checks needed, str root */
  MSG_STARTED = 121,    /* id, u32 handle, i32 pid, u64 start epoch ms, u8 peer checks needed */
  MSG_START_FAILED = 122, /* id, i32 errno, u8 stage (1 cwd, 2 program, 3 terminal, 4 pipes, 5 cgroup), str message */
  MSG_WRITTEN = 123,    /* id, u8 status (0 accepted, 1 stdin closed, 2 full, 3 unknown process) */
  MSG_ANSWER = 124,     /* id, u8 value (terminate: still running; peer: refuse; ping: ok; shutdown: done) */
  MSG_READ_RESULT = 125,/* id, state, u8 gap?, [u64 from, u64 to, u64 chunks, u64 bytes, u8 exact], u32 count, count x (u64 seq, u8 stream, u32 at ms, bytes data) */
  MSG_LIST_RESULT = 126,/* id, u32 count, count x (u32 handle, state) */
  MSG_REFUSED = 127,    /* id, str why: the request could not be taken (HELLO: another daemon is attached) */
};

/* START flags */
#define START_TTY 1u
#define START_PIPE_STDIN 2u
#define START_SANDBOXED 4u
#define START_NETWORK_SANDBOX 8u

/*
 * A process's state block (READ_RESULT, LIST_RESULT, RESTORE_PROCESS):
 * u64 next seq, u8 exited, i32 exit code, u8 signal, u64 exit seq, u8 closed,
 * u64 closed seq, u8 sandbox denied, u64 first retained seq (0: none),
 * u64 retained bytes, u64 charge, u64 start epoch ms, u8 reaped, i32 pid
 */

#endif
