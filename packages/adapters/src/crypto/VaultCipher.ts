/**
 * The vault key's encryption, one home for everything sealed under it (card numbers, provider
 * channels' credentials) in both storage kinds: AES-256-GCM with a random 12-byte IV per value.
 * The additional authenticated data binds a ciphertext to its account and row id (a card token
 * `tok_…`, a channel id `ch_…`: the prefix names the kind), so a sealed value copied onto another
 * row, another kind of row or another account fails to open instead of revealing.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"
import { Context, Effect, Layer } from "effect"

/** What the storage keeps in place of a secret. */
export interface Sealed {
  readonly iv: Uint8Array
  readonly ciphertext: Uint8Array
  readonly tag: Uint8Array
}

const ALGORITHM = "aes-256-gcm"
export const IV_BYTES = 12
/** GCM's full-length authentication tag: the only length `open` accepts (contract.md, Secrets at rest). */
export const TAG_BYTES = 16
export const KEY_BYTES = 32

const aad = (accountId: string, rowId: string) => Buffer.from(`${accountId}\u0000${rowId}`, "utf8")

export class VaultCipher extends Context.Service<VaultCipher, {
  seal(accountId: string, rowId: string, plaintext: string): Effect.Effect<Sealed>
  /**
   * Dies when the ciphertext was tampered with, sealed for another row, or carries a tag shorter than
   * 16 bytes (GCM would check a cut tag's first bytes only, so a forger would need 2^32 tries for 4):
   * never an expected case.
   */
  open(accountId: string, rowId: string, sealed: Sealed): Effect.Effect<string>
}>()("@tender/adapters/VaultCipher") {
  static readonly make = (key: Uint8Array): VaultCipher["Service"] => {
    if (key.length !== KEY_BYTES) throw new RangeError(`The vault key must be ${KEY_BYTES} bytes`)
    return VaultCipher.of({
      seal: (accountId, rowId, plaintext) =>
        Effect.sync(() => {
          const iv = randomBytes(IV_BYTES)
          const cipher = createCipheriv(ALGORITHM, key, iv).setAAD(aad(accountId, rowId))
          const ciphertext = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()])
          return { iv, ciphertext, tag: cipher.getAuthTag() }
        }),
      open: (accountId, rowId, sealed) =>
        Effect.sync(() => {
          // authTagLength makes Node refuse any other tag length; by default it takes 4 to 16 bytes.
          const decipher = createDecipheriv(ALGORITHM, key, sealed.iv, { authTagLength: TAG_BYTES }).setAAD(aad(accountId, rowId))
          decipher.setAuthTag(sealed.tag)
          return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString("utf8")
        })
    })
  }

  static readonly layer = <E, R>(key: Effect.Effect<Uint8Array, E, R>): Layer.Layer<VaultCipher, E, R> =>
    Layer.effect(VaultCipher, Effect.map(key, VaultCipher.make))
}

/** A fresh random key: memory storage, whose vault dies with the process anyway. */
export const randomKey: Effect.Effect<Uint8Array> = Effect.sync(() => randomBytes(KEY_BYTES))
