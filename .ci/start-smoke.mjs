// The README's first command, `npm start`, on a fresh SQLite store: it builds, then
// serves. This waits for the first-start banner's token, creates a plant with it
// (an id above 2^53), reads it back, then sends SIGTERM to the process group (as a
// terminal's Ctrl-C or systemd does: npm, its shell and the service) and expects the
// service's graceful stop. Plain JavaScript: it must run before anything is built.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const dir = mkdtempSync(join(tmpdir(), 'plantstore-start-'));
const child = spawn('npm', ['start'], {
  env: { ...process.env, PORT: '0', DATABASE_URL: `sqlite:${join(dir, 'plantstore.db')}` },
  stdio: ['ignore', 'pipe', 'pipe'],
  detached: true, // its own process group, signalled as a whole below
});
let output = '';
child.stdout.on('data', (chunk) => (output += chunk));
child.stderr.on('data', (chunk) => (output += chunk));
// Closed once every process holding the pipe (npm, its shell, the service) has exited.
const closed = new Promise((resolve) => child.stdout.once('close', resolve));

function fail(message) {
  process.stderr.write(`start smoke test: ${message}\n--- npm start output ---\n${output}\n`);
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // already gone
  }
  rmSync(dir, { recursive: true, force: true });
  process.exit(1);
}

const deadline = Date.now() + 180_000; // the build (the bundle, when the sources changed) comes first
let url;
let token;
while (url === undefined || token === undefined) {
  if (Date.now() > deadline) fail('no listening line and banner token within 180 s');
  if (child.exitCode !== null) fail(`npm start exited with ${child.exitCode}`);
  url = /Server listening at (http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1];
  token = /^ {4}(pst_[A-Za-z0-9_-]{43})$/m.exec(output)?.[1];
  await new Promise((resolve) => setTimeout(resolve, 200));
}

const id = '9007199254740993';
const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
const created = await fetch(`${url}/plants`, { method: 'POST', headers, body: `{"id": ${id}, "name": "Monstera"}` });
const createdBody = await created.text();
if (created.status !== 200 || createdBody !== '{"name":"Monstera"}')
  fail(`POST /plants answered ${created.status} ${createdBody}`);
const read = await fetch(`${url}/plants/${id}`, { headers });
const readBody = await read.text();
if (read.status !== 200 || readBody !== `{"id":${id},"name":"Monstera"}`)
  fail(`GET /plants/${id} answered ${read.status} ${readBody}`);

process.kill(-child.pid, 'SIGTERM');
const stopTimer = setTimeout(() => fail('the service did not stop within 30 s of SIGTERM'), 30_000);
await closed;
clearTimeout(stopTimer);
// `npm ci` installed the pinned Node.js that npm scripts run on, whatever node ran npm.
const pinned = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).devDependencies.node;
if (!output.includes(`"node":"v${pinned}"`)) fail(`the service did not say it ran on the pinned Node.js ${pinned}`);
// The service logs "stopped" just before exiting 0, once in-flight requests are done and the store is closed.
if (!/"msg":"stopped"/.test(output)) fail('no graceful stop after SIGTERM');
rmSync(dir, { recursive: true, force: true });
process.stdout.write(
  `npm start: served on ${url} (Node.js ${pinned}), created and read plant ${id}, stopped gracefully on SIGTERM\n`,
);
