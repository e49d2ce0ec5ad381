/**
 * Transparent TCP's side of the proxy: each connection the sandbox's relay
 * redirected arrives naming where it was headed (`host:port`, the name when
 * the relay's resolver handed out a stand-in address); the gate decides it as
 * a SOCKS5 connection (upstream routes transparent TCP through its SOCKS5
 * proxy and reports it so), and the relay is told the verdict in one byte: 0,
 * then the stream; 1, and the relay resets the program's connection.
 */
import { connect, type Socket } from "node:net";
import type { Gate } from "./gate.js";
import { CLIENT_ADDRESS, TARGET_ADDRESS } from "./http-front.js";

type TaggedSocket = Socket & { [CLIENT_ADDRESS]?: string; [TARGET_ADDRESS]?: string };

const GO_ON = Buffer.from([0]);
const REFUSED = Buffer.from([1]);

export class TransparentFront {
  private readonly sockets = new Set<Socket>();

  constructor(private readonly gate: Gate) {}

  /** `socket` arrives paused (launch.ts readPreamble): what the program sent waits until the target is connected. */
  accept(socket: TaggedSocket): void {
    const target = /^(.+):(\d{1,5})$/.exec(socket[TARGET_ADDRESS] ?? "");
    if (!target) {
      socket.end(REFUSED);
      return;
    }
    const host = target[1]!;
    const port = Number(target[2]);
    void this.gate.judge({ protocol: "socks5_tcp", host, port, client: socket[CLIENT_ADDRESS] ?? "127.0.0.1:0" }).then(
      (result) => {
        if (result.address === undefined || socket.destroyed) {
          socket.end(REFUSED);
          return;
        }
        const upstream = connect({ host: result.address, port, family: result.family });
        this.sockets.add(upstream);
        upstream.once("close", () => this.sockets.delete(upstream));
        upstream.once("connect", () => {
          socket.write(GO_ON);
          socket.pipe(upstream).pipe(socket);
        });
        upstream.once("error", () => {
          if (upstream.connecting) socket.end(REFUSED);
          else socket.destroy();
        });
        socket.once("close", () => upstream.destroy());
      },
      () => socket.end(REFUSED),
    );
  }

  close(): void {
    for (const socket of this.sockets) socket.destroy();
  }
}
