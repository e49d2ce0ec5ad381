/**
 * The daemon's handle on the native process host (server/native): every
 * process the daemon starts lives there, with its pipes or terminal and its
 * retained output, so the daemon may crash or be upgraded without a process
 * or a byte of output lost.
 *
 * A persistent host (`execmux serve` on a fixed port) lives on its own and
 * is found again by its socket in the state directory; a private one (port
 * 0, stdio, `--process-host in-process`, tests) is the daemon's child over a
 * socketpair and ends with it.
 */
import type { Socket } from "node:net";
import { constants } from "node:os";
import type { OutputGap, OutputStream } from "@execmux/shared";
import { HostLink } from "./host-link.js";
import { LINK_VERSION, Msg, Reader, StartFlag, Writer } from "./link-codec.js";
import { launchHost, type LaunchedHost, type LaunchOptions } from "./host-launch.js";
import { FreshSingleFlight } from "./fresh-single-flight.js";
import { FairSlots } from "./fair-slots.js";

export { HostGone, HostRefusal } from "./host-link.js";

export interface ProcessHostOptions extends LaunchOptions {
  readonly retainedBytes: number;
  readonly retentionBudget: number;
  readonly killGraceMs: number;
  readonly log: (level: "debug" | "info" | "warn" | "error", message: string) => void;
}

export interface HostInfo {
  readonly pid: number;
  readonly containment: "cgroup" | "process-tree";
  readonly pidNamespace: boolean;
  readonly pidsLimit: boolean;
  readonly cgroupRoot: string;
  /** This daemon started the host (else it found one running). */
  readonly started: boolean;
}

export interface ProcessState {
  readonly nextSeq: number;
  readonly exited: boolean;
  readonly exitCode: number;
  readonly signal: NodeJS.Signals | null;
  readonly exitSeq: number;
  readonly closed: boolean;
  readonly closedSeq: number;
  readonly sandboxDenied: boolean;
  /** 0 when nothing is retained. */
  readonly firstRetainedSeq: number;
  readonly retainedBytes: number;
  readonly startEpochMs: number;
  readonly reaped: boolean;
  readonly pid: number;
}

export interface RetainedOutput {
  readonly seq: number;
  readonly stream: OutputStream;
  /** Milliseconds after the process started. */
  readonly atMs: number;
  readonly data: Buffer;
}

export interface ReadResult {
  readonly state: ProcessState;
  readonly gap: OutputGap | undefined;
  readonly chunks: RetainedOutput[];
}

export interface RestoredSession {
  readonly id: string;
  readonly ttlMs: number;
  readonly blob: Buffer;
}

export interface RestoredProcess {
  readonly handle: number;
  readonly sessionId: string;
  readonly processId: string;
  readonly tty: boolean;
  readonly sandboxed: boolean;
  readonly meta: Buffer;
  readonly state: ProcessState;
}

/** What the host tells of one process as it happens. */
export interface ProcessEvents {
  /** `frame`: the client's binary output frame, as it goes out (shared/src/binary-frame.ts). */
  output(seq: number, stream: OutputStream, data: Buffer, frame: Buffer): void;
  exited(seq: number, exitCode: number, signal: NodeJS.Signals | null, sandboxDenied: boolean): void;
  closed(seq: number): void;
  /** The retention budget forgot this closed process. */
  forgotten(): void;
}

export interface StartRequest {
  readonly sessionId: string;
  readonly processId: string;
  readonly file: string;
  readonly argv: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  readonly cwd: string;
  readonly tty: boolean;
  readonly pipeStdin: boolean;
  readonly cols: number;
  readonly rows: number;
  readonly sandboxed: boolean;
  /** Sandboxed with the network on: it shares the machine's network, so the daemon checks who connects. */
  readonly networkSandbox: boolean;
  readonly meta: Buffer;
}

/** A start the host could not make: the OS error (errno name), and what failed. */
export class SpawnFailure extends Error {
  constructor(
    message: string,
    readonly errno: string,
    readonly stage: "cwd" | "program" | "terminal" | "pipes" | "cgroup",
  ) {
    super(message);
    this.name = "SpawnFailure";
  }
}

