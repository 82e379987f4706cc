/** Client secrets in memory, keyed by the secret's hash as in PostgreSQL. */
import { type ClientSecretRecord, ClientSecretRepo } from "@tender/domain"
import { Effect, Layer, Option, Result } from "effect"
import { MemoryDatabase, type Reader, table } from "./MemoryDatabase.ts"

const secrets = table<string, ClientSecretRecord>("client_secrets")

/** Whether a card transfer's secret of the account recorded the token: `mintedForTransfer`, and what the vault reads with a card. */
export const collectedForTransfer = (r: Reader, accountId: string, token: string) =>
  [...r.get(secrets).values()].some((s) => s.kind === "transfer" && s.account_id === accountId && s.card_token === token)

export const layer: Layer.Layer<ClientSecretRepo, never, MemoryDatabase> = Layer.effect(
  ClientSecretRepo,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const change = (hash: string, f: (r: ClientSecretRecord) => ClientSecretRecord) =>
      db.write((w) => {
        const current = w.get(secrets).get(hash)
        if (current !== undefined) w.mutable(secrets).set(hash, f(current))
        return Result.succeed(undefined)
      })
    return ClientSecretRepo.of({
      insert: (record) =>
        db.write((w) => {
          // Secrets are random, so a clash is a bug upstream: a defect, as the primary key makes it in PostgreSQL.
          if (w.get(secrets).has(record.hash)) throw new Error("ClientSecretRepoMemory: duplicate client secret")
          w.mutable(secrets).set(record.hash, record)
          return Result.succeed(undefined)
        }),
      find: (hash) => db.read((r) => Option.fromNullishOr(r.get(secrets).get(hash))),
      expire: (hash, at) =>
        change(hash, (r) => ({ ...r, expires_at: Date.parse(at) < Date.parse(r.expires_at) ? at : r.expires_at, expired_by_helper: true })),
      markUsed: (hash, at) => change(hash, (r) => ({ ...r, used_at: r.used_at ?? at })),
      claimMint: (hash, max) =>
        db.write((w) => {
          const current = w.get(secrets).get(hash)
          if (current === undefined || current.token_mints >= max) return Result.succeed(false)
          w.mutable(secrets).set(hash, { ...current, token_mints: current.token_mints + 1 })
          return Result.succeed(true)
        }),
      recordToken: (hash, token) => change(hash, (r) => ({ ...r, card_token: token })),
      findTransferSecret: (orderId) =>
        db.read((r) => Option.fromNullishOr([...r.get(secrets).values()].find((s) => s.kind === "transfer" && s.order_id === orderId))),
      mintedForTransfer: (accountId, token) => db.read((r) => collectedForTransfer(r, accountId, token))
    })
  })
)
