/**
 * The host's side of a launcher (launcher.ts): forks the front the launcher
 * asked for, with an IPC channel over which the front hands over its
 * clients' sockets, and passes the front's stdout, its log lines and its end
 * back to the launcher. Signals the launcher passes on reach the front.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { Socket } from "node:net";
import { FRONT_ENV, PASSED_ON_SIGNALS, type FrontCommand, type FrontExit, type FrontReady, type HandedClient } from "./host-protocol.js";

/** A front's log line longer than this is cut (the rest goes on the next line): the host holds no more of one. */
const MAX_LINE_BYTES = 64 * 1024;
/** What a launcher may ask to send the front. */
const SIGNALS = new Set<string>(PASSED_ON_SIGNALS);

export interface FrontOutput {
  stdout(bytes: Buffer): void;
  /** One whole line (newline included) of the front's stderr. */
  stderrLine(line: Buffer): void;
  /** A client's socket the front handed over, with what the front had read of it. */
  client(socket: Socket, handed: HandedClient): void;
  /** A socket that came with a message this host cannot use: closed, and the front told by its number. */
  refused(linkId: number): void;
  exit(how: FrontExit): void;
}

export interface FrontProcess {
  readonly pid: number | undefined;
  readonly exited: Promise<void>;
  /**
   * Passes a signal the launcher passed on (or the host's own stop). Held
   * until the front says it is ready (it listens, its handlers are in): before
   * that, a signal's default action would kill it instead of stopping it.
   */
  signal(name: string): void;
  kill(): void;
}

export function forkFront(command: FrontCommand, hostSocket: string, output: FrontOutput): FrontProcess {
  let child: ChildProcess;
  try {
    child = spawn(command.execPath, [...command.execArgv, command.script, "serve", ...command.argv], {
      cwd: command.cwd,
      env: { ...command.env, [FRONT_ENV]: hostSocket },
      stdio: ["ignore", "pipe", "pipe", "ipc"],
    });
  } catch (error) {
    // A launcher's directory or program that is gone: told like any front's failure to start, once the caller holds the result.
    process.nextTick(() => {
      output.stderrLine(Buffer.from(`execmux host: cannot start the daemon: ${(error as Error).message}\n`));
      output.exit({ code: 1, signal: null });
    });
    return { pid: undefined, exited: Promise.resolve(), signal: () => undefined, kill: () => undefined };
  }
  let ready = false;
  const waiting: string[] = [];
  const exited = new Promise<void>((resolve) => {
    let done = false;
    const end = (how: FrontExit) => {
      if (done) return;
      done = true;
      output.exit(how);
      resolve();
    };
    child.once("error", (error) => {
      output.stderrLine(Buffer.from(`execmux host: cannot start the daemon: ${error.message}\n`));
      if (child.pid === undefined) end({ code: 1, signal: null }); // it never ran
    });
    // "close": after the last of its stdout and stderr.
    child.once("close", (code, signal) => end({ code, signal }));
  });
  // Missing when the spawn failed before the child ran (EMFILE, say): "error" then reports it.
  child.stdout?.on("data", (bytes: Buffer) => output.stdout(bytes));
  if (child.stderr) splitLines(child.stderr, (line) => output.stderrLine(line));
  child.on("message", (message: unknown, handle: unknown) => {
    const sent = message as Partial<HandedClient> | Partial<FrontReady> | null;
    if (sent?.kind === "ready") {
      ready = true;
      for (const name of waiting.splice(0)) child.kill(name as NodeJS.Signals);
      return;
    }
    if (!(handle instanceof Socket)) return;
    const handed = sent as Partial<HandedClient>;
    if (handed.kind === "client" && typeof handed.head === "string" && Number.isInteger(handed.linkId)) return output.client(handle, handed as HandedClient);
    handle.destroy();
    if (Number.isInteger(handed.linkId)) output.refused(handed.linkId!);
  });
  return {
    pid: child.pid,
    exited,
    signal: (name) => {
      if (!SIGNALS.has(name)) return;
      if (ready) child.kill(name as NodeJS.Signals);
      else waiting.push(name);
    },
    kill: () => child.kill("SIGKILL"),
  };
}

/** Calls `onLine` with each whole line of `stream`, and with what is left at its end; a line never grows past MAX_LINE_BYTES. */
function splitLines(stream: NodeJS.ReadableStream, onLine: (line: Buffer) => void): void {
  let partial: Buffer[] = [];
  let partialBytes = 0;
  stream.on("data", (chunk: Buffer) => {
    let start = 0;
    for (let newline = chunk.indexOf(10); newline !== -1; newline = chunk.indexOf(10, start)) {
      onLine(Buffer.concat([...partial, chunk.subarray(start, newline + 1)]));
      partial = [];
      partialBytes = 0;
      start = newline + 1;
    }
    const rest = chunk.subarray(start);
    if (rest.length === 0) return;
    partial.push(rest);
    partialBytes += rest.length;
    if (partialBytes >= MAX_LINE_BYTES) {
      onLine(Buffer.concat([...partial, Buffer.from("\n")]));
      partial = [];
      partialBytes = 0;
    }
  });
  stream.on("end", () => {
    if (partialBytes > 0) onLine(Buffer.concat([...partial, Buffer.from("\n")]));
  });
}
