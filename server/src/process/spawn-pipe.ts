/** Children on pipes: stdout and stderr kept apart, stdin a pipe or closed. */
import { spawn as spawnChild } from "node:child_process";
import type { Readable } from "node:stream";
import type { OutputStream } from "@execmux/shared";
import { SpawnError, type Child, type ChildEvents, type SpawnSpec } from "./child.js";

export async function spawnPipe(spec: SpawnSpec, events: ChildEvents): Promise<Child> {
  const child = spawnChild(spec.file, spec.args, {
    cwd: spec.cwd,
    env: spec.env,
    ...(spec.arg0 !== undefined ? { argv0: spec.arg0 } : {}),
    // A closed stdin is /dev/null: the child reads EOF at once.
    stdio: [spec.pipeStdin ? "pipe" : "ignore", "pipe", "pipe"],
    // A new session and process group, so the whole tree can be signalled.
    detached: true,
    windowsHide: true,
  });

  await new Promise<void>((resolve, reject) => {
    child.once("spawn", resolve);
    child.once("error", (error: NodeJS.ErrnoException) =>
      reject(new SpawnError(error.message, error.code ?? "EUNKNOWN")),
    );
  });

  const stdin = child.stdin;
  let stdinOpen = stdin !== null;
  // EPIPE when the child stopped reading: stdin is simply closed from now on.
  stdin?.on("error", () => {
    stdinOpen = false;
  });
  stdin?.on("close", () => {
    stdinOpen = false;
  });

  const wire = (readable: Readable, stream: OutputStream) => {
    readable.on("data", (data: Buffer) => events.output(stream, data));
    readable.once("end", () => events.streamEnded(stream));
    readable.on("error", () => undefined); // "end" or "close" follows
  };
  wire(child.stdout!, "stdout");
  wire(child.stderr!, "stderr");
  child.once("exit", (code, signal) => events.exited(code, signal));

  return {
    pid: child.pid!,
    streams: ["stdout", "stderr"],
    get stdinOpen() {
      return stdinOpen;
    },
    write(data) {
      if (stdinOpen) stdin!.write(data);
    },
    closeStdin() {
      if (!stdinOpen) return;
      stdinOpen = false;
      stdin!.end();
    },
    resize() {
      // Pipes have no window size.
    },
    pause() {
      child.stdout!.pause();
      child.stderr!.pause();
    },
    resume() {
      child.stdout!.resume();
      child.stderr!.resume();
    },
  };
}
