/** Helpers for tests that talk to a real socket. */
import { createServer, type AddressInfo } from 'node:net';
import type { Harness } from '../support/harness.js';

/** Listens the harness app on a free port of 127.0.0.1; returns its base URL. */
export async function listen(h: Harness): Promise<string> {
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(h.app.server.address() as AddressInfo).port}`;
}

/** A port nothing listens on: one the OS just handed out and that was released. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
