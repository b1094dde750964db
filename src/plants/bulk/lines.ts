/**
 * A byte stream as numbered lines, read as the consumer asks, so at most one chunk and one
 * line are in memory. A line that is not UTF-8 or is over MAX_LINE_BYTES is reported and
 * skipped without buffering it.
 */
import { failure } from '../../http/errors.js';

/** Far above any valid line (an id and each field at its longest, quoted; plant-definition.test.ts checks it): a
 * longer one is refused unread. */
export const MAX_LINE_BYTES = 16 * 1024;

export type Line =
  { readonly number: number; readonly text: string } | { readonly number: number; readonly problem: string };

const LF = 0x0a;
const CR = 0x0d;
const BOM = [0xef, 0xbb, 0xbf] as const;
// ignoreBOM true: the decoder keeps a mark as text; only the body's first one is dropped, by lineOf.
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function startsWithBom(bytes: Uint8Array): boolean {
  return bytes.length >= 3 && bytes[0] === BOM[0] && bytes[1] === BOM[1] && bytes[2] === BOM[2];
}

function lineOf(number: number, bytes: Uint8Array): Line {
  const end = bytes.length > 0 && bytes[bytes.length - 1] === CR ? bytes.length - 1 : bytes.length;
  // A byte order mark starting the body (spreadsheets write one at the start of a file) is not text. One starting a
  // later line is the line's own: a name may begin with U+FEFF, and dropping it would alter the plant silently.
  const start = number === 1 && startsWithBom(bytes) ? BOM.length : 0;
  try {
    return { number, text: utf8.decode(bytes.subarray(start, end)) };
  } catch {
    return { number, problem: 'is not valid UTF-8' };
  }
}

/**
 * The lines of `stream`; throws BODY_TOO_LARGE once more than `limit` bytes arrived.
 */
export async function* linesOf(stream: AsyncIterable<Uint8Array>, limit: number): AsyncGenerator<Line> {
  let received = 0;
  let number = 1;
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  let tooLong = false;
  for await (const chunk of stream) {
    received += chunk.length;
    if (received > limit) throw failure('BODY_TOO_LARGE', [limit]);
    let start = 0;
    for (let end = chunk.indexOf(LF); end !== -1; end = chunk.indexOf(LF, start)) {
      const piece = chunk.subarray(start, end);
      if (tooLong || pendingBytes + piece.length > MAX_LINE_BYTES)
        yield { number, problem: `is longer than ${MAX_LINE_BYTES} bytes` };
      else yield lineOf(number, pending.length === 0 ? piece : Buffer.concat([...pending, piece]));
      number += 1;
      pending = [];
      pendingBytes = 0;
      tooLong = false;
      start = end + 1;
    }
    const rest = chunk.subarray(start);
    if (rest.length === 0) continue;
    if (tooLong || pendingBytes + rest.length > MAX_LINE_BYTES) {
      tooLong = true;
      pending = [];
      pendingBytes = 0;
    } else {
      // A copy: the stream may reuse its chunk's memory.
      pending.push(Uint8Array.prototype.slice.call(rest));
      pendingBytes += rest.length;
    }
  }
  if (tooLong) yield { number, problem: `is longer than ${MAX_LINE_BYTES} bytes` };
  else if (pendingBytes > 0) yield lineOf(number, Buffer.concat(pending));
}
