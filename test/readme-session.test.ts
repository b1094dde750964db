/**
 * The README's curl session, replayed with curl itself against the service as a real
 * process, so that what the README shows is what a newcomer sees. The session leaves
 * out the headers every answer carries (it says which); everything else it shows, the
 * status line, the headers it keeps and the body, must match the answer exactly.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { issueToken } from '../src/tokens/token-service.js';
import { sqliteBackend } from './support/backends.js';
import { startServiceProcess } from './support/service-process.js';

const OMITTED_HEADERS = new Set([
  'x-request-id',
  'content-type',
  'content-length',
  'x-content-type-options',
  'referrer-policy',
  'content-security-policy',
  'x-frame-options',
  'cache-control',
  'date',
  'connection',
  'keep-alive',
]);

interface Step {
  readonly command: string;
  readonly expected: string;
}

/** The `$ curl` commands of the session and the lines shown after each. */
function sessionSteps(): Step[] {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const session = /A session with curl[\s\S]*?```console\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(session, 'the README has no curl session');
  const steps: Step[] = [];
  for (const chunk of session.split(/^\$ /m).slice(1)) {
    const [command = '', ...shown] = chunk.split('\n');
    const expected = shown.filter((line) => line !== '' && !line.startsWith('#'));
    steps.push({ command, expected: expected.join('\n') });
  }
  return steps;
}

/** What the README shows of curl -i's output: the headers every answer carries left out. */
function shownPart(output: string): string {
  const [head = '', body = ''] = output.split('\r\n\r\n');
  const [statusLine = '', ...headers] = head.split('\r\n');
  const kept = headers.filter((header) => !OMITTED_HEADERS.has(header.slice(0, header.indexOf(':')).toLowerCase()));
  return [statusLine, ...kept, ...(body === '' ? [] : [body])].join('\n');
}

describe('the README curl session', () => {
  it('shows what the service answers, step by step', async () => {
    const steps = sessionSteps();
    assert.ok(steps.length >= 10, `only ${steps.length} steps found`);
    const opened = await sqliteBackend.open();
    try {
      const { secret } = await issueToken(opened.store.tokens, {
        name: 'readme',
        scopes: ['plants:read', 'plants:write'],
      });
      const service = await startServiceProcess({ DATABASE_URL: opened.databaseUrl });
      try {
        const address = service.url.replace('http://', '');
        for (const step of steps) {
          assert.match(step.command, /^curl -i /, `not a curl -i command: ${step.command}`);
          const { stdout } = await promisify(execFile)(
            'bash',
            ['-c', step.command.replaceAll('localhost:8080', address)],
            {
              env: { ...process.env, TOKEN: secret },
            },
          );
          assert.equal(shownPart(stdout), step.expected, `$ ${step.command}`);
        }
      } finally {
        await service.stop();
      }
    } finally {
      await opened.cleanup();
    }
  });
});
