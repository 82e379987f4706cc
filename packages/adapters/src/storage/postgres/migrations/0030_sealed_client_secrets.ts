/**
 * Issue 21, secrets at rest (contract.md: "Client secrets are never stored in clear … webhook event
 * payloads carry none"). Client secrets written in clear by earlier versions are sealed under the
 * vault key where reads show them again (the `next_action` of transactions, transfers and checkout
 * sessions: SealedClientSecrets.ts), and dropped from stored events. SQL has no vault key, so the
 * sealing is this migration's step in TypeScript, in the migration's own transaction: `tender
 * migrate` (and `serve`, which migrates) needs TENDER_VAULT_KEY with DATABASE_URL for it (README).
 */
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { VaultCipher } from "../../../crypto/VaultCipher.ts"
import { seal } from "../SealedClientSecrets.ts"

export const statements = [
  `UPDATE events SET data = data #- '{next_action,client_secret}' WHERE data->'next_action' ? 'client_secret'`
]

const TABLES = ["transactions", "transfers", "checkout_sessions"] as const

const BATCH = 500

/**
 * Seals every clear `next_action.client_secret`, a batch of rows at a time (the rows are the SDK's
 * card forms only), paged by id (each batch starts after the last id of the one before, so every
 * row is read once, not the whole table per batch).
 */
export const run = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const cipher = yield* VaultCipher
  for (const table of TABLES) {
    let after = ""
    for (;;) {
      const rows = yield* sql<{ readonly id: string; readonly account_id: string; readonly secret: string }>`
        SELECT id, account_id, next_action->>'client_secret' AS secret FROM ${sql(table)}
        WHERE id > ${after} AND next_action->>'client_secret' IS NOT NULL AND next_action->>'client_secret' NOT LIKE 'sealed.v1.%'
        ORDER BY id LIMIT ${BATCH}`
      if (rows.length === 0) break
      for (const row of rows) {
        const sealed = yield* seal(cipher, row.account_id, row.id, row.secret)
        yield* sql`UPDATE ${sql(table)} SET next_action = jsonb_set(next_action, '{client_secret}', to_jsonb(${sealed}::text))
          WHERE id = ${row.id}`
      }
      after = rows[rows.length - 1]!.id
    }
  }
})
