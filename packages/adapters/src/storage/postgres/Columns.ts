/** Column codecs shared by the PostgreSQL repositories. */
import type { PgClient } from "@effect/sql-pg"
import { Schema, SchemaTransformation } from "effect"

/**
 * A `timestamptz` as the domain writes it (ISO 8601, UTC, milliseconds). Columns arrive as `Date`;
 * timestamps inside jsonb arrive as PostgreSQL's text form (`…+00:00`); both normalise the same way.
 */
export const Timestamp = Schema.Union([Schema.Date, Schema.String]).pipe(
  Schema.decodeTo(
    Schema.String,
    SchemaTransformation.transform({ decode: (value) => new Date(value).toISOString(), encode: (iso) => iso })
  )
)

/**
 * An amount in minor units, stored `bigint` (the driver reads it as a JS bigint). Decoding refuses
 * a value past `Number.MAX_SAFE_INTEGER` rather than round it.
 */
export const MinorUnits = Schema.BigInt.pipe(
  Schema.decodeTo(Schema.Int, SchemaTransformation.transform({ decode: Number, encode: BigInt }))
)

/** A nullable jsonb value: `null` must bind as SQL NULL, not as the JSON value `null`. */
export const jsonb = (sql: PgClient.PgClient) => (value: unknown) => value === null ? null : sql.json(value)
