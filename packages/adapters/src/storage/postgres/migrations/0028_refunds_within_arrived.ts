/**
 * Refunds never exceed what can be recorded (issue 21): an order's `refunded_amount` is bounded by
 * what arrived (Payment.arrivedAmount: the received amount of an accepted crypto under- or
 * overpayment, else the order's amount), the very bound the refund is decided on. Migration 0010
 * bounded it by the amount alone, so the refund of an accepted overpayment that the provider had
 * paid could not be recorded: a 500, and the refund pending for ever.
 *
 * 0010's check spans two columns, so PostgreSQL named it for the table (`orders_check`); it is
 * found by what it checks rather than by that name. The new one is added NOT VALID and then
 * validated where the existing rows allow: a migration must not fail on data it cannot fix, and
 * every row written from here on is checked either way.
 */
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
  `ALTER TABLE orders ADD CONSTRAINT orders_refunded_within_arrived
    CHECK (refunded_amount >= 0 AND refunded_amount <= coalesce(received_amount, amount)) NOT VALID`,
  `DO $$
  BEGIN
    ALTER TABLE orders VALIDATE CONSTRAINT orders_refunded_within_arrived;
  EXCEPTION WHEN check_violation THEN
    RAISE WARNING 'orders_refunded_within_arrived: existing orders refunded beyond what arrived; they stay as they are, new writes are checked';
  END $$`
]