export type WriteResult = "accepted" | "stdinClosed" | "stdinFull" | "unknownProcess";
const WRITE_RESULTS: readonly WriteResult[] = ["accepted", "stdinClosed", "stdinFull", "unknownProcess"];
const STREAMS: readonly OutputStream[] = ["stdout", "stderr", "pty"];
const STAGES = ["cwd", "cwd", "program", "terminal", "pipes", "cgroup"] as const;
const LOG_LEVELS: Record<number, "debug" | "info" | "warn" | "error"> = { 20: "debug", 30: "info", 40: "warn", 50: "error" };

const signalName = (number: number): NodeJS.Signals | null =>
  number === 0 ? null : ((Object.entries(constants.signals).find(([, value]) => value === number)?.[0] as NodeJS.Signals | undefined) ?? null);
const errnoName = (number: number): string =>
  Object.entries(constants.errno).find(([, value]) => value === number)?.[0] ?? `E${number}`;

function readState(reader: Reader): ProcessState {
  const nextSeq = reader.u64();
  const exited = reader.u8() === 1;
  const exitCode = reader.i32();
  const signal = signalName(reader.u8());
  const exitSeq = reader.u64();
  const closed = reader.u8() === 1;
  const closedSeq = reader.u64();
  const sandboxDenied = reader.u8() === 1;
  const firstRetainedSeq = reader.u64();
  const retainedBytes = reader.u64();
  reader.u64(); // its charge against the budget
  const startEpochMs = reader.u64();
  const reaped = reader.u8() === 1;
  const pid = reader.i32();
  return { nextSeq, exited, exitCode, signal, exitSeq, closed, closedSeq, sandboxDenied, firstRetainedSeq, retainedBytes, startEpochMs, reaped, pid };
}

export class ProcessHost {
  private readonly processes = new Map<number, ProcessEvents>();
  /** Two keep the host busy (one being spawned, the next on its way); more only queue at the host. */
  private readonly startSlots = new FairSlots(2);
  private restoredSessions: RestoredSession[] = [];
  private restoredProcesses: RestoredProcess[] = [];
  private restoreDone: (() => void) | undefined;
  private lostHandlers: ((error: Error) => void)[] = [];
  private peerChecks = false;
  private lastPing: { at: number; ok: boolean } | undefined;
  private pinging: Promise<boolean> | undefined;
  info!: HostInfo;

  private constructor(
    private readonly options: ProcessHostOptions,
    private link: HostLink,
  ) {}

  /** Says hello to a host that launchHost found or started; what it kept is in `restored`. */
  static async open(options: ProcessHostOptions, launched: Promise<LaunchedHost> = launchHost(options)): Promise<ProcessHost> {
    const { socket, started } = await launched;
    return ProcessHost.greet(options, socket, started);
  }

  private static async greet(options: ProcessHostOptions, socket: Socket, started: boolean): Promise<ProcessHost> {
    let host: ProcessHost | undefined;
    const early: [number, Buffer][] = [];
    let lost: Error | undefined;
    const link = new HostLink(
      socket,
      (type, payload) => (host ? host.onEvent(type, payload) : early.push([type, payload])),
      (error) => (host ? host.onLost(error) : (lost = error)),
    );
    host = new ProcessHost(options, link);
    for (const [type, payload] of early) host.onEvent(type, payload);
    if (lost) throw lost;
    const restored = new Promise<void>((resolve) => (host!.restoreDone = resolve));
    const { reader } = await link.request(Msg.Hello, (writer) =>
      writer
        .u32(LINK_VERSION)
        .u32(process.pid)
        .u64(options.retainedBytes)
        .u64(options.retentionBudget)
        .u32(options.killGraceMs)
        .u32(EXIT_WAITS_FOR_OUTPUT_MS)
        .u32(options.socketPath === undefined ? 1 : 0),
    );
    reader.u32(); // the host's link version (equal to ours, or it refused)
    const pid = reader.i32();
    const containment = reader.u8() === 1 ? "cgroup" : "process-tree";
    const pidNamespace = reader.u8() === 1;
    const pidsLimit = reader.u8() === 1;
    host.peerChecks = reader.u8() === 1;
    host.info = { pid, containment, pidNamespace, pidsLimit, cgroupRoot: reader.str(), started };
    await restored;
    return host;
  }

