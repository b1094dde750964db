/**
 * The probes of the bench's mixed phase (mixed.ts), in a process of their own so that
 * the heavy clients' work (uploads, a stream read as fast as it comes) never delays a
 * probe's send or its clock: `GET /plants/{id}` of a seeded plant and `GET /healthz`,
 * each sent every `intervalMs` for `seconds` whether or not the earlier ones were
 * answered (a stalled service piles probes up as a client's retries would, rather than
 * being asked less often), each timed from its send to the end of its answer.
 *
 * Usage: node --import tsx bench/mixed-probes.ts, with an IPC channel; it says
 * `ready`, then answers each ProbeCommand `probe` with one ProbeReply.
 */
import { Agent, request } from 'node:http';

export type ProbeName = 'get' | 'healthz';

export type ProbeCommand =
  | {
      readonly cmd: 'probe';
      readonly url: string;
      readonly token: string;
      /** Seeded plants 1..storeSize; the get probe reads one at random. */
      readonly storeSize: number;
      readonly seconds: number;
      readonly intervalMs: number;
      /** How long probes still out at the end may take before they count as unanswered. */
      readonly graceMs: number;
    }
  | { readonly cmd: 'close' };

export interface ProbeFigures {
  readonly sent: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  /** Answers by status code. */
  readonly statuses: Record<string, number>;
  /** Probes that failed on the socket (reset, refused). */
  readonly errors: number;
  /** Probes still unanswered graceMs after the last was sent; in the percentiles at the time they had waited. */
  readonly unanswered: number;
}

export type ProbeReply =
  | { readonly type: 'ready' }
  | { readonly type: 'probed'; readonly figures: Record<ProbeName, ProbeFigures> }
  | { readonly type: 'error'; readonly message: string };

/** The nearest-rank percentile of sorted values. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((sorted.length * p) / 100) - 1))] as number;
}

interface Sample {
  readonly sentAt: number;
  ms?: number;
  status?: number;
  error?: boolean;
}

function send(agent: Agent, url: string, headers: Record<string, string>, sample: Sample): void {
  const req = request(url, { agent, headers }, (res) => {
    res.resume();
    res.on('end', () => {
      sample.ms = performance.now() - sample.sentAt;
      sample.status = res.statusCode ?? 0;
    });
    res.on('error', () => (sample.error = true));
  });
  req.on('error', () => {
    if (sample.ms === undefined) sample.error = true;
  });
  req.end();
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function probe(command: Extract<ProbeCommand, { cmd: 'probe' }>): Promise<Record<ProbeName, ProbeFigures>> {
  const agent = new Agent({ keepAlive: true, maxSockets: Infinity });
  const auth = { authorization: `Bearer ${command.token}` };
  const samples: Record<ProbeName, Sample[]> = { get: [], healthz: [] };
  const started = performance.now();
  const ticks = Math.round((command.seconds * 1000) / command.intervalMs);
  for (let k = 0; k < ticks; k++) {
    // An absolute schedule: a late timer does not push every later probe back.
    const wait = started + k * command.intervalMs - performance.now();
    if (wait > 0) await sleep(wait);
    const id = 1 + Math.floor(Math.random() * command.storeSize);
    const get: Sample = { sentAt: performance.now() };
    samples.get.push(get);
    send(agent, `${command.url}/plants/${id}`, auth, get);
    const healthz: Sample = { sentAt: performance.now() };
    samples.healthz.push(healthz);
    send(agent, `${command.url}/healthz`, {}, healthz);
  }
  const out = () => [...samples.get, ...samples.healthz].filter((s) => s.ms === undefined && s.error !== true).length;
  const deadline = performance.now() + command.graceMs;
  while (out() > 0 && performance.now() < deadline) await sleep(20);
  agent.destroy();
  const figures = (list: readonly Sample[]): ProbeFigures => {
    const now = performance.now();
    const statuses: Record<string, number> = {};
    let errors = 0;
    let unanswered = 0;
    const latencies: number[] = [];
    for (const sample of list) {
      if (sample.error === true && sample.ms === undefined) errors++;
      else if (sample.ms === undefined) {
        unanswered++;
        latencies.push(now - sample.sentAt);
      } else {
        latencies.push(sample.ms);
        statuses[String(sample.status)] = (statuses[String(sample.status)] ?? 0) + 1;
      }
    }
    latencies.sort((a, b) => a - b);
    const [p50, p99, max] = [percentile(latencies, 50), percentile(latencies, 99), latencies.at(-1) ?? Number.NaN];
    return { sent: list.length, p50, p99, max, statuses, errors, unanswered };
  };
  return { get: figures(samples.get), healthz: figures(samples.healthz) };
}

function reply(message: ProbeReply): void {
  process.send?.(message);
}

// Only as the script run by mixed.ts (which imports this module's types and percentile).
if (process.send !== undefined && process.argv[1]?.endsWith('mixed-probes.ts') === true) {
  process.on('message', (command: ProbeCommand) => {
    if (command.cmd === 'close') {
      process.disconnect();
      return;
    }
    probe(command).then(
      (figures) => reply({ type: 'probed', figures }),
      (error: unknown) => reply({ type: 'error', message: error instanceof Error ? error.message : String(error) }),
    );
  });
  reply({ type: 'ready' });
}
