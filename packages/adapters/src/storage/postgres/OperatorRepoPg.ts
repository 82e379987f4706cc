/**
 * Console operators in PostgreSQL (table `operators`, migration 0046). The TOTP secret is sealed
 * under the vault key (VaultCipher), bound to the operator's id; every read opens it, so the domain
 * only sees it in clear. Names are unique (the unique index: Conflict); updates are versioned.
 */
import { PgClient } from "@effect/sql-pg"
import { type Operator, OperatorRepo } from "@tender/domain"
import { Effect, Layer } from "effect"
import type { SqlClient } from "effect/sql"
import { VaultCipher } from "../../crypto/VaultCipher.ts"
import { operatorNameTaken, staleWrite } from "../Conflicts.ts"

/** Operators belong to no account: the AAD's account part names the console instead. */
const SEALED_FOR = "console"
const sealedRow = (id: string) => `${id}#totp_secret`

interface Row {
  readonly id: string
  readonly name: string
  readonly role: Operator.OperatorRole
  readonly accounts: Operator.AccountGrant
  readonly status: Operator.OperatorStatus
  readonly password_hash: string | null
  readonly totp_secret_iv: Uint8Array
  readonly totp_secret_ciphertext: Uint8Array
  readonly totp_secret_tag: Uint8Array
  readonly last_totp_step: string | number | null
  readonly enrolment_token_hash: string | null
  readonly enrolment_expires_at: Date | null
  readonly failed_logins: number
  readonly lockouts: number
  readonly locked_until: Date | null
  readonly created_at: Date
  readonly updated_at: Date
  readonly version: number
}

const iso = (date: Date | null) => (date === null ? null : date.toISOString())

export const layer: Layer.Layer<OperatorRepo, never, SqlClient.SqlClient | PgClient.PgClient | VaultCipher> = Layer.effect(
  OperatorRepo,
  Effect.gen(function*() {
    const sql = yield* PgClient.PgClient
    const cipher = yield* VaultCipher

    const recordOf = (row: Row): Effect.Effect<Operator.OperatorRecord> =>
      Effect.map(
        cipher.open(SEALED_FOR, sealedRow(row.id), { iv: row.totp_secret_iv, ciphertext: row.totp_secret_ciphertext, tag: row.totp_secret_tag }),
        (totp_secret) => ({
          id: row.id,
          name: row.name,
          role: row.role,
          accounts: row.accounts,
          status: row.status,
          password_hash: row.password_hash,
          totp_secret,
          // bigint arrives as text from the driver; steps are ~56 million, well inside a double.
          last_totp_step: row.last_totp_step === null ? null : Number(row.last_totp_step),
          enrolment_token_hash: row.enrolment_token_hash,
          enrolment_expires_at: iso(row.enrolment_expires_at),
          failed_logins: row.failed_logins,
          lockouts: row.lockouts,
          locked_until: iso(row.locked_until),
          created_at: row.created_at.toISOString(),
          updated_at: row.updated_at.toISOString(),
          version: row.version
        })
      )

    const columnsOf = (operator: Operator.OperatorRecord) =>
      Effect.map(cipher.seal(SEALED_FOR, sealedRow(operator.id), operator.totp_secret), (sealed) => ({
        id: operator.id,
        name: operator.name,
        role: operator.role,
        accounts: sql.json(operator.accounts),
        status: operator.status,
        password_hash: operator.password_hash,
        totp_secret_iv: sealed.iv,
        totp_secret_ciphertext: sealed.ciphertext,
        totp_secret_tag: sealed.tag,
        last_totp_step: operator.last_totp_step,
        enrolment_token_hash: operator.enrolment_token_hash,
        enrolment_expires_at: operator.enrolment_expires_at,
        failed_logins: operator.failed_logins,
        lockouts: operator.lockouts,
        locked_until: operator.locked_until,
        created_at: operator.created_at,
        updated_at: operator.updated_at,
        version: operator.version
      }))

    const one = (rows: ReadonlyArray<Row>) =>
      rows.length === 0 ? Effect.succeedNone : Effect.asSome(recordOf(rows[0]!))

    return OperatorRepo.of({
      insert: (operator) =>
        Effect.gen(function*() {
          const columns = yield* columnsOf(operator)
          const inserted = yield* sql<{ readonly id: string }>`INSERT INTO operators ${sql.insert(columns)}
            ON CONFLICT (name) DO NOTHING RETURNING id`.pipe(Effect.orDie)
          if (inserted.length === 0) return yield* operatorNameTaken(operator.name)
        }).pipe(Effect.withSpan("OperatorRepoPg.insert")),
      findById: (id) => Effect.flatMap(Effect.orDie(sql<Row>`SELECT * FROM operators WHERE id = ${id}`), one),
      findByName: (name) => Effect.flatMap(Effect.orDie(sql<Row>`SELECT * FROM operators WHERE name = ${name}`), one),
      findByEnrolmentToken: (tokenHash) =>
        Effect.flatMap(Effect.orDie(sql<Row>`SELECT * FROM operators WHERE enrolment_token_hash = ${tokenHash}`), one),
      update: (operator) =>
        Effect.gen(function*() {
          const columns = yield* columnsOf(operator)
          const written = yield* sql<{ readonly id: string }>`UPDATE operators SET ${sql.update(columns, ["id"])}
            WHERE id = ${operator.id} AND version = ${operator.version - 1} RETURNING id`.pipe(Effect.orDie)
          if (written.length === 0) return yield* staleWrite("Operator", operator.id, operator.version - 1)
        }).pipe(Effect.withSpan("OperatorRepoPg.update")),
      list: () =>
        Effect.flatMap(
          Effect.orDie(sql<Row>`SELECT * FROM operators ORDER BY name COLLATE "C"`),
          (rows) => Effect.forEach(rows, recordOf)
        )
    })
  })
)

