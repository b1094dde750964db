/**
 * A fixed offered load for autocannon.
 *
 * autocannon's own `overallRate` is not one: each connection sends back to back
 * until it has used its quota for the current second, then idles until the next
 * one, and all connections' seconds start together. "Half the maximum rate" thus
 * becomes full speed for half a second, then silence, and the p99 it reports is the
 * saturated p99. Here each connection instead sends one request every
 * `connections / rate` seconds, on its own phase, so requests arrive evenly spread
 * (to the 1 ms resolution of timers).
 *
 * Latency is still measured from each request's actual send; the runner reports the
 * achieved rate, which falls short of the offered one when the server cannot keep up
 * (and the latencies then hide the queueing, so such a run must not be quoted).
 */
import type { AutocannonClient } from 'autocannon';

export function paceClient(client: AutocannonClient, periodMs: number, phaseMs: number): void {
  const doRequest = client._doRequest.bind(client);
  // A timer may fire after autocannon has stopped: sending then would reconnect.
  const send = () => {
    if (!client.destroyed) doRequest();
  };
  let due = performance.now() + phaseMs;
  client._doRequest = () => {
    const wait = due - performance.now();
    due = Math.max(due, performance.now() - periodMs) + periodMs;
    if (wait < 0.5) send();
    else setTimeout(send, wait);
  };
}
