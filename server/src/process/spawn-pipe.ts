/** Children on pipes: stdout and stderr kept apart, stdin a pipe or closed. Forked by the spawner process. */
import type { Readable } from "node:stream";
import type { OutputStream } from "@execmux/shared";
import type { Spawner } from "../spawner/spawner.js";
import type { Child, ChildEvents, SpawnSpec } from "./child.js";

export async function spawnPipe(spawner: Spawner, spec: SpawnSpec, events: ChildEvents): Promise<Child> {
  const spawned = await spawner.spawn(
    {
      file: spec.file,
      args: spec.args,
      argv0: spec.arg0,
      cwd: spec.cwd,
      env: spec.env,
      pipeStdin: spec.pipeStdin,
      cgroup: spec.cgroup,
    },
    (code, signal) => events.exited(code, signal),
  );

  const { stdin, stdout, stderr } = spawned;
  let stdinOpen = stdin !== undefined;
  // EPIPE when the child stopped reading: stdin is simply closed from now on.
  stdin?.on("error", () => {
    stdinOpen = false;
  });
  stdin?.on("close", () => {
    stdinOpen = false;
  });

  const wire = (readable: Readable, stream: OutputStream) => {
    readable.on("data", (data: Buffer, drained?: boolean) => events.output(stream, data, drained ? "drained" : undefined));
    readable.on("error", () => undefined); // "end" or "close" follows
    // A child that wrote nothing and exited at once may have ended its
    // stream before the handle got here; then "end" has already fired.
    if (readable.readableEnded) events.streamEnded(stream);
    else readable.once("end", () => events.streamEnded(stream));
  };
  wire(stdout, "stdout");
  wire(stderr, "stderr");

  return {
    pid: spawned.pid,
    streams: ["stdout", "stderr"],
    get stdinOpen() {
      return stdinOpen;
    },
    get stdinQueuedBytes() {
      return stdinOpen ? stdin!.writableLength : 0;
    },
    whenStdinBelow(bytes) {
      return new Promise((resolve) => {
        const check = () => {
          if (stdinOpen && stdin!.writableLength > bytes) return;
          stdin?.off("drain", check).off("close", check);
          resolve();
        };
        // A socket emits "drain" once everything queued is written.
        stdin?.on("drain", check).on("close", check);
        check();
      });
    },
    write(data) {
      if (stdinOpen) stdin!.write(data);
    },
    closeStdin() {
      if (!stdinOpen) return;
      stdinOpen = false;
      // A pipe has no half-close (shutdown fails on it): the child reads EOF once our end is closed.
      stdin!.end(() => stdin!.destroy());
    },
    resize() {
      // Pipes have no window size.
    },
    pause() {
      stdout.pause();
      stderr.pause();
    },
    resume() {
      stdout.resume();
      stderr.resume();
    },
    limitChunks(bytes) {
      stdout.maxChunkBytes = stderr.maxChunkBytes = bytes;
    },
  };
}
