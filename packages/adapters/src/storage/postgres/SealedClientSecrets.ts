/**
 * Client secrets at rest (contract.md, Secrets at rest: "sealed under the vault key where a read must
 * show them again"). A payment's, a card transfer's or a checkout session's `next_action` carries the
 * client secret of its card form, and reads show it again (the transfer's GET, the session's, the
 * hosted page, the payment snapshot); the `client_secrets` table keeps only its hash, for checking.
 * So in the `next_action` columns the secret is stored sealed (VaultCipher, AES-256-GCM), bound to the
 * account and the row (a sealed secret copied onto another row or account does not open), and the
 * repositories' row codecs open it on every read: the domain only ever sees the secret in clear.
 */
import { Effect, Schema, SchemaGetter } from "effect"
import type { Sealed, VaultCipher } from "../../crypto/VaultCipher.ts"

const PREFIX = "sealed.v1."

/** The AAD's row part: the row, and which of its values (none other is sealed under this name). */
const sealedFor = (rowId: string) => `${rowId}#next_action.client_secret`

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64url")

export const isSealed = (value: string) => value.startsWith(PREFIX)

/** `sealed.v1.<iv>.<tag>.<ciphertext>`, each base64url: a JSON string, so the jsonb column keeps its shape. */
export const seal = (cipher: VaultCipher["Service"], accountId: string, rowId: string, secret: string): Effect.Effect<string> =>
  Effect.map(cipher.seal(accountId, sealedFor(rowId), secret), (s) => `${PREFIX}${b64(s.iv)}.${b64(s.tag)}.${b64(s.ciphertext)}`)

/** Dies on anything but a value `seal` wrote for this row (tampered, moved, or a cut tag: VaultCipher). */
export const open = (cipher: VaultCipher["Service"], accountId: string, rowId: string, value: string): Effect.Effect<string> => {
  const parts = value.slice(PREFIX.length).split(".")
  if (parts.length !== 3) return Effect.die(new Error(`A sealed client secret of ${rowId} is malformed`))
  const [iv, tag, ciphertext] = parts.map((p) => Buffer.from(p, "base64url"))
  const sealed: Sealed = { iv, tag, ciphertext }
  return cipher.open(accountId, sealedFor(rowId), sealed)
}

interface WithAction {
  readonly id: string
  readonly account_id: string
  readonly next_action: { readonly client_secret?: string | undefined } | null
}

const mapSecret = <E extends WithAction>(row: E, f: (secret: string) => Effect.Effect<string>): Effect.Effect<E> => {
  const secret = row.next_action?.client_secret
  if (secret === undefined) return Effect.succeed(row)
  return Effect.map(f(secret), (client_secret) => ({ ...row, next_action: { ...row.next_action, client_secret } }))
}

/**
 * `Row` with its `next_action.client_secret` sealed in the encoded row and opened in the decoded one.
 * A clear secret read back (written by a process older than migration 0030, which seals what was
 * there) is shown as it is; every write seals.
 */
export const sealingClientSecrets = <T, E extends WithAction>(cipher: VaultCipher["Service"], Row: Schema.Codec<T, E>): Schema.Codec<T, E> =>
  Schema.toEncoded(Row).pipe(Schema.decodeTo(Row, {
    decode: SchemaGetter.transformEffect((row: E) =>
      mapSecret(row, (value) => isSealed(value) ? open(cipher, row.account_id, row.id, value) : Effect.succeed(value))
    ),
    encode: SchemaGetter.transformEffect((row: E) =>
      mapSecret(row, (value) => isSealed(value) ? Effect.succeed(value) : seal(cipher, row.account_id, row.id, value))
    )
  }))
