/**
 * Events of one unit of work share their millisecond; an insertion sequence keeps an order's events
 * in the order they were recorded (the envelope id is random, so it cannot break the tie).
 */
export const statements = [
  `ALTER TABLE events ADD COLUMN seq bigint GENERATED ALWAYS AS IDENTITY`,
  `CREATE INDEX events_order_seq ON events (order_id, seq)`
]
