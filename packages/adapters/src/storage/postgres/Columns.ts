/** Column codecs shared by the PostgreSQL repositories. */
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
