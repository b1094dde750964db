/**
 * The answers each connection still owes. HTTP/1.1 matches answers to requests by
 * their order alone, so an answer the service gives on Node's behalf (400 for bytes
 * that are not HTTP, 408, 431: client-errors.ts) must go out after the answers to
 * every request received in full before it. Written at once, as Node does, it was
 * read as the answer to the first request still waiting: a valid POST pipelined
 * ahead of garbage was applied while its client saw only the 400.
 *
 * Each request is recorded when Node hands it over and forgotten when its response
 * closes (sent, or the connection gone).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

interface Exchange {
  readonly request: IncomingMessage;
  readonly response: ServerResponse;
}

const openExchanges = new WeakMap<Socket, Set<Exchange>>();

export function trackExchange(request: IncomingMessage, response: ServerResponse): void {
  const socket = request.socket;
  let exchanges = openExchanges.get(socket);
  if (exchanges === undefined) {
    exchanges = new Set();
    openExchanges.set(socket, exchanges);
  }
  const exchange = { request, response };
  exchanges.add(exchange);
  response.once('close', () => exchanges.delete(exchange));
}

/**
 * Calls `answer` once every request received in full on this connection has been
 * answered. A request still arriving is the one the answer is about, so it is not
 * waited for. Calls `cannot` instead if a response is still being written when the
 * turn comes (the answer's bytes would land inside it), or if the owed answers take
 * longer than `limitMs`.
 */
export function afterOwedAnswers(socket: Socket, limitMs: number, answer: () => void, cannot: () => void): void {
  const open = () => [...(openExchanges.get(socket) ?? [])];
  const owed = open().filter((exchange) => exchange.request.complete);
  let settled = false;
  const settle = (outcome: () => void) => {
    if (settled) return;
    settled = true;
    outcome();
  };
  const onTurn = () => settle(open().some((exchange) => exchange.response.headersSent) ? cannot : answer);
  if (owed.length === 0) {
    onTurn();
    return;
  }
  const timer = setTimeout(() => settle(cannot), limitMs);
  timer.unref();
  let left = owed.length;
  for (const { response } of owed) {
    response.once('close', () => {
      left -= 1;
      if (left > 0) return;
      clearTimeout(timer);
      onTurn();
    });
  }
}
