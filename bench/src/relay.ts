/** A TCP relay the bench can cut, to make the SDK reconnect. */
import net from "node:net";

export class Relay {
  private readonly pairs = new Set<[net.Socket, net.Socket]>();

  private constructor(private readonly server: net.Server) {}

  static async start(targetUrl: string): Promise<Relay> {
    const port = Number(new URL(targetUrl).port);
    const server = net.createServer();
    const relay = new Relay(server);
    server.on("connection", (client) => {
      const upstream = net.connect(port, "127.0.0.1");
      const pair: [net.Socket, net.Socket] = [client, upstream];
      relay.pairs.add(pair);
      client.pipe(upstream).pipe(client);
      for (const socket of pair) socket.on("error", () => relay.cut(pair)).on("close", () => relay.cut(pair));
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return relay;
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.server.address() as net.AddressInfo).port}`;
  }

  cutAll(): void {
    for (const pair of [...this.pairs]) this.cut(pair);
  }

  async close(): Promise<void> {
    this.cutAll();
    await new Promise((resolve) => this.server.close(resolve));
  }

  private cut(pair: [net.Socket, net.Socket]): void {
    if (!this.pairs.delete(pair)) return;
    for (const socket of pair) socket.destroy();
  }
}
