/**
 * Bench options: flags win over environment variables, which win over defaults.
 * `npm run bench -- --duration 10 --connections 100` or `BENCH_DURATION=10 npm run bench`.
 */
export type CaseName = 'create' | 'update' | 'get' | 'list' | FindCaseName;
/**
 * GET /plants finding plants (issue 20): a search page (for a distinctive word, and
 * with a word every plant has too), name-ordered pages at the start and 10,000 pages
 * deep, a count by tag.
 */
export type FindCaseName = 'search' | 'search-common' | 'sort-name' | 'sort-name-deep' | 'count-tag';
export type StoreName = 'sqlite' | 'postgres';
/** The heavy clients of the mixed phase (mixed-load.ts); all by default, fewer to tell which one stalls the probes. */
export type MixedLoadName = 'searches' | 'import' | 'junk' | 'stream';
export const MIXED_LOADS: readonly MixedLoadName[] = ['searches', 'import', 'junk', 'stream'];

/** The PostgreSQL server the benches use when BENCH_POSTGRES_URL names none. */
export const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

export interface BenchOptions {
  /** Seconds per measured run. */
  readonly duration: number;
  readonly connections: number;
  /** Measured runs per (case, server); medians are quoted. */
  readonly repeats: number;
  /** Plants stored before the runs start (get and list read among them). */
  readonly storeSize: number;
  readonly cases: readonly CaseName[];
  readonly stores: readonly StoreName[];
  /** Also run the cases with 1,000,000 plants stored and compare. */
  readonly scale: boolean;
  readonly scaleSize: number;
  /** Plants imported and exported by the bulk cases; 0 skips them. */
  readonly bulkSize: number;
  /** Change streams (GET /events) open on one instance in the streams phase; 0 skips it. */
  readonly streams: number;
  /** Plants seeded for the mixed phase (probes while heavy work runs); 0 skips it. */
  readonly mixedSize: number;
  /** Seconds of each of the mixed phase's idle and heavy parts. */
  readonly mixedSeconds: number;
  /** Plants per import in the mixed phase. */
  readonly mixedImport: number;
  /** The heavy clients the mixed phase runs. */
  readonly mixedLoad: readonly MixedLoadName[];
  /** Measure p99 at a fixed offered load of half the measured maximum. */
  readonly paced: boolean;
  /** Write a --cpu-prof profile of the service to bench/results/profiles. */
  readonly profile: boolean;
  readonly logLevel: string;
  readonly postgresUrl: string;
  /** Skip `npm run build` and use dist/ as it is. */
  readonly noBuild: boolean;
  /** The first-run phase: a clone of HEAD, npm ci, npm start to the first 200, restarts (first-run.ts). */
  readonly firstRun: boolean;
  /** Plants imported by the webhooks phase (webhooks.ts); 0 skips it. */
  readonly webhookImport: number;
  /** Subscriptions (each its own fast receiver) in the webhooks phase. */
  readonly webhookSubscriptions: number;
}

const HELP = `npm run bench -- [options]   (each has an environment variable too)
  --duration <s>       seconds per measured run           BENCH_DURATION     (5)
  --connections <n>    concurrent connections             BENCH_CONNECTIONS  (50)
  --repeats <n>        measured runs per case and server  BENCH_REPEATS      (3)
  --store-size <n>     plants stored before the runs      BENCH_STORE_SIZE   (10000)
  --cases <list>       create,update,get,list,search,     BENCH_CASES
                       search-common,sort-name,
                       sort-name-deep,count-tag
  --stores <list>      sqlite,postgres                    BENCH_STORES
  --scale              also run with --scale-size plants  BENCH_SCALE=1
  --scale-size <n>     plants in scale mode               BENCH_SCALE_SIZE   (1000000)
  --bulk-size <n>      plants imported, then exported;    BENCH_BULK_SIZE    (1000000)
                       0 skips the bulk cases
  --streams <n>        GET /events streams open on one    BENCH_STREAMS      (1000)
                       instance; 0 skips the streams phase
  --mixed-size <n>     plants seeded for the mixed phase  BENCH_MIXED_SIZE   (200000)
                       (probes while heavy work runs);
                       0 skips it
  --mixed-seconds <s>  its idle and heavy parts, each     BENCH_MIXED_SECONDS (10)
  --mixed-import <n>   plants per import in it            BENCH_MIXED_IMPORT (100000)
  --mixed-load <list>  its heavy clients: searches,       BENCH_MIXED_LOAD
                       import,junk,stream
  --mixed-only         the mixed phase alone: no cases,   BENCH_MIXED_ONLY=1
                       no bulk, no streams phase
  --no-paced           skip the fixed-load p99 runs       BENCH_PACED=0
  --profile            write service CPU profiles         BENCH_PROFILE=1
  --no-build           use dist/ as it is                 BENCH_NO_BUILD=1
  --no-first-run       skip the first-run phase (clone,   BENCH_FIRST_RUN=0
                       npm ci, npm start to the first 200)
  --first-run-only     the first-run phase alone          BENCH_FIRST_RUN_ONLY=1
  --webhook-import <n> plants imported in the webhooks    BENCH_WEBHOOK_IMPORT (20000)
                       phase; 0 skips it
  --webhook-subscriptions <n>  subscriptions in it        BENCH_WEBHOOK_SUBSCRIPTIONS (3)
  --webhooks-only      the webhooks phase alone           BENCH_WEBHOOKS_ONLY=1
  --log-level <level>  the service's LOG_LEVEL            BENCH_LOG_LEVEL    (info)
  --postgres-url <url> server to use when reachable       BENCH_POSTGRES_URL`;

