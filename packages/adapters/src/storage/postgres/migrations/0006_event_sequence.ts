/**
 * Events of one unit of work share their millisecond; an insertion sequence breaks the tie so an
 * order's events list in the order they were recorded (the envelope id is random and cannot).
 */
export const statements = [
  `ALTER TABLE events ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY`,
  `CREATE INDEX events_order_seq ON events (order_id, created_at, seq)`
]
