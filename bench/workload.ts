/**
 * What the bench sends and what the store holds, shared by the seeders, the floor
 * server and the load generator so that both servers see the same traffic and
 * answer with the same bytes.
 *
 * Seeded plants have ids 1..N and content derived from the id (so the floor can
 * answer from memory without a copy of the store). Created plants get ids far from
 * those: every run has its own block, and one create in four has an id above 2^53,
 * which only the lossless parser and int64 columns keep exact.
 */
export interface BenchPlant {
  readonly id: number | bigint;
  readonly name: string;
  readonly tag?: string;
}

/** The content of seeded plant `id`; the SQL seeders compute the same (see SEED_SQL_*). */
export function seededPlant(id: number): BenchPlant {
  return id % 3 === 0 ? { id, name: `Plant ${id}` } : { id, name: `Plant ${id}`, tag: `tag${id % 10}` };
}

/** SQL expressions (of the integer `x`) that produce seededPlant(x)'s name and tag. */
export const SEED_SQL_NAME = `'Plant ' || x`;
export const SEED_SQL_TAG = `CASE WHEN x % 3 = 0 THEN NULL ELSE 'tag' || (x % 10) END`;
/**
 * The find columns (src/domain/search-text.ts) of the same plants: their names and
 * tags are ASCII, so folding them is lower() and their words are split at the one
 * space. stores.ts checks a sample against findColumns after seeding.
 */
export const SEED_SQL_FIND_COLUMNS = {
  name_key: `'plant ' || x`,
  name_words: `'plant ' || x`,
  tag_words: `CASE WHEN x % 3 = 0 THEN '' ELSE 'tag' || (x % 10) END`,
};

const RUN_BLOCK = 1_000_000_000n;
const SMALL_BASE = 1_000_000_000_000n;
const LARGE_BASE = 2n ** 62n;

/** The id of the k-th create of run `run`: unique across the whole bench invocation. */
export function createdId(run: number, k: number): bigint {
  const offset = BigInt(run) * RUN_BLOCK + BigInt(k);
  return k % 4 === 3 ? LARGE_BASE + offset : SMALL_BASE + offset;
}

export function createBody(run: number, k: number): string {
  return `{"id":${createdId(run, k)},"name":"Bench plant ${k}","tag":"bench"}`;
}

/** The k-th update of run `run`: a new name each time, so every one is a real change (a new version and its event). */
export function updateBody(run: number, k: number): string {
  return `{"name":"Renamed ${run}.${k}"}`;
}

/** A uniformly random seeded id in 1..n. */
export function randomSeededId(n: number): number {
  return 1 + Math.floor(Math.random() * n);
}

export const LIST_PAGE = 100;

/** The sort-name-deep case reads the page this many pages into the name order (or the last page of a smaller store). */
export const DEEP_PAGE = 10_000;

/**
 * A search for a plant half remembered by the start of its distinctive word, the
 * first four digits of its number (about 111 plants at 1,000,000); with `common`,
 * also the word "plant", which every seeded plant has.
 */
export function searchPath(common: boolean): string {
  return `/plants?limit=${LIST_PAGE}&q=${common ? 'plant+' : ''}${1000 + Math.floor(Math.random() * 9000)}`;
}

/** Counting the plants of one tag (a tenth of two thirds of the store), with a one-plant page. */
export const COUNT_TAG_PATH = '/plants?limit=1&tag=tag3';
