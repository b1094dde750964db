/**
 * The streams open on this instance and the bearer token each was opened with: to
 * hold a token to EVENTS_MAX_STREAMS_PER_TOKEN, and to end the streams of a token
 * that stops being valid while they run. A stream is authenticated once, when it
 * opens; without the re-check it would outlive its token's revocation or expiry
 * for as long as the connection lasted.
 */
import { TOKEN_REFUSALS } from '../tokens/auth.js';
import type { TokenAuthenticator } from '../tokens/authenticator.js';
import type { ChangeStream } from './change-stream.js';

interface Holder {
  readonly tokenId: string;
  /** The secret the stream was opened with, to ask the authenticator about again. */
  readonly secret: string;
}

export class OpenStreams {
  private readonly holders = new Map<ChangeStream, Holder>();
  private readonly perToken = new Map<string, number>();
  /** A check under way: a slow store must not pile checks up. */
  private checking = false;

  /** Streams the token holds open, or is opening, now. */
  count(tokenId: string): number {
    return this.perToken.get(tokenId) ?? 0;
  }

  /**
   * Takes one of the token's `limit` places for a stream about to open; false when
   * all are taken. Taken at once, before the request waits for anything, so streams
   * that open at the same moment cannot all pass the limit.
   */
  reserve(tokenId: string, limit: number): boolean {
    const count = this.count(tokenId);
    if (count >= limit) return false;
    this.perToken.set(tokenId, count + 1);
    return true;
  }

  /** Gives a reserved place back (the stream did not open). */
  release(tokenId: string): void {
    const left = this.count(tokenId) - 1;
    if (left <= 0) this.perToken.delete(tokenId);
    else this.perToken.set(tokenId, left);
  }

  /** The stream that took the place `holder.tokenId` reserved. */
  attach(stream: ChangeStream, holder: Holder): void {
    this.holders.set(stream, holder);
  }

  /** The stream ended: its place is free. */
  remove(stream: ChangeStream): void {
    const holder = this.holders.get(stream);
    if (holder === undefined) return;
    this.holders.delete(stream);
    this.release(holder.tokenId);
  }

  /**
   * Asks the authenticator about each token holding streams (once per token; mostly
   * from its cache, so a revocation shows within TOKEN_CACHE_TTL_MS) and ends, with
   * stream.unauthorized, the streams of a token that is revoked, expired or gone. A
   * store that cannot answer ends nothing: the next check asks again.
   */
  async endUnauthorized(authenticator: TokenAuthenticator): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      const bySecret = new Map<string, ChangeStream[]>();
      for (const [stream, { secret }] of this.holders) {
        const streams = bySecret.get(secret);
        if (streams === undefined) bySecret.set(secret, [stream]);
        else streams.push(stream);
      }
      for (const [secret, streams] of bySecret) {
        const verdict = await authenticator.authenticate(secret);
        if (verdict.ok) continue;
        const detail = `${TOKEN_REFUSALS[verdict.reason]}: reconnect with a valid token to resume from lastEventId`;
        for (const stream of streams) stream.close('unauthorized', detail);
      }
    } finally {
      this.checking = false;
    }
  }
}
