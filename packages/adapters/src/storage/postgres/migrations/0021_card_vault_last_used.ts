/**
 * The vault's retention policy (`tender vault purge --unused-for 400d`): when each card was last
 * used (stored, or revealed for a provider call). Cards stored before this migration count as used
 * when they were stored. The index serves the purge's range delete.
 */
export const statements = [
  `ALTER TABLE card_vault ADD COLUMN last_used_at timestamptz`,
  `UPDATE card_vault SET last_used_at = created_at`,
  `ALTER TABLE card_vault ALTER COLUMN last_used_at SET NOT NULL`,
  `CREATE INDEX card_vault_last_used_at ON card_vault (last_used_at)`
]
