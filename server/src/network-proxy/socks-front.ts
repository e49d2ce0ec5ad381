/**
 * The SOCKS5 side of the proxy (ALL_PROXY=socks5h://...), served by
 * @pondwader/socks5-server: CONNECT only (UDP ASSOCIATE and BIND are
 * answered "command not supported"); the gate decides each connection and a
 * refused one gets reply 2 (not allowed by ruleset), as upstream answers.
 */
import { connect, type Socket } from "node:net";
import { Socks5Server } from "@pondwader/socks5-server";
import type { Gate } from "./gate.js";
import { CLIENT_ADDRESS } from "./http-front.js";

type TaggedSocket = Socket & { [CLIENT_ADDRESS]?: string };

export class SocksFront {
  private readonly server = new Socks5Server();
  private readonly sockets = new Set<Socket>();

  constructor(gate: Gate) {
    this.server.setConnectionHandler((connection, sendStatus) => {
      const socket = connection.socket as TaggedSocket;
      if (connection.command !== "connect") {
        sendStatus("COMMAND_NOT_SUPPORTED");
        return;
      }
      const client = socket[CLIENT_ADDRESS] ?? `${socket.remoteAddress}:${socket.remotePort}`;
      void gate.judge({ protocol: "socks5_tcp", host: connection.destAddress, port: connection.destPort, client }).then(
        (result) => {
          if (result.address === undefined) {
            sendStatus("CONNECTION_NOT_ALLOWED");
            return;
          }
          const target = connect({ host: result.address, port: connection.destPort, family: result.family });
          this.sockets.add(target);
          target.once("close", () => this.sockets.delete(target));
          target.once("connect", () => {
            sendStatus("REQUEST_GRANTED");
            socket.pipe(target).pipe(socket);
          });
          target.once("error", (error: NodeJS.ErrnoException) => {
            if (!target.connecting) {
              socket.destroy();
              return;
            }
            sendStatus(error.code === "ECONNREFUSED" ? "CONNECTION_REFUSED" : error.code === "ENETUNREACH" ? "NETWORK_UNREACHABLE" : "HOST_UNREACHABLE");
          });
          socket.once("close", () => target.destroy());
        },
        () => sendStatus("GENERAL_FAILURE"),
      );
    });
  }

  accept(socket: TaggedSocket): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
    socket.on("error", () => socket.destroy());
    this.server._handleConnection(socket);
    socket.resume();
  }

  close(): void {
    for (const socket of this.sockets) socket.destroy();
  }
}
