/**
 * Vary lists every request header an answer depends on, and more than one part of the service adds to it: CORS adds
 * `Origin` before the route runs, a route adds what it negotiates on. So a route appends (the `vary` package's rules:
 * no duplicates, `*` absorbs the rest) and never replaces, or a shared cache would serve one origin's answer, with
 * its Access-Control-Allow-Origin, to another.
 */
import type { FastifyReply } from 'fastify';
import vary from 'vary';

export function addVary(reply: FastifyReply, ...fields: string[]): FastifyReply {
  const current = reply.getHeader('vary');
  const header = Array.isArray(current) ? current.join(', ') : current === undefined ? '' : String(current);
  return reply.header('vary', vary.append(header, fields));
}