  /** What the host kept from before this daemon (empty for a host just started): taken once. */
  takeRestored(): { sessions: RestoredSession[]; processes: RestoredProcess[] } {
    const restored = { sessions: this.restoredSessions, processes: this.restoredProcesses };
    this.restoredSessions = [];
    this.restoredProcesses = [];
    return restored;
  }

  /** Called once if the link to the host drops (the host died): every process went with it. */
  onceLost(handler: (error: Error) => void): void {
    this.lostHandlers.push(handler);
  }

  get alive(): boolean {
    return this.link.open;
  }

  /** Whether connections must be checked against sandboxes (one with the network on was started). */
  get needsPeerChecks(): boolean {
    return this.peerChecks;
  }

  bind(handle: number, events: ProcessEvents): void {
    this.processes.set(handle, events);
  }

  /**
   * Starts a process; `events` hears of it from the first event on (which may come before this resolves).
   * Sessions take turns for the host's start slots (fair-slots.ts), so one session's burst of starts never
   * stands between another session's input and its process.
   */
  start(request: StartRequest, events: ProcessEvents): Promise<{ handle: number; pid: number; startEpochMs: number }> {
    return this.startSlots.run(request.sessionId, () => this.startNow(request, events));
  }

  private async startNow(request: StartRequest, events: ProcessEvents): Promise<{ handle: number; pid: number; startEpochMs: number }> {
    const flags =
      (request.tty ? StartFlag.Tty : 0) |
      (request.pipeStdin ? StartFlag.PipeStdin : 0) |
      (request.sandboxed ? StartFlag.Sandboxed : 0) |
      (request.networkSandbox ? StartFlag.NetworkSandbox : 0);
    let outcome: { handle: number; pid: number; startEpochMs: number } | SpawnFailure | undefined;
    await this.link.request(
      Msg.Start,
      (writer) =>
        writer
          .u32(flags)
          .u16(request.cols)
          .u16(request.rows)
          .str(request.sessionId)
          .str(request.processId)
          .str(request.file)
          .strs(request.argv)
          .strs(Object.entries(request.env).map(([name, value]) => `${name}=${value}`))
          .str(request.cwd)
          .bytes(request.meta),
      // Its events may follow in the same read, before this function resumes: they must find it.
      (type, reader) => {
        if (type === Msg.StartFailed) {
          const errno = errnoName(reader.i32());
          const stage = STAGES[reader.u8()] ?? "program";
          outcome = new SpawnFailure(reader.str(), errno, stage);
          return;
        }
        const handle = reader.u32();
        this.processes.set(handle, events);
        outcome = { handle, pid: reader.i32(), startEpochMs: reader.u64() };
        if (reader.u8() === 1) this.peerChecks = true;
      },
    );
    if (outcome instanceof SpawnFailure || outcome === undefined) throw outcome ?? new Error("the process host gave no answer to a start");
    return outcome;
  }

  async write(handle: number, bound: number, data: Buffer): Promise<WriteResult> {
    const { reader } = await this.link.request(Msg.Write, (writer) => writer.u32(handle).u32(bound).bytes(data));
    return WRITE_RESULTS[reader.u8()] ?? "unknownProcess";
  }

  async closeStdin(handle: number): Promise<WriteResult> {
    const { reader } = await this.link.request(Msg.CloseStdin, (writer) => writer.u32(handle));
    return WRITE_RESULTS[reader.u8()] ?? "unknownProcess";
  }

  signal(handle: number, signal: NodeJS.Signals): void {
    this.link.send(new Writer(Msg.Signal).u32(handle).u8(constants.signals[signal]));
  }

  /** SIGTERM to the whole tree, SIGKILL after the kill grace; false when it had already exited. */
  async terminate(handle: number): Promise<boolean> {
    const { reader } = await this.link.request(Msg.Terminate, (writer) => writer.u32(handle));
    return reader.u8() === 1;
  }

  resize(handle: number, cols: number, rows: number): void {
    this.link.send(new Writer(Msg.Resize).u32(handle).u16(cols).u16(rows));
  }

