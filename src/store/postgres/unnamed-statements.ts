/**
 * Behind a pooler in transaction mode, one client's statements run on whichever server connection is free, so a
 * statement prepared by name on one connection is unknown on the next (SQLSTATE 26000), and PgBouncer before 1.21
 * does not track them. This client sends every statement unnamed: parsed each time, on the connection it runs on.
 * The store's statements keep their names, which a direct connection uses to prepare each once.
 */
import pg from 'pg';

function withoutName(config: unknown): unknown {
  if (typeof config !== 'object' || config === null || !('name' in config) || 'submit' in config) return config;
  return { ...config, name: undefined };
}

export class UnnamedStatementClient extends pg.Client {
  override query<T extends pg.Submittable>(queryStream: T): T;
  override query<R extends unknown[] = unknown[], I = unknown[]>(
    queryConfig: pg.QueryArrayConfig<I>,
    values?: pg.QueryConfigValues<I>,
  ): Promise<pg.QueryArrayResult<R>>;
  override query<R extends pg.QueryResultRow = pg.QueryResultRow, I = unknown>(
    queryConfig: pg.QueryConfig<I>,
  ): Promise<pg.QueryResult<R>>;
  override query<R extends pg.QueryResultRow = pg.QueryResultRow, I = unknown[]>(
    queryTextOrConfig: string | pg.QueryConfig<I>,
    values?: pg.QueryConfigValues<I>,
  ): Promise<pg.QueryResult<R>>;
  override query<R extends unknown[] = unknown[], I = unknown[]>(
    queryConfig: pg.QueryArrayConfig<I>,
    callback: (err: Error, result: pg.QueryArrayResult<R>) => void,
  ): void;
  override query<R extends pg.QueryResultRow = pg.QueryResultRow, I = unknown[]>(
    queryTextOrConfig: string | pg.QueryConfig<I>,
    callback: (err: Error, result: pg.QueryResult<R>) => void,
  ): void;
  override query<R extends pg.QueryResultRow = pg.QueryResultRow, I = unknown[]>(
    queryText: string,
    values: pg.QueryConfigValues<I>,
    callback: (err: Error, result: pg.QueryResult<R>) => void,
  ): void;
  override query(config: unknown, ...rest: unknown[]): unknown {
    return Reflect.apply(pg.Client.prototype.query, this, [withoutName(config), ...rest]);
  }
}
