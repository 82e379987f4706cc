/**
 * Refunds never exceed what can be recorded (issue 21): an order's `refunded_amount` is bounded by
 * what arrived (Payment.arrivedAmount: the received amount of an accepted crypto under- or
 * overpayment, else the order's amount), the very bound the refund is decided on. Migration 0010
 * bounded it by the amount alone, so the refund of an accepted overpayment that the provider had
 * paid could not be recorded: a 500, and the refund pending for ever.
 *
 * 0010's check spans two columns, so PostgreSQL named it for the table (`orders_check`); it is
 * found by what it checks rather than by that name. The new one is added NOT VALID, then validated
 * when no existing row breaks it: a migration must not fail on data it cannot fix. When one does
 * (an underpaid order refunded beyond what arrived, which 0010 let through), the check stays NOT
 * VALID, and PostgreSQL still checks every row an UPDATE writes: such an order could take no update
 * at all. Migration 0036 replaced the check by a trigger that refuses only a write moving the
 * bound's columns past it. The step below logs their ids for the operator to correct
 * (docs/decisions.md, "Refunds within what arrived: orders past the bound"). (A `RAISE WARNING`
 * would reach only PostgreSQL's own log: the client drops notices.)
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export const CHECK = "orders_refunded_within_arrived"

const WITHIN = "refunded_amount >= 0 AND refunded_amount <= coalesce(received_amount, amount)"

export const statements = [
  `DO $$
  DECLARE
    found text;
  BEGIN
    FOR found IN
      SELECT conname FROM pg_constraint
      WHERE conrelid = 'orders'::regclass AND contype = 'c' AND pg_get_constraintdef(oid) LIKE '%refunded_amount%'
    LOOP
      EXECUTE format('ALTER TABLE orders DROP CONSTRAINT %I', found);
    END LOOP;
  END $$`,
  `ALTER TABLE orders ADD CONSTRAINT ${CHECK} CHECK (${WITHIN}) NOT VALID`
]

/** At most this many ids in the warning; the query in docs/decisions.md lists them all. */
const LISTED = 100

/** Validates the check when every row keeps it; otherwise names the orders that do not, for the operator. */
export const run = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const past = yield* sql.unsafe<{ readonly id: string }>(`SELECT id FROM orders WHERE NOT (${WITHIN}) ORDER BY id`)
  if (past.length === 0) return yield* Effect.asVoid(sql.unsafe(`ALTER TABLE orders VALIDATE CONSTRAINT ${CHECK}`))
  const ids = past.slice(0, LISTED).map((row) => row.id).join(", ")
  const more = past.length > LISTED ? ` and ${past.length - LISTED} more` : ""
  yield* Effect.logWarning(
    `${CHECK}: ${past.length} order(s) refunded beyond what arrived: ${ids}${more}. ` +
      "No further refund of them can be recorded until an operator corrects each (docs/decisions.md, \"Refunds within what arrived: orders past the bound\")."
  )
})
