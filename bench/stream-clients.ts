/**
 * The stream clients of the bench's streams phase (streams.ts): N open GET /events,
 * plain HTTP/1.1 requests on sockets of this one process, and a paced writer beside
 * them, so that a create's 200 and its message on every stream are timed on one
 * monotonic clock (performance.now()), in a process that shares no event loop with
 * the service.
 *
 * Usage: node --import tsx bench/stream-clients.ts, with an IPC channel; it obeys
 * StreamCommand messages and answers each with one StreamReply.
 *
 * - open: opens the streams (a bounded number at a time) and waits for every 200.
 * - latency: creates `rate` plants/s for `seconds` with ids idBase + k, records when
 *   each 200 came and when each plant.created message came on each stream, and
 *   answers with the delays. Only while this runs are messages parsed; at other
 *   times a stream's bytes are counted and its last bytes kept (to read the last id),
 *   so that the clients stay cheap while a closed-loop create load runs.
 * - mark / report: what each stream received between the two, and whether any ended.
 * - close: closes every stream and exits.
 */
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';

export type StreamCommand =
  | { readonly cmd: 'open'; readonly url: string; readonly token: string; readonly streams: number }
  | {
      readonly cmd: 'latency';
      readonly rate: number;
      readonly seconds: number;
      readonly idBase: number;
      readonly waitMs: number;
    }
  | { readonly cmd: 'mark' }
  | { readonly cmd: 'report' }
  | { readonly cmd: 'close' };

export interface Percentiles {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

export interface LatencyFigures {
  readonly creates: number;
  /** Creates answered per second while the writer ran (the offered rate when the service keeps up). */
  readonly achievedRate: number;
  readonly statuses: Record<string, number>;
  /** Per create: from its 200 to its message on the last stream to get it. */
  readonly lastStream: Percentiles;
  /** Per create and stream: from the 200 to that stream's message. */
  readonly allStreams: Percentiles;
  /** Per create: from its 200 to its message on the first stream to get it. */
  readonly firstStream: Percentiles;
  /** Stream arrivals that came before the create's 200 reached the writer (their delay is negative). */
  readonly beforeTheAnswer: number;
  /** Messages (create x stream) that never came within waitMs of the last 200. */
  readonly missing: number;
  /** The creates' own latency, from send to 200. */
  readonly create: Percentiles;
  /** Reads per stream during the run (each one or more of the service's writes): creates / this is how many messages
   * came per read. */
  readonly readsPerStream: number;
  /** CPU this process used during the run, per second of it (1 = one core busy). */
  readonly clientCpuCores: number;
}

export interface StreamCounts {
  readonly streams: number;
  /** Bytes each stream received since the mark: the least and the most. */
  readonly minBytes: number;
  readonly maxBytes: number;
  /** Reads per stream since the mark, on average. */
  readonly readsPerStream: number;
  /** The distinct last ids the streams received (one when every stream is at the same place). */
  readonly lastIds: readonly string[];
  /** Streams the server ended (overflow, or anything else), or whose connection closed, since they opened. */
  readonly ended: number;
  readonly overflowed: number;
  readonly clientCpuCores: number;
}

export type StreamReply =
  | {
      readonly type: 'opened';
      readonly streams: number;
      readonly seconds: number;
      readonly failures: readonly string[];
    }
  | { readonly type: 'latency'; readonly figures: LatencyFigures }
  | { readonly type: 'marked' }
  | { readonly type: 'counts'; readonly counts: StreamCounts }
  | { readonly type: 'error'; readonly message: string };

/** Streams opened at a time: the listen backlog would drop a thousand SYNs at once. */
const OPENING_AT_ONCE = 100;
/** How long a stream's response head may take: a server that never sends one fails the run rather than hanging it. */
const HEAD_TIMEOUT_MS = 10_000;
/** Bytes of each stream's end to find the last id in. */
const TAIL = 512;
const EMPTY = Buffer.alloc(0);
/** A chunked body's end: the server ended the stream (the connection may stay open). */
const LAST_CHUNK = '\r\n0\r\n\r\n';
const DATA_ID = Buffer.from('data: {"id":');

interface Client {
  readonly socket: Socket;
  /** The start of a message the last chunk cut off (latency mode only). */
  carry: Buffer | undefined;
  bytes: number;
  reads: number;
  /** The last two chunks read, to find the last id in. */
  last: Buffer;
  previous: Buffer;
  /** The connection closed. */
  ended: boolean;
}

const clients: Client[] = [];
let bytesAtMark: number[] = [];
let readsAtMark = 0;
let cpuAtMark = { usage: process.cpuUsage(), at: performance.now() };

/** While the latency run listens: where to record each arrival. */
let latencyRun: { arrivals: Float64Array; creates: number; idBase: number; arrived: number } | undefined;

function reply(message: StreamReply): void {
  process.send?.(message);
}

function percentiles(values: Float64Array): Percentiles {
  const sorted = values.sort();
  const at = (p: number) =>
    sorted.length === 0
      ? Number.NaN
      : (sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] as number);
  return { p50: at(50), p99: at(99), max: sorted.length === 0 ? Number.NaN : (sorted[sorted.length - 1] as number) };
}

