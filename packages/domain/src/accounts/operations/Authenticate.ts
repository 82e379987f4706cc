/**
 * Operation: resolve a bearer key to its account (every keyed request). A secret key is looked up
 * by its hash; unknown or revoked → `invalid_api_key`, and a known publishable key on the server API
 * → `publishable_api_key_not_allowed` (docs/decisions.md, Accounts and keys). The browser SDK's
 * publishable key resolves by `authenticatePublishable`.
 */
import { Clock, Effect, Option } from "effect"
import { AccountRepo } from "../AccountPorts.ts"
import { InvalidApiKey, PublishableApiKeyNotAllowed } from "../../kernel/Errors.ts"
import { KeyHasher } from "../../kernel/Ports.ts"
import { isLive } from "../AccountKeys.ts"

const PUBLISHABLE = /^pk_(test|live)_/
const SECRET = /^sk_(test|live)_[0-9a-f]{16,128}$/

const unknownKey = () => new InvalidApiKey({ message: "The API key is unknown or revoked" })

export const authenticate = (key: string) =>
  Effect.gen(function*() {
    const repo = yield* AccountRepo
    if (PUBLISHABLE.test(key) && Option.isSome(yield* repo.findByPublishableKey(key))) {
      return yield* new PublishableApiKeyNotAllowed({
        message: "A publishable key cannot call the server API; use a secret key (sk_…)"
      })
    }
    if (!SECRET.test(key)) return yield* unknownKey()
    const hash = yield* (yield* KeyHasher).hash(key)
    const found = yield* repo.findBySecretKeyHash(hash)
    if (Option.isNone(found)) return yield* unknownKey()
    const entry = found.value.secret_keys.find((k) => k.hash === hash)
    if (entry === undefined || !isLive(entry, yield* Clock.currentTimeMillis)) return yield* unknownKey()
    return found.value
  })

export const authenticatePublishable = (key: string) =>
  Effect.gen(function*() {
    const found = PUBLISHABLE.test(key) ? yield* (yield* AccountRepo).findByPublishableKey(key) : Option.none()
    if (Option.isNone(found)) return yield* new InvalidApiKey({ message: "The publishable key is unknown: send Authorization: Bearer pk_…" })
    return found.value
  })
