/**
 * A TCP proxy between the service and PostgreSQL that tests can break on purpose,
 * to show what clients see during an outage without stopping the shared server
 * other tests are using.
 *
 * Modes:
 * - `open`: forwards both ways.
 * - `refuse`: every connection is reset and the port stops listening, as when the
 *   server process is down (connect() gets ECONNREFUSED).
 * - `reset`: the port accepts, then resets every connection at once, as a crashing
 *   or restarting server does.
 * - `blackhole`: existing connections stop carrying data and new ones are accepted
 *   but never answered, as during a network partition or a dead host (only
 *   timeouts can tell).
 */
import net from 'node:net';

export type ProxyMode = 'open' | 'refuse' | 'reset' | 'blackhole';

interface Link {
  readonly client: net.Socket;
  readonly upstream?: net.Socket;
}

export class TcpProxy {
  private server: net.Server | undefined;
  private readonly links = new Set<Link>();
  private mode: ProxyMode = 'open';
  private port = 0;

  private constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  /** Starts a proxy on 127.0.0.1 (a free port) forwarding to target. */
  static async start(targetHost: string, targetPort: number): Promise<TcpProxy> {
    const proxy = new TcpProxy(targetHost, targetPort);
    await proxy.listen();
    return proxy;
  }

  get listeningPort(): number {
    return this.port;
  }

  /** Connections currently held (forwarded, or held in a blackhole). */
  get connectionCount(): number {
    return this.links.size;
  }

  /** Switches mode; breaking modes drop or freeze every existing connection. */
  async setMode(mode: ProxyMode): Promise<void> {
    this.mode = mode;
    if (mode === 'open') {
      // Connections frozen by a blackhole are not revived: a real partition that
      // heals leaves the peers' state unknown, so they are reset.
      this.dropAll();
      if (this.server === undefined) await this.listen();
      return;
    }
    if (mode === 'blackhole') {
      for (const link of this.links) {
        link.client.unpipe();
        link.upstream?.unpipe();
        link.client.pause();
        link.upstream?.pause();
      }
      return;
    }
    this.dropAll();
    if (mode === 'refuse') await this.stopListening();
  }

  async close(): Promise<void> {
    this.mode = 'refuse';
    this.dropAll();
    await this.stopListening();
  }

  private dropAll(): void {
    for (const link of this.links) {
      link.client.resetAndDestroy();
      link.upstream?.resetAndDestroy();
    }
    this.links.clear();
  }

  private accept(client: net.Socket): void {
    client.on('error', () => {});
    if (this.mode === 'reset' || this.mode === 'refuse') {
      client.resetAndDestroy();
      return;
    }
    if (this.mode === 'blackhole') {
      const held: Link = { client };
      this.links.add(held);
      client.pause();
      client.on('close', () => this.links.delete(held));
      return;
    }
    const upstream = net.connect(this.targetPort, this.targetHost);
    const link: Link = { client, upstream };
    this.links.add(link);
    upstream.on('error', () => {});
    const drop = () => {
      this.links.delete(link);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', drop);
    upstream.on('close', drop);
    client.pipe(upstream);
    upstream.pipe(client);
  }

  private listen(): Promise<void> {
    const server = net.createServer((socket) => this.accept(socket));
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      // The same port every time, so the service's DATABASE_URL stays valid.
      server.listen(this.port, '127.0.0.1', () => {
        server.off('error', reject);
        const address = server.address();
        if (typeof address === 'object' && address !== null) this.port = address.port;
        this.server = server;
        resolve();
      });
    });
  }

  private stopListening(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server === undefined) return Promise.resolve();
    return new Promise((resolve) => server.close(() => resolve()));
  }
}
