/**
 * Routing rules (issue 27): one row per version of an account's rules, or of one of its processing
 * profiles' (`profile` '' for the account's own: a primary key cannot hold NULL). `rules` is the
 * parsed RuleSet routing evaluates, `document` the file as the operator wrote it (`routing show`).
 * A version is never rewritten: `routing set` inserts the next one, so a payment's recorded version
 * always names the rules that decided it. Every server reads the current version on each payment
 * from its own notified cache (RoutingRulesRepoPg, on NotifiedCache.ts), which 0038's trigger
 * function keeps right: a new version committed by the CLI NOTIFYs `tender_routing_rules_changed`
 * with the account's id.
 */
export const statements = [
  `CREATE TABLE routing_rules (
    account_id text NOT NULL REFERENCES accounts (id),
    profile text COLLATE "C" NOT NULL,
    version integer NOT NULL CHECK (version > 0),
    rules jsonb NOT NULL,
    document jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (account_id, profile, version)
  )`,
  `CREATE TRIGGER tender_routing_rules_changed AFTER INSERT OR UPDATE OR DELETE ON routing_rules
    FOR EACH ROW EXECUTE FUNCTION tender_account_rows_changed('tender_routing_rules_changed')`
]
