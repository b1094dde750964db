/** Log destinations for tests that start the service in-process. */
import { Writable } from 'node:stream';

/** A log stream that drops every line: for tests that assert nothing about the logs. */
export function discardedLog(): Writable {
  return new Writable({ write: (_chunk, _encoding, done) => done() });
}