function cpuCoresSince(mark: { usage: NodeJS.CpuUsage; at: number }): number {
  const used = process.cpuUsage(mark.usage);
  return (used.user + used.system) / 1000 / (performance.now() - mark.at);
}

/**
 * Records the latency run's plant.created messages in `chunk` (and in the cut-off
 * start of one the previous chunk ended with), on the bytes: no strings made, so a
 * thousand streams cost this process little more than the reads themselves.
 */
function recordArrivals(client: Client, index: number, chunk: Buffer, now: number): void {
  const run = latencyRun as NonNullable<typeof latencyRun>;
  const bytes = client.carry === undefined ? chunk : Buffer.concat([client.carry, chunk]);
  client.carry = undefined;
  let from = 0;
  for (;;) {
    const at = bytes.indexOf(DATA_ID, from);
    if (at === -1) {
      // What could be the start of a marker cut off by the chunk's end (a marker starts a line, so none when the chunk
      // ends one).
      const keep = Math.max(from, bytes.length - DATA_ID.length + 1);
      if (keep < bytes.length && bytes[bytes.length - 1] !== 0x0a) client.carry = Buffer.from(bytes.subarray(keep));
      return;
    }
    // The id, digit by digit: exact, as every id of the run is below 2^53.
    let end = at + DATA_ID.length;
    let id = 0;
    for (let digit = bytes[end]; digit !== undefined && digit >= 0x30 && digit <= 0x39; digit = bytes[++end])
      id = id * 10 + digit - 0x30;
    if (end === bytes.length) {
      client.carry = Buffer.from(bytes.subarray(at));
      return;
    }
    const k = id - run.idBase;
    if (k >= 0 && k < run.creates) {
      const slot = k * clients.length + index;
      if (Number.isNaN(run.arrivals[slot])) {
        run.arrivals[slot] = now;
        run.arrived++;
      }
    }
    from = end;
  }
}

/**
 * One stream: a GET /events written on a TCP socket of its own and the answer read
 * raw. Node's HTTP client adds its parser and a Readable per response to every read
 * (a fifth of this process's CPU in a profile of the latency run): at tens of
 * thousands of reads a second, CPU the service would not get on a small machine,
 * and time added to the last stream's delay. The body is chunked, one HTTP chunk per
 * write of the service's, each of whole SSE messages, so the chunk-size lines fall
 * between messages and the markers are found as they are.
 */
