/**
 * The README's curl session, replayed with curl itself against the service as a real
 * process, so that what the README shows is what a newcomer sees. The session leaves
 * out the headers every answer carries (it says which); everything else it shows, the
 * status line, the headers it keeps and the body, must match the answer exactly. Replayed
 * again after the start banner's example has created a plant: versions (ETags) then differ
 * from those shown, and the commands, which read them from the answers, must still succeed. And the quick start's
 * create, then the banner's, on a new store: a newcomer's first two requests (they once created two different plants
 * with the same id, and the second was a 409).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, it } from 'node:test';
import { bootstrapBanner } from '../src/server.js';
import { SCOPES } from '../src/domain/scopes.js';
import { BOOTSTRAP_TOKEN_NAME, issueToken, type IssuedToken } from '../src/tokens/token-service.js';
import { sqliteBackend } from './support/backends.js';
import { startServiceProcess } from './support/service-process.js';
import { checkedFetch } from './support/checked-fetch.js';
import { waitFor } from './support/wait.js';

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

/** The start banner's "Try it" command: from `curl` to the first line that does not go on with a backslash. */
function bannerCommand(banner: string): string {
  const command = /^curl (?:[^\n]*\\\n)*[^\n]*$/m.exec(banner)?.[0];
  assert.ok(command, `no curl command in the banner:\n${banner}`);
  return command;
}

/** A token as the first start issues it, to render the banner with. */
const SAMPLE_TOKEN: IssuedToken = {
  record: {
    id: 'tok_sample',
    name: BOOTSTRAP_TOKEN_NAME,
    scopes: SCOPES,
    createdAt: new Date(),
    expiresAt: null,
    lastUsedAt: null,
    createdBy: null,
    revokedAt: null,
  },
  secret: `pst_${'A'.repeat(43)}`,
};

/** The start banner's "Try it" command creates this plant on a new store. */
const BANNER_EXAMPLE = /-d '([^']*)'/.exec(bannerCommand(bootstrapBanner('http://localhost:8080', SAMPLE_TOKEN)))![1]!;

/** The quick start's create: the one curl command of the README's first shell block. */
function quickStartCommand(): string {
  const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
  const block = /## Quick start\n\n```sh\n([\s\S]*?)```/.exec(readme)?.[1];
  assert.ok(block, 'the README has no quick start');
  const commands = block.split('\n').filter((line) => line.startsWith('curl '));
  assert.equal(commands.length, 1, `one curl command in the quick start:\n${block}`);
  return commands[0]!;
}

/** Runs one shell command with TOKEN set and localhost:8080 replaced; its output and the last status code curl got. */
async function runShown(command: string, address: string, token: string): Promise<{ output: string; status: string }> {
  const script = `${command.replaceAll('localhost:8080', address).replace(/\s+$/, '')} -w '\\n@@%{http_code}'`;
  const { stdout } = await promisify(execFile)('bash', ['-c', script], { env: { ...process.env, TOKEN: token } });
  const at = stdout.lastIndexOf('\n@@');
  return { output: stdout.slice(0, at), status: stdout.slice(at + 3) };
}

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

  it("lets a newcomer run the quick start's create and then the first-start banner's, both answered 200", async () => {
    const opened = await sqliteBackend.open();
    try {
      const service = await startServiceProcess({ DATABASE_URL: opened.databaseUrl });
      try {
        await waitFor('the first-start banner is printed', () => service.output().includes('Manage tokens with'));
        const banner = service.output();
        const token = /^ {4}(pst_[A-Za-z0-9_-]{43})$/m.exec(banner)?.[1];
        assert.ok(token, `no token in:\n${banner}`);
        const address = service.url.replace('http://', '');
        const quickStart = await runShown(quickStartCommand(), address, token);
        assert.equal(quickStart.status, '200', `the quick start's create: ${quickStart.output}`);
        const tryIt = await runShown(bannerCommand(banner), address, token);
        assert.equal(tryIt.status, '200', `the banner's create after the quick start's: ${tryIt.output}`);
        assert.equal(await service.stop(), 0);
      } finally {
        await service.stop('SIGKILL');
      }
    } finally {
      await opened.cleanup();
    }
  });
});