  pause(handle: number, paused: boolean): void {
    this.link.send(new Writer(Msg.Pause).u32(handle).u8(paused ? 1 : 0));
  }

  limitChunks(handle: number, bytes: number): void {
    this.link.send(new Writer(Msg.Limit).u32(handle).u32(Math.min(bytes, 0xffffffff)));
  }

  /** Retained chunks with seq > afterSeq (the first always, then up to maxBytes), the gap before them, and the state. */
  async read(handle: number, afterSeq: number, maxBytes: number): Promise<ReadResult> {
    const { reader } = await this.link.request(Msg.Read, (writer) => writer.u32(handle).u64(afterSeq).u64(Number.isFinite(maxBytes) ? maxBytes : -1));
    const state = readState(reader);
    const gap = reader.u8() === 1 ? { fromSeq: reader.u64(), toSeq: reader.u64(), chunks: reader.u64(), bytes: reader.u64(), bytesExact: reader.u8() === 1 } : undefined;
    const chunks: RetainedOutput[] = [];
    for (let count = reader.u32(); count > 0; count--) {
      const seq = reader.u64();
      const stream = STREAMS[reader.u8()] ?? "stdout";
      const atMs = reader.u32();
      chunks.push({ seq, stream, atMs, data: Buffer.from(reader.bytes()) });
    }
    return { state, gap, chunks };
  }

  /** Each process's state in the host (its seqs, what is retained); one request per session at a time however many ask. */
  list(sessionId: string): Promise<Map<number, ProcessState>> {
    return this.listings.run(sessionId);
  }

  private readonly listings = new FreshSingleFlight<string, Map<number, ProcessState>>((sessionId) => this.requestList(sessionId));

  private async requestList(sessionId: string): Promise<Map<number, ProcessState>> {
    const { reader } = await this.link.request(Msg.List, (writer) => writer.str(sessionId));
    const states = new Map<number, ProcessState>();
    for (let count = reader.u32(); count > 0; count--) {
      const handle = reader.u32();
      states.set(handle, readState(reader));
    }
    return states;
  }

  forget(handle: number): void {
    this.processes.delete(handle);
    this.link.send(new Writer(Msg.Forget).u32(handle));
  }

  /** SIGKILL to every tree of a session, what its closed processes left behind included. */
  killSession(sessionId: string): void {
    this.link.send(new Writer(Msg.KillSession).str(sessionId));
  }

  /** The daemon's record of a session, given back after a restart; how long it may live with no daemon (-1: until its processes end). */
  putSession(sessionId: string, ttlMs: number, attached: boolean, keepWhileRunning: boolean, blob: Buffer): void {
    this.link.send(new Writer(Msg.Session).str(sessionId).u64(ttlMs).u8(attached ? 1 : 0).u8(keepWhileRunning ? 1 : 0).bytes(blob));
  }

  /** The session is over: its processes are killed and forgotten. */
  dropSession(sessionId: string, handles: Iterable<number>): void {
    for (const handle of handles) this.processes.delete(handle);
    this.link.send(new Writer(Msg.DropSession).str(sessionId));
  }

  /** True when a connection's other end is a sandboxed process (or cannot be told apart from one). */
  async isSandboxedPeer(local: { address: string; port: number }, remote: { address: string; port: number }): Promise<boolean> {
    if (!this.peerChecks) return false;
    const family = local.address.includes(":") && !local.address.startsWith("::ffff:") ? 6 : 4;
    const pack = (address: string) => {
      const bytes = Buffer.alloc(16);
      const plain = address.replace(/^::ffff:/, "");
      if (family === 4) plain.split(".").forEach((part, index) => (bytes[index] = Number(part)));
      else bytes.set(ipv6Bytes(plain));
      return bytes;
    };
    const { reader } = await this.link.request(Msg.Peer, (writer) =>
      writer.u8(family).raw(pack(local.address)).u16(local.port).raw(pack(remote.address)).u16(remote.port),
    );
    return reader.u8() === 1;
  }

