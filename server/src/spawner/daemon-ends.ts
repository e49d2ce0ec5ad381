/**
 * The daemon's ends of a child's pipes, opened by FIFO name (see
 * fifo-pipe.ts). Non-blocking, so the event loop never waits on a child;
 * the child's own ends are separate open files and stay blocking.
 */
import { closeSync, constants, openSync } from "node:fs";
import { Socket } from "node:net";
import { PipeReadEnd } from "../process/output-buffers.js";
import type { ChildPipes } from "./protocol.js";

export interface DaemonEnds {
  /** Undefined when the child has no stdin pipe, or had already closed it. */
  readonly stdin: Socket | undefined;
  readonly stdout: PipeReadEnd;
  readonly stderr: PipeReadEnd;
}

/** Non-blocking opens, which never wait here: the child's end of every FIFO is open already. */
export function openDaemonEnds(pipes: ChildPipes): DaemonEnds {
  const opened: number[] = [];
  const open = (path: string, flags: number) => {
    const fd = openSync(path, flags | constants.O_NONBLOCK);
    opened.push(fd);
    return fd;
  };
  const openReadEnd = (path: string) => {
    const fd = open(path, constants.O_RDONLY);
    // Linux reports a FIFO's hang-up (no writers left) only to readers that
    // opened before some writer did; the child's end was opened before ours,
    // so without this our end would never hear that the child closed it.
    closeSync(openSync(path, constants.O_WRONLY | constants.O_NONBLOCK));
    return fd;
  };
  try {
    const stdout = openReadEnd(pipes.stdout);
    const stderr = openReadEnd(pipes.stderr);
    const stdin = pipes.stdin === undefined ? undefined : openStdin(pipes.stdin, open);
    return {
      stdin: stdin === undefined ? undefined : new Socket({ fd: stdin, readable: false, writable: true }),
      stdout: new PipeReadEnd(stdout),
      stderr: new PipeReadEnd(stderr),
    };
  } catch (error) {
    for (const fd of opened) closeSync(fd);
    throw error;
  }
}

/** ENXIO: no reader is left (the child closed its stdin or is gone already), which is a closed stdin. */
function openStdin(path: string, open: (path: string, flags: number) => number): number | undefined {
  try {
    return open(path, constants.O_WRONLY);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENXIO") return undefined;
    throw error;
  }
}
