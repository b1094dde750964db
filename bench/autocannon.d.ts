/** The slice of autocannon's API the bench uses (the package ships no types). */
declare module 'autocannon' {
  import type { EventEmitter } from 'node:events';

  export interface AutocannonRequest {
    method?: string;
    path?: string;
    headers?: Record<string, string>;
    body?: string;
    setupRequest?: (request: AutocannonRequest, context: Record<string, unknown>) => AutocannonRequest;
  }

  /** One connection. `_doRequest` is internal; the paced mode wraps it (see pacing.ts). */
  export interface AutocannonClient extends EventEmitter {
    _doRequest(): void;
    readonly destroyed: boolean;
  }

  export interface AutocannonOptions {
    url: string;
    connections?: number;
    duration?: number;
    pipelining?: number;
    timeout?: number;
    headers?: Record<string, string>;
    requests?: AutocannonRequest[];
    setupClient?: (client: AutocannonClient) => void;
  }

  export interface AutocannonResult {
    errors: number;
    timeouts: number;
    non2xx: number;
    duration: number;
    statusCodeStats: Record<string, { count: number }>;
  }

  export default function autocannon(
    options: AutocannonOptions,
    done: (error: Error | null, result: AutocannonResult) => void,
  ): EventEmitter;
}
