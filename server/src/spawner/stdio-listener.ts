/**
 * The daemon's end of its pipe children's stdio: a Unix socket only this
 * daemon's helper knows how to use. The spawner process connects once per stdio descriptor of a
 * child, writes a header naming the spawn and the descriptor, and gives its
 * end to the child as that descriptor; what follows the header is the
 * child's output (or, the other way, its input).
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SECRET_BYTES, STDIO_HEADER_BYTES, decodeStdioHeader, type StdioEndpoint, type StdioFd } from "./protocol.js";

/** A connection that has not said who it is by then is dropped. */
const HEADER_TIMEOUT_MS = 10_000;

/**
 * On Linux, a name in the abstract namespace: nothing on disk is left behind
 * when the daemon is killed; any local process could connect, which is what
 * the secret is for. Elsewhere, a socket in a 0700 directory.
 */
function privateSocketPath(): { path: string; remove(): void } {
  if (process.platform === "linux") {
    return { path: `\0execmux-stdio-${randomBytes(8).toString("hex")}`, remove: () => undefined };
  }
  const directory = mkdtempSync(join(tmpdir(), "execmux-"));
  return { path: join(directory, "stdio.sock"), remove: () => rmSync(directory, { recursive: true, force: true }) };
}

export class StdioListener {
  readonly endpoint: StdioEndpoint;
  private readonly socketPath = privateSocketPath();
  private readonly server: Server;

  /** Listens at once (binding a Unix socket is synchronous), before any helper can connect. */
  constructor(private readonly onStdio: (id: number, fd: StdioFd, socket: Socket) => void) {
    this.endpoint = { path: this.socketPath.path, secret: randomBytes(SECRET_BYTES) };
    // Paused: nothing is read from a child before the header is wanted.
    this.server = createServer({ pauseOnConnect: true }, (socket) => this.identify(socket));
    // Hundreds of starts at once open three connections each; the kernel caps this at somaxconn.
    this.server.listen({ path: this.endpoint.path, backlog: 4096 });
  }

  close(): void {
    this.server.close();
    this.socketPath.remove();
  }

  private identify(socket: Socket): void {
    // Errors end in "close"; whoever owns the socket later adds its own handling.
    socket.on("error", () => undefined);
    const timer = setTimeout(() => socket.destroy(), HEADER_TIMEOUT_MS);
    timer.unref();
    const onReadable = () => {
      // null until the whole header is there; at EOF, whatever came (then too short).
      const header = socket.read(STDIO_HEADER_BYTES) as Buffer | null;
      if (header === null && !socket.readableEnded) return;
      clearTimeout(timer);
      socket.off("readable", onReadable);
      const identity = header && decodeStdioHeader(this.endpoint.secret, header);
      if (!identity) return void socket.destroy();
      // The rest stays buffered in order, for the first "data" listener.
      this.onStdio(identity.id, identity.fd, socket);
    };
    socket.on("readable", onReadable);
  }
}
