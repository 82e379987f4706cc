/**
 * contract.md, Idempotency: orders of every kind (direct payments, transfers, and checkout sessions
 * with their orders) share one reference space per account. `order_references` holds each claimed
 * reference once per account, with who holds it: `order` (a direct payment or a transfer: nobody
 * else may use it) or `sessions` (checkout sessions, which reuse it among themselves once the newest
 * ended; the partial unique index of 0005 still decides between sessions).
 *
 * The claim is a trigger on `orders`, not a statement of the repository's: one statement per insert
 * as before, for every writer, race-proof across processes (the primary key waits for a racing
 * claim to commit or roll back). An insert whose claim is refused is skipped (the trigger returns
 * NULL): `INSERT … RETURNING id` returns nothing, which the repository answers as a duplicate,
 * leaving the transaction usable as `ON CONFLICT DO NOTHING` did. A checkout order's claim of a
 * `sessions` reference updates the row in place, so racing session creates take its row lock in turn.
 *
 * Existing data: references of direct payments and transfers are filled first (they belong to them,
 * even where an old session shares one), then those only sessions used; duplicates from before this
 * rule are kept as they are (ON CONFLICT DO NOTHING), never failing the migration.
 *
 * Also: a direct payment's request hash and retry window (a create answered 502 awaits the same
 * request again, contract.md, Idempotency), and the index of the worker that fails orders whose
 * window passed.
 */
export const statements = [
  `CREATE TABLE order_references (
    account_id text NOT NULL REFERENCES accounts (id),
    merchant_reference text NOT NULL,
    holder text NOT NULL CHECK (holder IN ('order', 'sessions')),
    PRIMARY KEY (account_id, merchant_reference)
  )`,
  `INSERT INTO order_references (account_id, merchant_reference, holder)
    SELECT account_id, merchant_reference, 'order' FROM orders WHERE subtype <> 'checkout'
    ON CONFLICT DO NOTHING`,
  `INSERT INTO order_references (account_id, merchant_reference, holder)
    SELECT account_id, merchant_reference, 'sessions' FROM orders WHERE subtype = 'checkout'
    ON CONFLICT DO NOTHING`,
  `CREATE FUNCTION orders_claim_reference() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO order_references AS r (account_id, merchant_reference, holder)
        VALUES (NEW.account_id, NEW.merchant_reference, CASE WHEN NEW.subtype = 'checkout' THEN 'sessions' ELSE 'order' END)
        ON CONFLICT (account_id, merchant_reference) DO UPDATE SET holder = r.holder
          WHERE r.holder = 'sessions' AND EXCLUDED.holder = 'sessions';
      IF NOT FOUND THEN
        RETURN NULL;
      END IF;
      RETURN NEW;
    END
  $$`,
  `CREATE TRIGGER orders_claim_reference BEFORE INSERT ON orders
    FOR EACH ROW EXECUTE FUNCTION orders_claim_reference()`,
  // Superseded by order_references (0010's rule, direct payments and transfers among themselves).
  `DROP INDEX orders_merchant_reference_key`,
  `ALTER TABLE orders ADD COLUMN request_hash text`,
  `ALTER TABLE orders ADD COLUMN retry_until timestamptz`,
  `CREATE INDEX orders_retry_until_idx ON orders (retry_until, id) WHERE retry_until IS NOT NULL`
]
