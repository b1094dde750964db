/**
 * The streams open on this instance and each one's bearer token: to hold a token to
 * EVENTS_MAX_STREAMS_PER_TOKEN, and to end its streams when it stops being valid (a stream
 * is authenticated once, and would otherwise outlive a revocation).
 */
import { TOKEN_REFUSALS } from '../tokens/auth.js';
import type { TokenAuthenticator } from '../tokens/authenticator.js';
import type { ChangeStream } from './change-stream.js';
import { PerTokenPlaces } from '../tokens/per-token-places.js';

interface Holder {
  /** The secret the stream was opened with, to ask the authenticator about again. */
  readonly secret: string;
  /** Gives the token's place back. */
  readonly release: () => void;
}

export class OpenStreams {
  private readonly holders = new Map<ChangeStream, Holder>();
  private readonly places: PerTokenPlaces;
  /** A check under way: a slow store must not pile checks up. */
  private checking = false;

  constructor(maxStreamsPerToken: number) {
    this.places = new PerTokenPlaces(maxStreamsPerToken);
  }

  /**
   * Takes one of the token's places for a stream about to open, or throws
   * `refusal(held)`; the returned function gives it back if the stream does not open.
   */
  reserve(tokenId: string, refusal: (held: number) => Error): () => void {
    return this.places.take(tokenId, refusal);
  }

  /** Streams open now. */
  get size(): number {
    return this.holders.size;
  }

  /** The stream that took the place `holder.release` gives back. */
  attach(stream: ChangeStream, holder: Holder): void {
    this.holders.set(stream, holder);
  }

  /** The stream ended: its place is free. */
  remove(stream: ChangeStream): void {
    const holder = this.holders.get(stream);
    if (holder === undefined) return;
    this.holders.delete(stream);
    holder.release();
  }

  /**
   * Once per token, mostly from the authenticator's cache. A store that cannot answer ends
   * nothing: the next check asks again.
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
