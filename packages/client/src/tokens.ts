/** Token management (admin scope): create (the secret returned once), list, revoke. */
import type { Client } from 'openapi-fetch';
import { errorFromResponse, PlantStoreConnectionError } from './errors.js';
import type { components, paths } from './openapi-types.js';

export type Token = components['schemas']['Token'];
/** A token just created: its secret is in this answer only. */
export type CreatedToken = components['schemas']['CreatedToken'];
export type NewToken = components['schemas']['NewToken'];

export interface TokenOperations {
  createToken(token: NewToken): Promise<CreatedToken>;
  listTokens(): Promise<Token[]>;
  /** Revokes by id or name; answers the token as it is now (revoked). */
  revokeToken(idOrName: string): Promise<Token>;
}

interface Outcome<T> {
  readonly data?: T;
  readonly error?: unknown;
  readonly response: Response;
}

export function tokenOperations(api: Client<paths>, baseUrl: string, timeoutMs: number): TokenOperations {
  async function send<T>(call: (signal: AbortSignal) => Promise<Outcome<T>>): Promise<T> {
    let outcome: Outcome<T>;
    try {
      outcome = await call(AbortSignal.timeout(timeoutMs));
    } catch (error) {
      const timedOut = error instanceof DOMException && error.name === 'TimeoutError';
      throw new PlantStoreConnectionError(baseUrl, timedOut ? new Error(`no answer within ${timeoutMs} ms`) : error);
    }
    if (!outcome.response.ok || outcome.data === undefined) throw errorFromResponse(outcome.response, outcome.error);
    return outcome.data;
  }

  return {
    createToken: (body) => send((signal) => api.POST('/tokens', { body, signal })),
    listTokens: () => send((signal) => api.GET('/tokens', { signal })),
    revokeToken: (idOrName) =>
      send((signal) => api.DELETE('/tokens/{idOrName}', { params: { path: { idOrName } }, signal })),
  };
}
