/**
 * Where the vault key comes from (contract.md, Operator set-up): `TENDER_VAULT_KEY` when set; in
 * embedded mode a key generated once into `<dataDir>/vault.key`, so the CLI and the server of one
 * data directory decrypt each other's cards; an external database with no key is refused, since a
 * key generated on one machine would make the cards unreadable from every other.
 */
import { randomBytes } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { Effect } from "effect"
import type { TenderConfig } from "../Config.ts"
import { InfrastructureError, infrastructureError } from "../InfrastructureError.ts"
import { KEY_BYTES, randomKey } from "./VaultCipher.ts"

const HEX_KEY = new RegExp(`^[0-9a-fA-F]{${KEY_BYTES * 2}}$`)

const parse = (hex: string, source: string): Effect.Effect<Uint8Array, InfrastructureError> =>
  HEX_KEY.test(hex.trim())
    ? Effect.succeed(Buffer.from(hex.trim(), "hex"))
    : Effect.fail(new InfrastructureError({ message: `${source} must be ${KEY_BYTES * 2} hexadecimal characters` }))

/** Reads `<dataDir>/vault.key`, creating it (mode 0600) when absent; `wx` makes concurrent first runs agree. */
const fromDataDir = (dataDir: string): Effect.Effect<Uint8Array, InfrastructureError> => {
  const file = path.resolve(dataDir, "vault.key")
  return Effect.tryPromise({
    try: async () => {
      await fs.mkdir(path.dirname(file), { recursive: true })
      try {
        await fs.writeFile(file, `${randomBytes(KEY_BYTES).toString("hex")}\n`, { flag: "wx", mode: 0o600 })
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      }
      return fs.readFile(file, "utf8")
    },
    catch: infrastructureError(`could not read or create the vault key ${file}`)
  }).pipe(Effect.flatMap((hex) => parse(hex, file)))
}

export const resolve = (config: TenderConfig): Effect.Effect<Uint8Array, InfrastructureError> => {
  if (config.vaultKey !== undefined) return parse(config.vaultKey, "TENDER_VAULT_KEY")
  if (config.storage === "memory") return randomKey
  if (config.databaseUrl !== undefined) {
    return Effect.fail(
      new InfrastructureError({
        message: "TENDER_VAULT_KEY is required with DATABASE_URL (64 hex characters, e.g. `openssl rand -hex 32`); " +
          "every process that shares the database must use the same key"
      })
    )
  }
  return fromDataDir(config.dataDir)
}
