/**
 * Every daemon setting, in one schema: its default, its type and what it
 * means. Not loaded by the daemon: scripts/build-protocol.mjs compiles it
 * into server/dist/generated/config.js (the schema as plain JSON and its
 * validator), and the types below are what config.ts reads it as.
 */
import { Type, type Static } from "@sinclair/typebox";

export const ConfigSchema = Type.Object(
  {
    config: Type.String({
      default: "",
      description: "A JSON file with any of these options (camelCase keys); the environment and flags override it.",
    }),
    listen: Type.String({
      default: "ws://127.0.0.1:7373",
      pattern: "^(wss?://|stdio(://)?$)",
      description:
        "Address to listen on, ws://IP:PORT (port 0 picks a free port), or stdio: newline-delimited JSON on stdin/stdout for the one client that started the daemon (it exits when stdin ends).",
    }),
    retainedBytes: Type.Integer({
      default: 1024 * 1024,
      minimum: 1,
      description: "Output retained per process for reads and resume, each chunk charged with its bookkeeping (about 176 bytes), and at most 50,000 chunks (upstream's caps); the oldest is evicted past either.",
    }),
    closedRetentionMs: Type.Integer({
      default: 30_000,
      minimum: 0,
      description: "How long a closed process stays readable before its id is freed.",
    }),
    processContainment: Type.Union([Type.Literal("auto"), Type.Literal("cgroup"), Type.Literal("process-tree")], {
      default: "auto",
      description:
        "How a child's whole tree is held for terminate, expiry and shutdown. cgroup: each child in a cgroup v2 of its own, killed with cgroup.kill (reaches everything it started, setsid or orphaned; needs Linux 5.14+ and the right to create cgroups below the daemon's). process-tree: its process group plus /proc's children lists (misses a process that left its group and session and lost its parent). auto: cgroup where it works.",
    }),
    spawnerPidNamespace: Type.Union([Type.Literal("auto"), Type.Literal("on"), Type.Literal("off")], {
      default: "auto",
      description:
        "Run the process host (execmux-host, which forks every child) as the init of a PID namespace of its own, with a mount namespace and its own /proc: then nothing the daemon started survives even if every execmux process is SIGKILLed at once, and children's ps, pgrep, kill and $$ agree on the namespace's pids (process/list reports the machine's; a convenience, not a security boundary). Needs root (CAP_SYS_ADMIN). auto: where the machine allows it; on: refuse to start where it does not; off: never (children then outlive a process host that is SIGKILLed, though a host that ends otherwise still ends them).",
    }),
    killGraceMs: Type.Integer({
      default: 2_000,
      minimum: 0,
      description: "After process/terminate's SIGTERM, how long until SIGKILL.",
    }),
    sessionTtlMs: Type.Integer({
      default: 60_000,
      minimum: 0,
      description:
        "How long a session without a connection lives (processes keep running) before it ends: SIGTERM to its processes, SIGKILL after --kill-grace-ms. A client may ask for another TTL in initialize (detachedTtlMs), up to --max-session-ttl-ms.",
    }),
    maxSessionTtlMs: Type.Integer({
      default: 7 * 24 * 3_600_000,
      minimum: 0,
      description: "The longest TTL a client may ask for its session (initialize detachedTtlMs); a longer one is cut to this.",
    }),
    maxLastingSessionsPerClient: Type.Integer({
      default: 16,
      minimum: 0,
      description:
        "Sessions one client may keep alive while their processes run (initialize keepWhileRunning, what `execmux exec --detach` asks): such a session does not expire while detached until its last process has exited, and is never expired to make room for another. They still count against every other limit. 0: refused.",
    }),
    maxObserversPerSession: Type.Integer({
      default: 8,
      minimum: 0,
      description: "Connections that may observe one session at once (initialize observeSessionId); more are refused with -32011.",
    }),
    observerTokenFile: Type.String({
      default: "",
      description:
        "File of tokens (one per line, # comments, re-read like --token-file) that admit a client like any token and also let it list and observe, read-only, every session on the daemon, whoever made it. Without it, a client sees only its own identity's sessions.",
    }),
    pingIntervalMs: Type.Integer({
      default: 15_000,
      minimum: 10,
      description: "How often every connection is pinged, so a half-open socket is noticed and its session freed for resume.",
    }),
    pingTimeoutMs: Type.Integer({
      default: 10_000,
      minimum: 10,
      description: "A connection that has not answered a ping within this is dropped (its session detaches).",
    }),
    socketHighWaterBytes: Type.Integer({
      default: 1024 * 1024,
      minimum: 1024,
      description: "Flow control: output waits in the daemon (per process, round-robin) while a socket buffers more than this.",
    }),
    processQueueBytes: Type.Integer({
      default: 256 * 1024,
      minimum: 1024,
      description: "Flow control: a process whose unsent output passes this is paused (it blocks on write) until the client catches up.",
    }),
    sharedAckWindowBytes: Type.Integer({
      default: 64 * 1024,
      minimum: 1024,
      description:
        "Flow control, for clients that acknowledge output: while more than one process of a socket is sending output, each may have at most this much unacknowledged (less if the client's own window is smaller), so one flooding process cannot queue far ahead of another's echo.",
    }),
    replyQueueBytes: Type.Integer({
      default: 4 * 1024 * 1024,
      minimum: 64 * 1024,
      description:
        "Flow control for replies: while a connection has more than this in replies the client has not taken, the daemon reads no further frames from it (they wait in the client's socket) until it has taken half, and process/read answers with less output (at least one chunk).",
    }),
    pollAfterInputMicros: Type.Integer({
      default: 200,
      minimum: 0,
      maximum: 10_000,
      description:
        "While input arrives less than 1 ms apart (a client exchanging messages with a process quickly), keep polling this many microseconds after each write instead of sleeping, so the answer and the next message are read without waiting for an idle CPU to wake; each exchange times its round trips with and without and polls only where that made them shorter. While it polls, the write's reply follows the process's answer, or goes when the window ends. 0: off.",
    }),
    maxMessageBytes: Type.Integer({
      default: 16 * 1024 * 1024,
      minimum: 1024,
      description: "Largest WebSocket message accepted; a larger one closes the socket with 1009.",
    }),
    token: Type.String({
      default: "",
      description:
        "Bearer token clients must present. Empty: no authentication (refused on a non-loopback address). Give it as EXECMUX_TOKEN or in --token-file: on the command line every local user can read it (ps, /proc).",
    }),
    tokenFile: Type.String({
      default: "",
      description: "File with one accepted token per line (# comments allowed). It must be readable at start-up; it is re-read on SIGHUP and when it changes, so tokens rotate without a restart (a version that cannot be read keeps the tokens already loaded).",
    }),
    // An enum rather than a union of literals: a wrong mode gets one clear message.
    wsAuth: Type.Unsafe<"" | "capability-token" | "signed-bearer-token">({
      type: "string",
      enum: ["", "capability-token", "signed-bearer-token"],
      default: "",
      description:
        "Upstream's --ws-auth, same options: also admit a capability token (--ws-token-file or --ws-token-sha256) or a JWT signed with HS256 (--ws-shared-secret-file), beside --token/--token-file; a request that any configured kind admits gets in. Empty: off.",
    }),
    wsTokenFile: Type.String({
      default: "",
      description: "With --ws-auth capability-token: the file holding the token (surrounding whitespace trimmed), read once at start-up.",
    }),
    wsTokenSha256: Type.String({
      default: "",
      description: "With --ws-auth capability-token: the token's SHA-256 in hex, instead of --ws-token-file.",
    }),
    wsSharedSecretFile: Type.String({
      default: "",
      description:
        "With --ws-auth signed-bearer-token: the file holding the HMAC secret (at least 32 bytes, surrounding whitespace trimmed), read once at start-up. Tokens need exp; nbf, iat, iss and aud are checked too.",
    }),
    wsIssuer: Type.String({ default: "", description: "With --ws-auth signed-bearer-token: the iss a token must carry. Empty: any." }),
    wsAudience: Type.String({ default: "", description: "With --ws-auth signed-bearer-token: the audience a token's aud must name. Empty: any." }),
    wsMaxClockSkewSeconds: Type.String({
      default: "",
      pattern: "^\\s*[0-9]*\\s*$",
      description: "With --ws-auth signed-bearer-token: the leeway for exp, nbf and iat, in seconds. Empty: 30, as upstream.",
    }),
    allowedOrigins: Type.String({
      default: "",
      description: "Comma-separated browser Origins allowed to connect (e.g. https://console.example.com), or * for any. A page served by the daemon itself (same scheme, host and port) is always allowed.",
    }),
    allowedHosts: Type.String({
      default: "",
      description:
        "Comma-separated names the daemon answers to in the Host header besides IP addresses, localhost, *.localhost and the --listen host (e.g. execmux.internal, *.example.com), or * for any; other names get 403, which stops DNS rebinding. Checked when no token is required, or whenever this is set.",
    }),
    basePath: Type.String({
      default: "",
      pattern: "^(/[^/?#]+)*$",
      description:
        "Serve under this path (e.g. /sandboxes/agents/box-1/8888): the WebSocket at BASE/, the console at BASE/console/, /metrics at BASE/metrics (/livez and /readyz at BASE/ and at the root, for probes). For a proxy that forwards its path prefix unchanged; one that strips it (agent-sandbox's sandbox-router) needs none. Empty: the root.",
    }),
    insecureNoAuth: Type.Boolean({
      default: false,
      description: "Allow listening on a non-loopback address without a token. Anyone who can reach the port can run commands.",
    }),
    tlsCert: Type.String({ default: "", description: "PEM certificate file: serve wss:// (with --tls-key)." }),
    tlsKey: Type.String({ default: "", description: "PEM private key file for --tls-cert." }),
    metricsNeedToken: Type.Boolean({
      default: true,
      description: "When tokens are configured, /metrics requires one too (/livez and /readyz never do).",
    }),
    maxSessions: Type.Integer({ default: 1000, minimum: 1, description: "Sessions at once (attached and detached)." }),
    maxSessionsPerClient: Type.Integer({
      default: 250,
      minimum: 1,
      description:
        "Sessions one client may hold. A client is its credential, never its address or the token's spelling: a --token/--token-file token, the capability token, a JWT's iss, sub and jti; without tokens every client is one. Past it, the client's own oldest detached session expires to make room; if all are attached or kept for their running processes, the new one is refused.",
    }),
    maxConnectionsPerClient: Type.Integer({
      default: 300,
      minimum: 1,
      description: "WebSocket connections one client (as for --max-sessions-per-client) may have open; more get HTTP 429.",
    }),
    maxNewConnectionsPerSecond: Type.Integer({
      default: 100,
      minimum: 1,
      description:
        "WebSocket connections one client (as for --max-sessions-per-client) may open per second, in bursts of up to one second's worth. A client opening them faster waits for its upgrade: slowed, not refused. A connection that comes and goes (its 101, a session made and kept, the close) costs the daemon far more than a request.",
    }),
    maxDetachedSessions: Type.Integer({
      default: 200,
      minimum: 0,
      description:
        "Sessions kept without a connection at once; past this a new disconnect expires the oldest detached session of the client that has the most. Sessions kept for their running processes are never expired for this (--max-lasting-sessions-per-client bounds them).",
    }),
    maxProcessesPerSession: Type.Integer({
      default: 256,
      minimum: 1,
      description: "Processes one session (one connection's) may run at once: starting, running, or exited with output still open. Closed ones do not count.",
    }),
    maxProcesses: Type.Integer({ default: 4096, minimum: 1, description: "Processes the whole daemon may run at once (as --max-processes-per-session counts them)." }),
    maxClosedProcessesPerSession: Type.Integer({
      default: 256,
      minimum: 0,
      description: "Closed processes a session keeps readable (each for --closed-retention-ms); past this the oldest is forgotten first, and reading it answers \"unknown process id\".",
    }),
    maxStdinBufferBytes: Type.Integer({
      default: 1024 * 1024,
      minimum: 1,
      description: "Input the daemon holds for one process that the process has not read yet (pipe or PTY). A process/write that does not fit is answered only once it does, like a blocking pipe write (one may wait per process); another meanwhile, or one larger than this, is refused whole with -32011 (limit maxStdinBufferBytes).",
    }),
    maxRetainedBytesTotal: Type.Integer({
      default: 0,
      minimum: 0,
      description:
        "Retained output of the whole daemon, each chunk charged with its bookkeeping (about 176 bytes). Past it, closed processes are forgotten oldest first, then the oldest output of the session retaining most is evicted (readers get a gap). 0: a quarter of the memory the daemon may use (its cgroup's memory.max, else the machine's), at least 16 MiB, at most 1 GiB.",
    }),
    maxArgvEnvBytes: Type.Integer({ default: 1024 * 1024, minimum: 1024, description: "Total bytes of argv plus environment of one process/start." }),
    maxRequestsPerSecond: Type.Integer({
      default: 20000,
      minimum: 1,
      description:
        "Frames per second per connection, bursts up to twice this. Every frame counts (requests, notifications, malformed ones); a client sending faster is not read until it is within the rate again: slowed, not refused.",
    }),
    maxLongPolls: Type.Integer({ default: 64, minimum: 1, description: "Concurrent waiting process/read calls per connection." }),
    maxHttpRequests: Type.Integer({
      default: 32,
      minimum: 1,
      description: "Concurrent http/request calls per connection; a streamed one counts until its terminal bodyDelta. Past it: -32011.",
    }),
    maxHttpBodyBytes: Type.Integer({
      default: 16 * 1024 * 1024,
      minimum: 1024,
      description: "Largest response body a buffered http/request holds in memory; a larger one fails with -32603. Streamed bodies are not capped: they are paced by the client's reading.",
    }),
    maxHttpBodyBytesTotal: Type.Integer({
      default: 0,
      minimum: 0,
      description:
        "Bytes of buffered http/request response bodies the whole daemon holds at once (each body byte costs about four in memory until its reply is sent: the body, its base64, the reply, the frame). A request waits for room before it reads its body. 0: a sixteenth of the memory the daemon may use (its cgroup's memory.max, else the machine's), at least 32 MiB, at most 512 MiB.",
    }),
    maxHttpBodyBytesPerClient: Type.Integer({
      default: 0,
      minimum: 0,
      description:
        "Bytes of buffered http/request response bodies one client (see --max-sessions-per-client) holds at once; its further requests wait for its own earlier ones, never for another client's. 0: half of --max-http-body-bytes-total, at least --max-http-body-bytes.",
    }),
    maxDescriptors: Type.Integer({
      default: 0,
      minimum: 0,
      description:
        "File descriptors the daemon lets clients hold open at once, all together: connections, fs/open handles, http/request calls in flight; past it -32011 (limit maxDescriptors), and a connection is closed with 1013. 0: the process's open-file limit less an eighth of it (at least 256 kept back for what the daemon needs itself: accepting, logging, /readyz, files read in passing).",
    }),
    maxDescriptorsPerClient: Type.Integer({
      default: 0,
      minimum: 0,
      description: "File descriptors one client (see --max-sessions-per-client) may hold open at once, counted as for --max-descriptors; past it -32011 (limit maxDescriptorsPerClient). 0: a quarter of --max-descriptors.",
    }),
    maxPidsPerSession: Type.Integer({
      default: 4096,
      minimum: 0,
      description:
        "Processes and threads one session's processes and everything they start may have at once (cgroup v2 pids.max on the session's cgroup, so a fork bomb fails with EAGAIN inside its own session). Enforced where processes are held in cgroups (--process-containment cgroup, which auto picks where it works); without cgroups there is no per-session bound (see docs/security.md). 0: no limit.",
    }),
    handshakeTimeoutMs: Type.Integer({ default: 10_000, minimum: 100, description: "A connection that has not sent initialize by then is closed." }),
    idleTimeoutMs: Type.Integer({ default: 1_800_000, minimum: 0, description: "A connection that sent nothing for this long is closed (its session detaches and can be resumed). 0: never." }),
    processHost: Type.Union([Type.Literal("separate"), Type.Literal("in-process")], {
      default: "separate",
      description:
        "Where `execmux serve` keeps sessions and processes. separate: in a process host (execmux-host) that faces no network and outlives the daemon, so a crash, SIGKILL or restart of the daemon loses no process and no output (restart it with the same command; clients reconnect and resume). in-process: in a private process host that ends with the daemon (its death ends them). stdio always runs in-process.",
    }),
    stateDirectory: Type.String({
      default: "",
      description: "Private directory for the process hosts' sockets: this user's, mode 0700, under directories no other user can write (one that is not stops the daemon). Default: the first private one of $XDG_RUNTIME_DIR/execmux, /run/execmux (root), the system temp directory's execmux-UID, else a new unpredictable one there (a later daemon will not find its host: set this to keep one).",
    }),
    logPretty: Type.Boolean({ default: false, description: "Human-readable colored logs instead of JSON lines (still on stderr)." }),
    logLevel: Type.Union(
      ["fatal", "error", "warn", "info", "debug", "trace", "silent"].map((level) => Type.Literal(level)),
      { default: "info", description: "Log level (logs are JSON lines on stderr)." },
    ),
  },
  { additionalProperties: false },
);

export type Config = Static<typeof ConfigSchema>;
export type ConfigKey = keyof Config;
