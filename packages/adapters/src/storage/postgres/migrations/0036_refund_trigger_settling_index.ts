/**
 * Issue 21, review. Two repairs of earlier migrations (released ones are never edited):
 *
 * 1. Orders refunded beyond what arrived before 0028 could take no update at all: 0028 left its
 *    CHECK `NOT VALID` over them, and PostgreSQL checks a CHECK on every row an UPDATE writes,
 *    whatever columns change, so a capture, a settlement or a status change of such an order failed
 *    as a defect and was retried for ever. The bound becomes a trigger that checks it only where it
 *    can newly be broken: an insert, and an update that changes one of its columns (a refund, an
 *    accepted crypto amount). Such an order takes every other update, and no further refund until an
 *    operator corrects it (docs/decisions.md, "Refunds within what arrived: orders past the bound";
 *    0028's warning names them). A refused write fails as the CHECK did: `check_violation`, the
 *    constraint's name, a defect to the repository.
 * 2. 0033 was edited after some development databases had applied it (its index predicate widened to
 *    old-version `processing` queued refunds, payouts and transfers): those kept the old predicate,
 *    which the settlement poll's WHERE no longer matches, so every poll scanned. The index is
 *    recreated with 0033's own statement (a no-op change where it was already so).
 */
import { CHECK } from "./0028_refunds_within_arrived.ts"
import { SETTLING_INDEX } from "./0033_settlement_backoff.ts"

export const statements = [
  `ALTER TABLE orders DROP CONSTRAINT IF EXISTS ${CHECK}`,
  // The repository's UPDATE sets every column, so `UPDATE OF` alone would fire on each: the
  // function compares the bound's columns with the row before.
  `CREATE FUNCTION ${CHECK}() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF TG_OP = 'UPDATE' AND NEW.refunded_amount IS NOT DISTINCT FROM OLD.refunded_amount
      AND NEW.received_amount IS NOT DISTINCT FROM OLD.received_amount AND NEW.amount IS NOT DISTINCT FROM OLD.amount THEN
      RETURN NEW;
    END IF;
    IF NOT (NEW.refunded_amount >= 0 AND NEW.refunded_amount <= coalesce(NEW.received_amount, NEW.amount)) THEN
      RAISE EXCEPTION 'order % refunded %, beyond the % that arrived', NEW.id, NEW.refunded_amount, coalesce(NEW.received_amount, NEW.amount)
        USING ERRCODE = 'check_violation', CONSTRAINT = '${CHECK}', TABLE = 'orders';
    END IF;
    RETURN NEW;
  END $$`,
  `CREATE TRIGGER ${CHECK} BEFORE INSERT OR UPDATE OF refunded_amount, received_amount, amount ON orders
    FOR EACH ROW EXECUTE FUNCTION ${CHECK}()`,
  `DROP INDEX IF EXISTS transactions_settling_idx`,
  SETTLING_INDEX
]
