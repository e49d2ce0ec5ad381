/**
 * A TCP relay between a client and the daemon that cuts connections on
 * purpose: after a random number of bytes (so often mid-frame), when the
 * client sends something chosen, or on demand; and that can refuse new
 * connections for a while, like a network that is down.
 */
import net from "node:net";
import { afterEach } from "vitest";

const proxies = new Set<FaultProxy>();
afterEach(async () => {
  await Promise.all([...proxies].map((proxy) => proxy.close()));
  proxies.clear();
});

/** A small seeded PRNG (mulberry32), so a failing run can be replayed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Pair {
  client: net.Socket;
  upstream: net.Socket;
}

export class FaultProxy {
  cuts = 0;
  connections = 0;
  private readonly pairs = new Set<Pair>();
  private blocked = false;
  private budget = Number.POSITIVE_INFINITY;
  private cutRange: [number, number] | undefined;
  private cutOnDaemonText: string | undefined;
  private refusedClientText: RegExp | undefined;

  private constructor(
    private readonly server: net.Server,
    private readonly targetPort: number,
    private readonly random: () => number,
  ) {}

  static async start(targetUrl: string, seed = Date.now()): Promise<FaultProxy> {
    const target = new URL(targetUrl);
    const server = net.createServer();
    const proxy = new FaultProxy(server, Number(target.port), seededRandom(seed));
    server.on("connection", (client) => proxy.accept(client));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    proxies.add(proxy);
    return proxy;
  }

  get url(): string {
    const address = this.server.address() as net.AddressInfo;
    return `ws://127.0.0.1:${address.port}`;
  }

  /** Cut every connection after a random number of daemon-to-client bytes in [min, max]. */
  cutRandomly(min: number, max: number): void {
    this.cutRange = [min, max];
    this.budget = this.nextBudget();
  }

  stopCutting(): void {
    this.cutRange = undefined;
    this.budget = Number.POSITIVE_INFINITY;
  }

  /**
   * Cut instead of delivering the next daemon frame that contains `text`
   * (client frames are masked, so replies are what can be recognised): the
   * request took effect, its reply is lost.
   */
  cutInsteadOfReply(text: string): void {
    this.cutOnDaemonText = text;
  }

  /**
   * Cut any connection as soon as the client sends something matching
   * `pattern` (a request line, an upgrade), so only those requests fail;
   * undefined lets everything through again.
   */
  refuseClientText(pattern: RegExp | undefined): void {
    this.refusedClientText = pattern;
  }

  /** The network goes down: live connections are cut and new ones refused. */
  block(): void {
    this.blocked = true;
    this.cutAll();
  }

  unblock(): void {
    this.blocked = false;
  }

  cutAll(): void {
    for (const pair of [...this.pairs]) this.cut(pair);
  }

  async close(): Promise<void> {
    this.blocked = true;
    this.cutAll();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private nextBudget(): number {
    if (!this.cutRange) return Number.POSITIVE_INFINITY;
    const [min, max] = this.cutRange;
    return Math.floor(min + this.random() * (max - min));
  }

  private accept(client: net.Socket): void {
    if (this.blocked) {
      client.destroy();
      return;
    }
    this.connections++;
    const upstream = net.connect(this.targetPort, "127.0.0.1");
    const pair: Pair = { client, upstream };
    this.pairs.add(pair);
    client.on("data", (data: Buffer) => {
      if (this.refusedClientText?.test(data.toString("latin1"))) this.cut(pair);
      else upstream.write(data);
    });
    upstream.on("data", (data: Buffer) => {
      if (this.cutOnDaemonText && data.toString("latin1").includes(this.cutOnDaemonText)) {
        // The daemon acted on the request (it is answering); the client never hears back.
        this.cutOnDaemonText = undefined;
        this.cut(pair);
        return;
      }
      if (data.length < this.budget) {
        this.budget -= data.length;
        client.write(data);
        return;
      }
      // Forward only part of this chunk: the client sees half a frame.
      client.write(data.subarray(0, this.budget));
      this.budget = this.nextBudget();
      this.cut(pair);
    });
    for (const socket of [client, upstream]) {
      socket.on("error", () => this.cut(pair));
      socket.on("close", () => this.cut(pair));
    }
  }

  private cut(pair: Pair): void {
    if (!this.pairs.delete(pair)) return;
    this.cuts++;
    pair.client.destroy();
    pair.upstream.destroy();
  }
}
