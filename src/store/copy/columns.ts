/**
 * Every column `plantstore copy` carries, once for both databases: each table's row fields with the kind of value
 * each holds, in column order. The readers and writers of both dialects are driven by this catalogue, each converting
 * a kind to and from its database's type, so a column added to a table is one line here (and its field in rows.ts,
 * which the compiler then asks for here).
 *
 * A field's column is its name in snake case (`secretHash`: `secret_hash`). `seq`, the creation order of rows made
 * within one millisecond, is SQLite's rowid and PostgreSQL's identity column `seq`.
 */
import { PLANT_KEYS } from '../../domain/plant.js';
import { PLANT_POSTGRES_TYPES } from '../../domain/plant-sql.js';
import { FIND_ROW_COLUMNS, findRow } from '../../domain/search-text.js';
import { COPY_TABLES, type CopyRows, type CopyTable, type PlantRow } from './rows.js';

/**
 * The value a column holds, as the copy carries it: text (string), int8 (bigint, exact), int4 (number), time (epoch
 * milliseconds; SQLite INTEGER, PostgreSQL timestamptz), bool (SQLite 0/1), list (string[]; SQLite comma-joined text,
 * PostgreSQL text[]). NULL is carried as null, whatever the kind.
 */
export type ColumnKind = 'text' | 'int8' | 'int4' | 'time' | 'bool' | 'list';

export interface TableColumns<Row> {
  /** The primary key's column, which reads page by (keyset: `WHERE key > last ORDER BY key`). */
  readonly key: string;
  /** Every field of the row, with its kind, in column order. */
  readonly kinds: { readonly [F in keyof Row]-?: ColumnKind };
  /** A PostgreSQL identity column the copy writes as it was (and whose sequence it then moves past them). */
  readonly identity?: string;
  /** The target's own rows (its migration made them) are replaced, not cleared first. */
  readonly replaces?: boolean;
  /** Columns each writer derives from the row rather than copies (the plants' find columns). */
  readonly derived?: { readonly columns: readonly string[]; readonly values: (row: Row) => Record<string, string> };
}

export interface Column {
  readonly field: string;
  readonly column: string;
  readonly kind: ColumnKind;
}

/** The plant's fields from its definition (int8 or text, as PostgreSQL types them), then its row's own. */
const PLANT_KINDS = {
  ...Object.fromEntries(PLANT_KEYS.map((key) => [key, PLANT_POSTGRES_TYPES[key] === 'int8' ? 'int8' : 'text'])),
  version: 'int8',
  createdAt: 'time',
} as { readonly [F in keyof PlantRow]-?: ColumnKind };

export const COPY_COLUMNS: { readonly [T in CopyTable]: TableColumns<CopyRows[T]> } = {
  store_secrets: { key: 'name', replaces: true, kinds: { name: 'text', secret: 'text' } },
  tokens: {
    key: 'id',
    kinds: {
      id: 'text',
      name: 'text',
      secretHash: 'text',
      scopes: 'list',
      createdAt: 'time',
      expiresAt: 'time',
      lastUsedAt: 'time',
      revokedAt: 'time',
      createdBy: 'text',
    },
  },
  plants: {
    key: 'id',
    kinds: PLANT_KINDS,
    derived: { columns: FIND_ROW_COLUMNS, values: (row) => findRow(row) },
  },
  webhook_subscriptions: {
    key: 'id',
    identity: 'seq',
    kinds: {
      seq: 'int8',
      id: 'text',
      url: 'text',
      description: 'text',
      secret: 'text',
      previousSecret: 'text',
      previousSecretExpiresAt: 'time',
      eventTypes: 'list',
      createdAt: 'time',
      version: 'int4',
      enabled: 'bool',
      disabledAt: 'time',
      disabledReason: 'text',
      failingSince: 'time',
      tag: 'text',
      maxPerSecond: 'int4',
      throttleLastAt: 'time',
      throttleCount: 'int4',
    },
  },
  webhook_events: {
    key: 'id',
    kinds: { id: 'text', type: 'text', payload: 'text', createdAt: 'time', tag: 'text', previousTag: 'text' },
  },
  webhook_deliveries: {
    key: 'id',
    identity: 'seq',
    kinds: {
      seq: 'int8',
      id: 'text',
      eventId: 'text',
      subscriptionId: 'text',
      status: 'text',
      attemptCount: 'int4',
      manual: 'bool',
      nextAttemptAt: 'time',
      leaseOwner: 'text',
      leaseUntil: 'time',
      createdAt: 'time',
    },
  },
  webhook_delivery_attempts: {
    key: 'id',
    identity: 'id',
    kinds: {
      id: 'int8',
      deliveryId: 'text',
      attempt: 'int4',
      attemptedAt: 'time',
      responseStatus: 'int4',
      latencyMs: 'int4',
      error: 'text',
      responseBody: 'text',
      responseContentType: 'text',
    },
  },
  webhook_recoveries: {
    key: 'id',
    kinds: {
      id: 'text',
      subscriptionId: 'text',
      windowKey: 'text',
      since: 'time',
      until: 'time',
      status: 'text',
      requeued: 'int4',
      cursorAt: 'time',
      cursorId: 'text',
      createdAt: 'time',
      updatedAt: 'time',
      finishedAt: 'time',
    },
  },
};