function openOne(target: URL, token: string, index: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const socket = connect(Number(target.port), target.hostname);
    socket.setNoDelay(true);
    socket.write(
      `GET /events HTTP/1.1\r\nHost: ${target.host}\r\nAccept: text/event-stream\r\nAuthorization: Bearer ${token}\r\n\r\n`,
    );
    let head = EMPTY;
    const noHead = setTimeout(() => {
      socket.destroy();
      resolve(`stream ${index}: no response head within ${HEAD_TIMEOUT_MS} ms`);
    }, HEAD_TIMEOUT_MS);
    const onHead = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end === -1) return;
      clearTimeout(noHead);
      socket.off('data', onHead);
      const status = head.subarray(0, head.indexOf('\r\n')).toString('latin1');
      if (!/^HTTP\/1\.1 200 /.test(status)) {
        socket.destroy();
        resolve(`stream ${index}: ${head.toString('latin1').slice(0, 300)}`);
        return;
      }
      const client: Client = {
        socket,
        carry: undefined,
        bytes: 0,
        reads: 0,
        last: EMPTY,
        previous: EMPTY,
        ended: false,
      };
      clients[index] = client;
      const onData = (data: Buffer) => {
        client.bytes += data.length;
        client.reads++;
        client.previous = client.last;
        client.last = data;
        if (latencyRun !== undefined) recordArrivals(client, index, data, performance.now());
      };
      socket.on('data', onData);
      socket.on('end', () => (client.ended = true));
      socket.on('close', () => (client.ended = true));
      if (end + 4 < head.length) onData(head.subarray(end + 4));
      resolve(undefined);
    };
    socket.on('data', onHead);
    socket.on('error', (error) => {
      clearTimeout(noHead);
      resolve(`stream ${index}: ${error.message}`);
    });
  });
}

async function open(command: Extract<StreamCommand, { cmd: 'open' }>): Promise<void> {
  const started = performance.now();
  const target = new URL(command.url);
  const failures: string[] = [];
  for (let first = 0; first < command.streams; first += OPENING_AT_ONCE) {
    const batch = Array.from({ length: Math.min(OPENING_AT_ONCE, command.streams - first) }, (_, i) =>
      openOne(target, command.token, first + i),
    );
    for (const failure of await Promise.all(batch)) if (failure !== undefined) failures.push(failure);
  }
  reply({
    type: 'opened',
    streams: clients.filter(Boolean).length,
    seconds: (performance.now() - started) / 1000,
    failures: failures.slice(0, 5),
  });
}

let writerTarget: { url: string; token: string } | undefined;

async function latency(command: Extract<StreamCommand, { cmd: 'latency' }>): Promise<void> {
  if (writerTarget === undefined) throw new Error('latency before open');
  const { url, token } = writerTarget;
  const creates = Math.round(command.rate * command.seconds);
  const streams = clients.length;
  const run = {
    arrivals: new Float64Array(creates * streams).fill(Number.NaN),
    creates,
    idBase: command.idBase,
    arrived: 0,
  };
  for (const client of clients) client.carry = undefined;
  latencyRun = run;
  const sent = new Float64Array(creates);
  const answered = new Float64Array(creates).fill(Number.NaN);
  const statuses: Record<string, number> = {};
  let answers = 0;
  const agent = new Agent({ keepAlive: true, maxSockets: 64 });
  const cpuMark = { usage: process.cpuUsage(), at: performance.now() };
  const readsBefore = totalReads();
  const send = (k: number) => {
    const body = `{"id":${command.idBase + k},"name":"Streamed plant ${k}","tag":"stream"}`;
    const headers = {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(body)),
    };
    sent[k] = performance.now();
    const req = request(`${url}/plants`, { method: 'POST', agent, headers }, (res) => {
      answered[k] = performance.now();
      statuses[res.statusCode ?? 0] = (statuses[res.statusCode ?? 0] ?? 0) + 1;
      answers++;
      res.resume();
    });
    req.on('error', () => {
      statuses.error = (statuses.error ?? 0) + 1;
      answers++;
    });
    req.end(body);
  };
  // Paced: create k is due at k / rate seconds after the start; each tick sends whatever is due.
  const started = performance.now();
  let next = 0;
  await new Promise<void>((resolve) => {
    const tick = setInterval(() => {
      const due = Math.min(creates, Math.floor(((performance.now() - started) * command.rate) / 1000) + 1);
      while (next < due) send(next++);
      if (next === creates) {
        clearInterval(tick);
        resolve();
      }
    }, 1);
  });
  let lastAnswer = performance.now();
  await new Promise<void>((resolve) => {
    const check = setInterval(() => {
      if (answers < creates) lastAnswer = performance.now();
      const done = answers === creates && run.arrived === creates * streams;
      if (done || performance.now() - lastAnswer > command.waitMs) {
        clearInterval(check);
        resolve();
      }
    }, 5);
  });
  latencyRun = undefined;
  agent.destroy();
  const clientCpuCores = cpuCoresSince(cpuMark);
  const readsPerStream = (totalReads() - readsBefore) / streams;
  const all = new Float64Array(creates * streams);
  const last = new Float64Array(creates);
  const first = new Float64Array(creates);
  const create = new Float64Array(creates);
  let [allCount, lastCount, firstCount, answeredCount, missing, before, lastAnswered] = [0, 0, 0, 0, 0, 0, started];
  for (let k = 0; k < creates; k++) {
    const at = answered[k] as number;
    if (Number.isNaN(at)) {
      missing += streams;
      continue;
    }
    create[answeredCount++] = at - (sent[k] as number);
    lastAnswered = Math.max(lastAnswered, at);
    let [latest, earliest, complete] = [-Infinity, Infinity, true];
    for (let s = 0; s < streams; s++) {
      const arrival = run.arrivals[k * streams + s] as number;
      if (Number.isNaN(arrival)) {
        missing++;
        complete = false;
        continue;
      }
      all[allCount++] = arrival - at;
      if (arrival < at) before++;
      latest = Math.max(latest, arrival);
      earliest = Math.min(earliest, arrival);
    }
    if (complete) last[lastCount++] = latest - at;
    if (earliest !== Infinity) first[firstCount++] = earliest - at;
  }
  reply({
    type: 'latency',
    figures: {
      creates,
      achievedRate: answeredCount / ((lastAnswered - started) / 1000),
      statuses,
      lastStream: percentiles(last.subarray(0, lastCount)),
      allStreams: percentiles(all.subarray(0, allCount)),
      firstStream: percentiles(first.subarray(0, firstCount)),
      beforeTheAnswer: before,
      missing,
      create: percentiles(create.subarray(0, answeredCount)),
      readsPerStream,
      clientCpuCores,
    },
  });
}

