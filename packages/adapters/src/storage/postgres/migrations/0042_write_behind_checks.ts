/**
 * Issue 24: a unit of work's deferred writes go as one statement (WriteBehind.ts), with no BEGIN
 * when nothing else is sent. The writes whose outcome matters (a versioned update found its row at
 * the expected version, an order's insert was not refused by its reference claim, 0027) are checked
 * inside that statement, so that a miss fails it, and a failed statement has written nothing.
 */
export const CHECK_FUNCTION = "tender_written"

/** SQLSTATE of a missed write: class "TD" is Tender's own; the message names the write's index. */
export const MISSED_WRITE = "TDW01"

export const statements = [
  `CREATE OR REPLACE FUNCTION ${CHECK_FUNCTION}(written bigint, write_index integer) RETURNS integer
    LANGUAGE plpgsql AS $$
    BEGIN
      IF written <> 1 THEN
        RAISE EXCEPTION 'write % of a unit of work wrote % rows, not 1', write_index, written USING ERRCODE = '${MISSED_WRITE}';
      END IF;
      RETURN 1;
    END $$`
]
