/**
 * A checkout order names its session, so its views can carry the spec's `additional_identifiers`
 * item of type `checkout`. No foreign key: the use case writes the order before its session in the
 * same unit of work, and the memory adapter (which passes the same contract) keeps none either.
 * Orders written before this migration get their session's id from `checkout_sessions.order_id`.
 */
export const statements = [
  `ALTER TABLE orders ADD COLUMN checkout_session_id text`,
  `UPDATE orders o SET checkout_session_id = s.id FROM checkout_sessions s WHERE s.order_id = o.id`
]
