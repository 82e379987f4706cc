import { expect, layer } from "@effect/vitest"
import { AccountRepo, CardVault } from "@tender/domain"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import * as IdsRandom from "../src/crypto/IdsRandom.ts"
import * as KeyHasherSha256 from "../src/crypto/KeyHasherSha256.ts"
import { postgresStorage } from "../src/Infrastructure.ts"
import { sharedConfig } from "./PgTestDatabase.ts"
import { newAccount, storageContract } from "./StorageContract.ts"

const storage = Layer.unwrap(Effect.map(sharedConfig, postgresStorage)).pipe(
  Layer.provideMerge(Layer.merge(IdsRandom.layer, KeyHasherSha256.layer))
)

layer(storage, { excludeTestServices: true, timeout: "2 minutes" })("PostgreSQL storage", (it) => {
  storageContract(it)

  it.effect("the vault row holds the number sealed: neither the row nor the ciphertext contains it", () =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* AccountRepo
      const vault = yield* CardVault
      const { account } = yield* newAccount()
      yield* repo.insert(account)
      const number = "5555555555554444"
      const card = { account_id: account.id, number, brand: "mastercard", last4: "4444", bin: "55555555", exp_month: 1, exp_year: 2031, funding: "credit", holder_name: null } as const
      const first = yield* vault.store(card)
      const second = yield* vault.store(card)

      const rows = yield* sql<{ token: string; row: string; iv: number; tag: number; ciphertext: Uint8Array }>`
        SELECT token, row_to_json(v)::text AS row, length(number_iv) AS iv, length(number_tag) AS tag,
          number_ciphertext AS ciphertext
        FROM card_vault v WHERE token IN (${first.token}, ${second.token}) ORDER BY token`
      expect(rows).toHaveLength(2)
      for (const row of rows) {
        expect(row.row).not.toContain(number)
        expect(row.row).not.toContain(Buffer.from(number, "utf8").toString("hex"))
        expect(Buffer.from(row.ciphertext).toString("latin1")).not.toContain(number)
        expect(row.iv).toBe(12)
        expect(row.tag).toBe(16)
      }
      // A fresh IV per card: the same number never seals to the same bytes.
      expect(Buffer.from(rows[0].ciphertext).equals(Buffer.from(rows[1].ciphertext))).toBe(false)
      const columns = yield* sql<{ column_name: string }>`
        SELECT column_name FROM information_schema.columns WHERE table_name = 'card_vault'`
      expect(columns.map((c) => c.column_name)).not.toContain("number")
    }))
})