/** A column as SQLite names it: `seq` is the rowid. */
export const sqliteColumn = (column: string): string => (column === 'seq' ? 'rowid' : column);

const snakeCase = (field: string): string => field.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`);

/** The table's columns, in order, each with its row field and kind. */
export function columnsOf(table: CopyTable): readonly Column[] {
  return Object.entries(COPY_COLUMNS[table].kinds as Record<string, ColumnKind>).map(([field, kind]) => ({
    field,
    column: snakeCase(field),
    kind,
  }));
}

/** A row built from a database row: each column's value converted by `convert` (NULL stays null). */
export function rowFrom(
  columns: readonly Column[],
  raw: Readonly<Record<string, unknown>>,
  convert: Readonly<Record<ColumnKind, (value: unknown) => unknown>>,
): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const { field, column, kind } of columns) {
    const value = raw[column];
    row[field] = value === null ? null : convert[kind](value);
  }
  return row;
}

/** A row's values in column order, each converted by `convert` (null stays null), then its derived columns'. */
export function rowValues(
  table: CopyTable,
  columns: readonly Column[],
  row: object,
  convert: Readonly<Record<ColumnKind, (value: never) => unknown>>,
): unknown[] {
  const fields = row as Record<string, unknown>;
  const values = columns.map(({ field, kind }) => {
    const value = fields[field];
    return value === null || value === undefined ? null : (convert[kind] as (value: unknown) => unknown)(value);
  });
  const derived = COPY_COLUMNS[table].derived as TableColumns<object>['derived'];
  if (derived !== undefined) {
    const extra = derived.values(row);
    for (const column of derived.columns) values.push(extra[column]);
  }
  return values;
}

/** The columns a writer inserts: the copied ones, then the derived ones. */
export function insertedColumns(table: CopyTable, columns: readonly Column[]): string[] {
  return [...columns.map(({ column }) => column), ...(COPY_COLUMNS[table].derived?.columns ?? [])];
}

/** `ON CONFLICT (key) DO UPDATE SET ...` for a table whose rows replace the target's, else ''. Both dialects. */
export function replaceClause(table: CopyTable, columns: readonly Column[]): string {
  const { key, replaces } = COPY_COLUMNS[table];
  if (replaces !== true) return '';
  const set = columns
    .filter(({ column }) => column !== key)
    .map(({ column }) => `${column} = excluded.${column}`)
    .join(', ');
  return ` ON CONFLICT (${key}) DO UPDATE SET ${set}`;
}

/** The tables a copy clears in the target, children first (foreign keys): all but those whose rows it replaces. */
export const CLEAR_ORDER: readonly CopyTable[] = COPY_TABLES.filter(
  (table) => COPY_COLUMNS[table].replaces !== true,
).reverse();
