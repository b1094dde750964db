/**
 * A raw HTTP/1.1 connection for attacks a proper client refuses to make: bodies
 * that disagree with their Content-Length, bytes sent one at a time, heads of a
 * megabyte, invalid bytes. It parses just enough of a response (status, headers,
 * a Content-Length body) to check it.
 */
import { connect, type Socket } from 'node:net';

export interface RawResponse {
  readonly status: number;
  /** Lower-cased names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export class RawConnection {
  private buffer = Buffer.alloc(0);
  private waiters: (() => void)[] = [];
  private closedAt: number | undefined;
  readonly closed: Promise<void>;

  private constructor(readonly socket: Socket) {
    socket.on('data', (chunk: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, chunk]);
      this.wake();
    });
    this.closed = new Promise((resolve) => {
      socket.on('close', () => {
        this.closedAt = Date.now();
        this.wake();
        resolve();
      });
    });
    socket.on('error', () => {}); // a reset shows up as 'close'
  }

  static open(url: string): Promise<RawConnection> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = connect({ host: hostname, port: Number(port) }, () => resolve(new RawConnection(socket)));
      socket.once('error', reject);
    });
  }

  get isClosed(): boolean {
    return this.closedAt !== undefined;
  }

  /** Writes and resolves once the bytes are handed to the kernel; false if the socket is gone. */
  write(data: string | Buffer): Promise<boolean> {
    if (this.socket.destroyed || !this.socket.writable) return Promise.resolve(false);
    return new Promise((resolve) => this.socket.write(data, (error) => resolve(error == null)));
  }

  private wake(): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const wake of waiters) wake();
  }

  private parse(bodiless: boolean): RawResponse | undefined {
    const end = this.buffer.indexOf('\r\n\r\n');
    if (end < 0) return undefined;
    const [statusLine = '', ...lines] = this.buffer.subarray(0, end).toString('latin1').split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
    }
    const status = Number(statusLine.split(' ')[1]);
    const length = headers['content-length'];
    const bodyStart = end + 4;
    if (bodiless) {
      this.buffer = this.buffer.subarray(bodyStart);
      return { status, headers, body: '' };
    }
    if (length !== undefined) {
      if (this.buffer.length < bodyStart + Number(length)) return undefined;
      const body = this.buffer.subarray(bodyStart, bodyStart + Number(length)).toString('utf8');
      this.buffer = this.buffer.subarray(bodyStart + Number(length));
      return { status, headers, body };
    }
    if (!this.isClosed) return undefined;
    const body = this.buffer.subarray(bodyStart).toString('utf8');
    this.buffer = Buffer.alloc(0);
    return { status, headers, body };
  }

  /**
   * The next response; rejects if none is complete within `timeoutMs` or the
   * connection closes first. `bodiless`: the answer to a HEAD request (no body,
   * whatever Content-Length says).
   */
  async response(timeoutMs = 10_000, bodiless = false): Promise<RawResponse> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const parsed = this.parse(bodiless);
      if (parsed !== undefined) return parsed;
      if (this.isClosed)
        throw new Error(
          `connection closed without a (complete) response; got ${JSON.stringify(this.buffer.toString('latin1').slice(0, 300))}`,
        );
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no response within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Resolves with how long the server took to close the connection, or rejects after `timeoutMs`. */
  async closedWithin(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      this.closed,
      new Promise(
        (_, reject) =>
          (timer = setTimeout(() => reject(new Error(`connection still open after ${timeoutMs} ms`)), timeoutMs)),
      ),
    ]).finally(() => clearTimeout(timer));
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** One request and its response on a fresh connection. */
export async function rawExchange(url: string, request: string | Buffer, timeoutMs = 10_000): Promise<RawResponse> {
  const connection = await RawConnection.open(url);
  try {
    await connection.write(request);
    return await connection.response(timeoutMs, /^HEAD /i.test(request.toString('latin1', 0, 5)));
  } finally {
    connection.destroy();
  }
}

/** A request head with the given headers (Host and Connection: close added). */
export function head(method: string, path: string, headers: Readonly<Record<string, string>> = {}): string {
  const lines = Object.entries({ host: '127.0.0.1', connection: 'close', ...headers }).map(
    ([name, value]) => `${name}: ${value}`,
  );
  return `${method} ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`;
}
