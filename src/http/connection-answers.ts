/**
 * The answers each connection still owes. HTTP/1.1 pairs answers with requests by order alone, so an answer
 * given on Node's behalf (client-errors.ts) must follow those of every request received in full before it:
 * written at once, a 400 for garbage was read as the answer to a valid POST pipelined ahead of it.
 * Responses finish in request order, so only the last two requests need remembering.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

interface Recent {
  lastRequest: IncomingMessage;
  lastResponse: ServerResponse;
  previousResponse: ServerResponse | undefined;
}

const recentBySocket = new WeakMap<Socket, Recent>();

export function trackExchange(request: IncomingMessage, response: ServerResponse): void {
  const recent = recentBySocket.get(request.socket);
  if (recent === undefined) {
    recentBySocket.set(request.socket, { lastRequest: request, lastResponse: response, previousResponse: undefined });
    return;
  }
  recent.previousResponse = recent.lastResponse;
  recent.lastRequest = request;
  recent.lastResponse = response;
}

function isDone(response: ServerResponse): boolean {
  return response.writableFinished || response.destroyed;
}

/**
 * Calls `answer` once every request received in full on this connection has been
 * answered. Calls `cannot` instead if the response to a request still arriving has
 * begun (the answer's bytes would land inside it, or follow it unasked), or if the owed answers take
 * longer than `limitMs`.
 */
export function afterOwedAnswers(socket: Socket, limitMs: number, answer: () => void, cannot: () => void): void {
  const recent = recentBySocket.get(socket);
  if (recent === undefined) {
    answer();
    return;
  }
  const { lastRequest, lastResponse } = recent;
  const owed = lastRequest.complete ? lastResponse : recent.previousResponse;
  const onTurn = () => {
    // A request still arriving whose answer has begun (or was sent early, its body
    // being discarded: lingering-close.ts) gets no second answer.
    const answered = !lastRequest.complete && lastResponse.headersSent;
    (answered ? cannot : answer)();
  };
  if (owed === undefined || isDone(owed)) {
    onTurn();
    return;
  }
  let settled = false;
  const timer = setTimeout(() => {
    settled = true;
    cannot();
  }, limitMs);
  timer.unref();
  owed.once('close', () => {
    if (settled) return;
    clearTimeout(timer);
    onTurn();
  });
}
