/**
 * Holds each token to a number of long-running things at once (streams, imports, exports),
 * so one slow client cannot take what every token shares. A place is taken before the request
 * waits for anything, so requests arriving together cannot all pass the limit.
 */
export class PerTokenPlaces {
  private readonly taken = new Map<string, number>();

  constructor(readonly limit: number) {}

  /** The places the token holds now. */
  held(tokenId: string): number {
    return this.taken.get(tokenId) ?? 0;
  }

  /** Takes one of the token's places, or throws `refusal(held)` when all are taken; the returned function gives it back
   * (once). */
  take(tokenId: string, refusal: (held: number) => Error): () => void {
    const held = this.held(tokenId);
    if (held >= this.limit) throw refusal(held);
    this.taken.set(tokenId, held + 1);
    let given = false;
    return () => {
      if (given) return;
      given = true;
      const left = this.held(tokenId) - 1;
      if (left <= 0) this.taken.delete(tokenId);
      else this.taken.set(tokenId, left);
    };
  }
}