  /** Readiness: the host answers and, at most every few seconds, a test child runs. */
  ready(): Promise<boolean> {
    if (!this.link.open) return Promise.resolve(false);
    if (this.lastPing && Date.now() - this.lastPing.at < READY_FRESH_MS) return Promise.resolve(this.lastPing.ok);
    return (this.pinging ??= this.link
      .request(Msg.Ping, (writer) => writer.u8(1))
      .then(
        ({ reader }) => reader.u8() === 1,
        () => false,
      )
      .then((ok) => {
        this.lastPing = { at: Date.now(), ok };
        this.pinging = undefined;
        return ok;
      }));
  }

  /** SIGTERM to every tree, SIGKILL after `graceMs`: resolves once they are gone. The host ends when the daemon then closes the link. */
  async shutdown(graceMs: number): Promise<void> {
    await this.link.request(Msg.Shutdown, (writer) => writer.u32(graceMs)).catch(() => undefined);
    this.link.close();
  }

  /** The daemon leaves on purpose (an upgrade): the host keeps everything for the next one. */
  leave(): void {
    this.link.send(new Writer(Msg.Leave));
    this.link.close();
  }

  private onLost(error: Error): void {
    const handlers = this.lostHandlers;
    this.lostHandlers = [];
    for (const handler of handlers) handler(error);
  }

  private onEvent(type: number, payload: Buffer): void {
    if (type === Msg.Output) {
      // u32 handle, then the client's binary frame: kind, stream, id length, seq (two u32, big-endian), id, data.
      const events = this.processes.get(payload.readUInt32LE(0));
      if (!events) return;
      const frame = payload.subarray(4);
      const idLength = frame.readUInt16BE(2);
      const seq = frame.readUInt32BE(4) * 2 ** 32 + frame.readUInt32BE(8);
      events.output(seq, STREAMS[frame[1]!] ?? "stdout", frame.subarray(12 + idLength), frame);
      return;
    }
    const reader = new Reader(payload);
    switch (type) {
      case Msg.Exited: {
        const events = this.processes.get(reader.u32());
        const seq = reader.u64();
        const code = reader.i32();
        const signal = signalName(reader.u8());
        events?.exited(seq, code, signal, reader.u8() === 1);
        return;
      }
      case Msg.Closed: {
        const events = this.processes.get(reader.u32());
        events?.closed(reader.u64());
        return;
      }
      case Msg.Forgotten: {
        const handle = reader.u32();
        const events = this.processes.get(handle);
        this.processes.delete(handle);
        events?.forgotten();
        return;
      }
      case Msg.Log: {
        const level = LOG_LEVELS[reader.u8()] ?? "info";
        this.options.log(level, reader.str());
        return;
      }
      case Msg.RestoreSession:
        this.restoredSessions.push({ id: reader.str(), ttlMs: reader.i64(), blob: Buffer.from(reader.bytes()) });
        return;
      case Msg.RestoreProcess: {
        const handle = reader.u32();
        const sessionId = reader.str();
        const processId = reader.str();
        const flags = reader.u8();
        reader.i32();
        const meta = Buffer.from(reader.bytes());
        const state = readState(reader);
        this.restoredProcesses.push({ handle, sessionId, processId, tty: (flags & StartFlag.Tty) !== 0, sandboxed: (flags & StartFlag.Sandboxed) !== 0, meta, state });
        return;
      }
      case Msg.RestoreEnd:
        this.restoreDone?.();
        this.restoreDone = undefined;
        return;
    }
  }
}

/**
 * How long a reaped child's exit waits for its output streams to end when a
 * descendant still holds them open. Not a speed setting: it only orders a
 * short child's last output before its exit, as upstream numbers them.
 */
const EXIT_WAITS_FOR_OUTPUT_MS = 50;
/** How long a readiness answer is trusted before /readyz spawns a test child again. */
const READY_FRESH_MS = 5_000;

function ipv6Bytes(address: string): Uint8Array {
  const bytes = new Uint8Array(16);
  const [head, tail] = address.includes("::") ? address.split("::") : [address, undefined];
  const groups = (part: string | undefined) => (part ? part.split(":").filter(Boolean) : []);
  const left = groups(head);
  const right = groups(tail);
  const all = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  all.forEach((group, index) => {
    const value = Number.parseInt(group, 16);
    bytes[index * 2] = value >> 8;
    bytes[index * 2 + 1] = value & 0xff;
  });
  return bytes;
}
