/**
 * The README's curl session, replayed with curl itself against the service as a real
 * process, so that what the README shows is what a newcomer sees. The session leaves
 * out the headers every answer carries (it says which); everything else it shows, the
 * status line, the headers it keeps and the body, must match the answer exactly. Replayed
 * again after the start banner's example has created a plant: versions (ETags) then differ
 * from those shown, and the commands, which read them from the answers, must still succeed.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { issueToken } from '../src/tokens/token-service.js';
import { sqliteBackend } from './support/backends.js';
import { startServiceProcess } from './support/service-process.js';
import { checkedFetch } from './support/checked-fetch.js';

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

/** Runs every step in one shell, in order (a step may set a variable a later one uses); returns each step's output. */
async function replay(steps: readonly Step[], address: string, token: string): Promise<string[]> {
  const script = steps
    .map((step, index) => `printf '\\n@@step ${index}@@\\n'\n${step.command.replaceAll('localhost:8080', address)}`)
    .join('\n');
  const { stdout } = await promisify(execFile)('bash', ['-c', script], { env: { ...process.env, TOKEN: token } });
  return stdout.split(/\n@@step \d+@@\n/).slice(1);
}

/** A curl -i step, or one that keeps what a curl prints in a variable (and shows nothing). */
const STEP = /^(curl -i |[A-Z]+=\$\(curl -s )/;

/** The start banner's "Try it" command creates this plant on a new store. */
const BANNER_EXAMPLE = '{"id": 1, "name": "Monstera deliciosa", "tag": "houseplant"}';

async function withService(use: (address: string, token: string) => Promise<void>): Promise<void> {
  const opened = await sqliteBackend.open();
  try {
    const { secret } = await issueToken(opened.store.tokens, {
      name: 'readme',
      scopes: ['plants:read', 'plants:write'],
    });
    const service = await startServiceProcess({ DATABASE_URL: opened.databaseUrl });
    try {
      await use(service.url.replace('http://', ''), secret);
    } finally {
      await service.stop();
    }
  } finally {
    await opened.cleanup();
  }
}

describe('the README curl session', () => {
  const steps = sessionSteps();

  it('shows what the service answers on a new store, step by step', async () => {
    assert.ok(steps.length >= 10, `only ${steps.length} steps found`);
    for (const step of steps) assert.match(step.command, STEP, `not a curl -i step: ${step.command}`);
    await withService(async (address, token) => {
      const outputs = await replay(steps, address, token);
      steps.forEach((step, index) => assert.equal(shownPart(outputs[index] ?? ''), step.expected, `$ ${step.command}`));
    });
  });

  it("answers with the same statuses after the start banner's example created a plant first", async () => {
    await withService(async (address, token) => {
      const banner = await checkedFetch(`http://${address}/plants`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: BANNER_EXAMPLE,
      });
      assert.equal(banner.status, 200);
      const outputs = await replay(steps, address, token);
      const statusLine = (text: string) => text.split('\n')[0];
      steps.forEach((step, index) =>
        assert.equal(statusLine(shownPart(outputs[index] ?? '')), statusLine(step.expected), `$ ${step.command}`),
      );
    });
  });
});