const FLAGS: Record<string, string> = {
  '--duration': 'BENCH_DURATION',
  '--connections': 'BENCH_CONNECTIONS',
  '--repeats': 'BENCH_REPEATS',
  '--store-size': 'BENCH_STORE_SIZE',
  '--cases': 'BENCH_CASES',
  '--stores': 'BENCH_STORES',
  '--scale-size': 'BENCH_SCALE_SIZE',
  '--bulk-size': 'BENCH_BULK_SIZE',
  '--streams': 'BENCH_STREAMS',
  '--mixed-size': 'BENCH_MIXED_SIZE',
  '--mixed-seconds': 'BENCH_MIXED_SECONDS',
  '--mixed-import': 'BENCH_MIXED_IMPORT',
  '--mixed-load': 'BENCH_MIXED_LOAD',
  '--log-level': 'BENCH_LOG_LEVEL',
  '--postgres-url': 'BENCH_POSTGRES_URL',
  '--webhook-import': 'BENCH_WEBHOOK_IMPORT',
  '--webhook-subscriptions': 'BENCH_WEBHOOK_SUBSCRIPTIONS',
};
const SWITCHES: Record<string, [string, string]> = {
  '--scale': ['BENCH_SCALE', '1'],
  '--no-paced': ['BENCH_PACED', '0'],
  '--mixed-only': ['BENCH_MIXED_ONLY', '1'],
  '--profile': ['BENCH_PROFILE', '1'],
  '--no-build': ['BENCH_NO_BUILD', '1'],
  '--no-first-run': ['BENCH_FIRST_RUN', '0'],
  '--first-run-only': ['BENCH_FIRST_RUN_ONLY', '1'],
  '--webhooks-only': ['BENCH_WEBHOOKS_ONLY', '1'],
};

function positive(values: Record<string, string | undefined>, name: string, fallback: number): number {
  const raw = values[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${name} must be a positive integer (got '${raw}')`);
  return value;
}

function list<T extends string>(values: Record<string, string | undefined>, name: string, allowed: readonly T[]): T[] {
  const raw = values[name];
  if (raw === undefined || raw === '') return [...allowed];
  const items = raw.split(',').map((item) => item.trim());
  for (const item of items) {
    if (!allowed.includes(item as T)) throw new Error(`${name}: '${item}' is not one of ${allowed.join(', ')}`);
  }
  return items as T[];
}

const CASES = [
  'create',
  'update',
  'get',
  'list',
  'search',
  'search-common',
  'sort-name',
  'sort-name-deep',
  'count-tag',
] as const;

export function parseOptions(argv: readonly string[], env: NodeJS.ProcessEnv): BenchOptions {
  const values: Record<string, string | undefined> = { ...env };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--help' || arg === '-h') {
      process.stdout.write(`${HELP}\n`);
      process.exit(0);
    }
    const variable = FLAGS[arg];
    const toggle = SWITCHES[arg];
    if (variable !== undefined) values[variable] = argv[++i];
    else if (toggle !== undefined) values[toggle[0]] = toggle[1];
    else throw new Error(`unknown option '${arg}'\n${HELP}`);
  }
  const webhooksOnly = values.BENCH_WEBHOOKS_ONLY === '1';
  const firstRunOnly = values.BENCH_FIRST_RUN_ONLY === '1' || webhooksOnly;
  const mixedOnly = values.BENCH_MIXED_ONLY === '1' || firstRunOnly;
  return {
    duration: positive(values, 'BENCH_DURATION', 5),
    connections: positive(values, 'BENCH_CONNECTIONS', 50),
    repeats: positive(values, 'BENCH_REPEATS', 3),
    storeSize: positive(values, 'BENCH_STORE_SIZE', 10_000),
    cases: mixedOnly ? [] : list(values, 'BENCH_CASES', CASES),
    stores: list(values, 'BENCH_STORES', ['sqlite', 'postgres'] as const),
    scale: values.BENCH_SCALE === '1',
    scaleSize: positive(values, 'BENCH_SCALE_SIZE', 1_000_000),
    bulkSize: mixedOnly || values.BENCH_BULK_SIZE === '0' ? 0 : positive(values, 'BENCH_BULK_SIZE', 1_000_000),
    streams: mixedOnly || values.BENCH_STREAMS === '0' ? 0 : positive(values, 'BENCH_STREAMS', 1000),
    mixedSize: firstRunOnly || values.BENCH_MIXED_SIZE === '0' ? 0 : positive(values, 'BENCH_MIXED_SIZE', 200_000),
    mixedSeconds: positive(values, 'BENCH_MIXED_SECONDS', 10),
    mixedImport: positive(values, 'BENCH_MIXED_IMPORT', 100_000),
    mixedLoad: list(values, 'BENCH_MIXED_LOAD', MIXED_LOADS),
    paced: values.BENCH_PACED !== '0',
    profile: values.BENCH_PROFILE === '1',
    logLevel: values.BENCH_LOG_LEVEL || 'info',
    postgresUrl: values.BENCH_POSTGRES_URL || DEFAULT_POSTGRES_URL,
    noBuild: values.BENCH_NO_BUILD === '1',
    firstRun: !webhooksOnly && (firstRunOnly || (values.BENCH_FIRST_RUN !== '0' && values.BENCH_MIXED_ONLY !== '1')),
    webhookImport:
      (mixedOnly && !webhooksOnly) || values.BENCH_WEBHOOK_IMPORT === '0'
        ? 0
        : positive(values, 'BENCH_WEBHOOK_IMPORT', 20_000),
    webhookSubscriptions: positive(values, 'BENCH_WEBHOOK_SUBSCRIPTIONS', 3),
  };
}
