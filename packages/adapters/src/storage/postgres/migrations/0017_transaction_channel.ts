/**
 * The channel each transaction went to (null: the built-in sandbox), so that its follow-ups,
 * reconciliation and the provider's notifications reach that channel's provider again.
 */
export const statements = [
  `ALTER TABLE transactions ADD COLUMN channel_id text`
]
