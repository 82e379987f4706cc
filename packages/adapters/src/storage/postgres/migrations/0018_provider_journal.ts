/**
 * The provider adapters' journal (ProviderJournalPg): per channel scope, kind and key, one JSON
 * value. `created_at` is the first write; rows past the documented retention may be deleted by
 * age, which the created_at index serves.
 */
export const statements = [
  `CREATE TABLE provider_journal (
    scope text NOT NULL,
    kind text NOT NULL,
    key text NOT NULL,
    value jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (scope, kind, key)
  )`,
  `CREATE INDEX provider_journal_created_at ON provider_journal (created_at)`
]