function totalReads(): number {
  return clients.reduce((sum, client) => sum + client.reads, 0);
}

function tailOf(client: Client): string {
  return Buffer.concat([client.previous, client.last]).subarray(-TAIL).toString('latin1');
}

/** The last id among a stream's last bytes. */
function lastId(tail: string): string {
  const line = tail.lastIndexOf('\nid: ');
  if (line === -1) return 'none';
  const end = tail.indexOf('\n', line + 1);
  return end === -1 ? 'cut off' : tail.slice(line + 5, end);
}

function counts(): StreamCounts {
  const received = clients.map((client, i) => client.bytes - (bytesAtMark[i] ?? 0));
  return {
    streams: clients.length,
    minBytes: Math.min(...received),
    maxBytes: Math.max(...received),
    readsPerStream: (totalReads() - readsAtMark) / clients.length,
    lastIds: [...new Set(clients.map((client) => lastId(tailOf(client))))].slice(0, 5),
    ended: clients.filter((client) => client.ended || tailOf(client).endsWith(LAST_CHUNK)).length,
    overflowed: clients.filter((client) => tailOf(client).includes('event: stream.overflow')).length,
    clientCpuCores: cpuCoresSince(cpuAtMark),
  };
}

async function obey(command: StreamCommand): Promise<void> {
  switch (command.cmd) {
    case 'open':
      writerTarget = { url: command.url, token: command.token };
      return open(command);
    case 'latency':
      return latency(command);
    case 'mark':
      bytesAtMark = clients.map((client) => client.bytes);
      readsAtMark = totalReads();
      cpuAtMark = { usage: process.cpuUsage(), at: performance.now() };
      return reply({ type: 'marked' });
    case 'report':
      return reply({ type: 'counts', counts: counts() });
    case 'close':
      for (const client of clients) client.socket.destroy();
      process.exit(0);
  }
}

process.on('message', (command: StreamCommand) => {
  obey(command).catch((error: unknown) => reply({ type: 'error', message: (error as Error).stack ?? String(error) }));
});
