/**
 * The trigger functions, defined once from the plant's definition and (re)applied by the migrator after the
 * numbered migrations. A numbered migration cannot take its body from today's definition (it may name columns
 * added later), so this replaces those bodies once all have run; only when they differ, so an up-to-date
 * store is only read (an instance may start on a read-only standby).
 */
import type pg from 'pg';
import { PLANT_CREATED, PLANT_DELETED, PLANT_UPDATED } from '../../domain/events.js';
import { deletedPlantJsonSql, plantJsonSql } from '../../domain/plant-json.js';
import { plantsDifferSql } from '../../domain/plant-sql.js';

export interface Routine {
  /** The function's signature, as to_regprocedure reads it. */
  readonly signature: string;
  /** Its body: what pg_proc.prosrc holds once it is created. */
  readonly body: string;
  /** The CREATE OR REPLACE FUNCTION statement that installs `body`. */
  readonly create: string;
}

/**
 * plant_changes_log(): the change log's statement-level triggers (migration 0009:
 * why positions are taken under the counter's row lock), each change with its
 * previous tag (0012). Only a real change of the plant's content is logged on an
 * update, not a data step rewriting other columns.
 */
const CHANGE_LOG_BODY = `
DECLARE
  types text[];
  ids bigint[];
  tags text[];
  payloads text[];
  tag_changes boolean[];
  previous_tags text[];
  last_position bigint;
BEGIN
  IF TG_OP = 'INSERT' THEN
    SELECT array_agg('${PLANT_CREATED}'::text ORDER BY n.id), array_agg(n.id ORDER BY n.id),
      array_agg(n.tag ORDER BY n.id), array_agg(${plantJsonSql('postgres', 'n')} ORDER BY n.id)
      INTO types, ids, tags, payloads FROM new_rows n;
  ELSIF TG_OP = 'UPDATE' THEN
    SELECT array_agg('${PLANT_UPDATED}'::text ORDER BY n.id), array_agg(n.id ORDER BY n.id),
      array_agg(n.tag ORDER BY n.id), array_agg(${plantJsonSql('postgres', 'n')} ORDER BY n.id),
      array_agg(o.tag IS DISTINCT FROM n.tag ORDER BY n.id),
      array_agg(CASE WHEN o.tag IS DISTINCT FROM n.tag THEN o.tag END ORDER BY n.id)
      INTO types, ids, tags, payloads, tag_changes, previous_tags
      FROM new_rows n JOIN old_rows o ON o.id = n.id WHERE ${plantsDifferSql('postgres', 'o', 'n')};
  ELSE
    SELECT array_agg('${PLANT_DELETED}'::text ORDER BY o.id), array_agg(o.id ORDER BY o.id),
      array_agg(o.tag ORDER BY o.id), array_agg(${deletedPlantJsonSql('o')} ORDER BY o.id)
      INTO types, ids, tags, payloads FROM old_rows o;
  END IF;
  IF coalesce(cardinality(ids), 0) = 0 THEN
    RETURN NULL;
  END IF;
  UPDATE plant_change_counter SET last = last + cardinality(ids) RETURNING last INTO last_position;
  -- unnest pads the arrays a create or a delete leaves NULL with NULLs.
  INSERT INTO plant_changes (position, type, plant_id, tag, payload, tag_changed, previous_tag)
    SELECT last_position - cardinality(ids) + c.k, c.type, c.plant_id, c.tag, c.payload,
      coalesce(c.tag_changed, false), c.previous_tag
    FROM unnest(types, ids, tags, payloads, tag_changes, previous_tags) WITH ORDINALITY
      AS c(type, plant_id, tag, payload, tag_changed, previous_tag, k);
  PERFORM pg_notify('plant_changes', last_position::text);
  RETURN NULL;
END `;

/** SET search_path FROM CURRENT: the function finds this schema's tables whatever the search_path of a writing session.
 * */
const CHANGE_LOG: Routine = {
  signature: 'plant_changes_log()',
  body: CHANGE_LOG_BODY,
  create:
    'CREATE OR REPLACE FUNCTION plant_changes_log() RETURNS trigger LANGUAGE plpgsql SET search_path FROM CURRENT ' +
    `AS $$${CHANGE_LOG_BODY}$$`,
};

export const POSTGRES_ROUTINES: readonly Routine[] = [CHANGE_LOG];

/** Installs every routine whose stored body is not this code's; returns the signatures it replaced. */
export async function applyRoutines(
  client: pg.ClientBase,
  routines: readonly Routine[] = POSTGRES_ROUTINES,
): Promise<string[]> {
  const replaced: string[] = [];
  for (const routine of routines) {
    const { rows } = await client.query<{ body: string | null }>(
      'SELECT (SELECT prosrc FROM pg_proc WHERE oid = to_regprocedure($1)) AS body',
      [routine.signature],
    );
    if (rows[0]?.body === routine.body) continue;
    await client.query(routine.create);
    replaced.push(routine.signature);
  }
  return replaced;
}
