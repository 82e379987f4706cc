/**
 * The vault's encryption, one home for both storage kinds: AES-256-GCM with a random 12-byte IV per
 * card. The additional authenticated data binds a ciphertext to its account and token, so a sealed
 * number copied onto another row (or another account) fails to open instead of revealing.
 */
import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto"
import { Context, Effect, Layer } from "effect"

/** What the vault stores in place of a card number. */
export interface SealedNumber {
  readonly iv: Uint8Array
  readonly ciphertext: Uint8Array
  readonly tag: Uint8Array
}

const ALGORITHM = "aes-256-gcm"
const IV_BYTES = 12
export const KEY_BYTES = 32

const aad = (accountId: string, token: string) => Buffer.from(`${accountId}\u0000${token}`, "utf8")

export class CardCipher extends Context.Service<CardCipher, {
  seal(accountId: string, token: string, number: string): Effect.Effect<SealedNumber>
  /** Dies when the ciphertext was tampered with or sealed for another row: never an expected case. */
  open(accountId: string, token: string, sealed: SealedNumber): Effect.Effect<string>
}>()("@tender/adapters/CardCipher") {
  static readonly make = (key: Uint8Array): CardCipher["Service"] => {
    if (key.length !== KEY_BYTES) throw new RangeError(`The vault key must be ${KEY_BYTES} bytes`)
    return CardCipher.of({
      seal: (accountId, token, number) =>
        Effect.sync(() => {
          const iv = randomBytes(IV_BYTES)
          const cipher = createCipheriv(ALGORITHM, key, iv).setAAD(aad(accountId, token))
          const ciphertext = Buffer.concat([cipher.update(number, "utf8"), cipher.final()])
          return { iv, ciphertext, tag: cipher.getAuthTag() }
        }),
      open: (accountId, token, sealed) =>
        Effect.sync(() => {
          const decipher = createDecipheriv(ALGORITHM, key, sealed.iv).setAAD(aad(accountId, token))
          decipher.setAuthTag(sealed.tag)
          return Buffer.concat([decipher.update(sealed.ciphertext), decipher.final()]).toString("utf8")
        })
    })
  }

  static readonly layer = <E, R>(key: Effect.Effect<Uint8Array, E, R>): Layer.Layer<CardCipher, E, R> =>
    Layer.effect(CardCipher, Effect.map(key, CardCipher.make))
}

/** A fresh random key: memory storage, whose vault dies with the process anyway. */
export const randomKey: Effect.Effect<Uint8Array> = Effect.sync(() => randomBytes(KEY_BYTES))
