/**
 * The way into the public API for the commands that act as a merchant would (`tender listen`,
 * `tender trigger`): where the server is and the account's credentials. They go through the API
 * (signed requests, verified answers) rather than the domain, so that what they show and make is
 * exactly what a merchant's integration sees (issue 25; docs/decisions.md, "The CLI in the public API").
 *
 * The server: `--api-url`, else `TENDER_API_URL`, else a `serve` process of this database (where the
 * servers listen, as webhook delivery reads it), else `http://127.0.0.1:8080`.
 * The credentials: `TENDER_SECRET_KEY` with `TENDER_SIGNING_SECRET`, else `--account ID` (the CLI,
 * which shares the database like every operator command, issues a secret key for that account that
 * expires after a day and is revoked when the command ends), else the only active test-mode account.
 */
import type { TenderConfig } from "@tender/adapters/Config"
import { signedFetch } from "@tender/client/Raw"
import { Context, Data, Duration, Effect, Layer, Option, type Scope } from "effect"
import type { Invocation } from "./Cli.ts"

/** Where the server is and an account's credentials, valid while the scope that acquired them is open. */
export interface ApiAccess {
  /** Scheme, host and port, no trailing slash: `http://127.0.0.1:8080`. */
  readonly baseUrl: string
  readonly accountId: string
  readonly mode: "test" | "live"
  readonly secretKey: string
  /** Signs the requests and verifies the answers. */
  readonly signingSecret: string
}

/** A failure of the way in (no server, no account, an unverified answer): one line for the operator. */
export class ApiAccessFailure extends Data.TaggedError("ApiAccessFailure")<{ readonly message: string }> {}

/** The flags every command through the API takes (declared apart, ApiAccessFlags.ts: a declaration loads them). */
export { flags } from "./ApiAccessFlags.ts"

export interface AccessInput {
  readonly account: Option.Option<string>
  readonly apiUrl: Option.Option<string>
}

/** A temporary key lives a day at most: long enough for a long `listen`, short enough to forget. */
const TEMPORARY_KEY_SECONDS = 24 * 3600
const DEFAULT_URL = "http://127.0.0.1:8080"

const fail = (message: string) => new ApiAccessFailure({ message })

const trimmed = (url: string) => url.replace(/\/+$/, "")

const validUrl = (url: string, from: string) =>
  Effect.try({
    try: () => {
      const parsed = new URL(url)
      if (parsed.protocol !== "http:" && parsed.protocol !== "https:") throw new Error("not http")
      return trimmed(parsed.origin + parsed.pathname)
    },
    catch: () => fail(`${from} is not an http(s) URL: ${url}`)
  })

/**
 * Resolves the server and the account's credentials. With `--account`, the temporary key is
 * revoked when the scope closes (an interrupted command included); one left by a killed process
 * stops working at its expiry.
 */
export const acquire = (input: AccessInput, invocation: Invocation): Effect.Effect<ApiAccess, ApiAccessFailure, Scope.Scope> =>
  Effect.gen(function*() {
    const envKey = process.env.TENDER_SECRET_KEY
    const envSecret = process.env.TENDER_SIGNING_SECRET
    const fromEnv = envKey !== undefined && envKey !== "" && Option.isNone(input.account)
    if (fromEnv && (envSecret === undefined || envSecret === "")) {
      return yield* fail("TENDER_SECRET_KEY is set without TENDER_SIGNING_SECRET: set both, or pass --account acct_…")
    }
    const explicitUrl = Option.isSome(input.apiUrl)
      ? Option.some(yield* validUrl(input.apiUrl.value, "--api-url"))
      : process.env.TENDER_API_URL !== undefined && process.env.TENDER_API_URL !== ""
      ? Option.some(yield* validUrl(process.env.TENDER_API_URL, "TENDER_API_URL"))
      : Option.none<string>()

    if (fromEnv) {
      const baseUrl = Option.getOrElse(explicitUrl, () => DEFAULT_URL)
      const reply = yield* send({ baseUrl, secretKey: envKey, signingSecret: envSecret! }, "GET", "/v1/webhook_endpoints")
      const mode = envKey.startsWith("sk_live_") ? "live" : "test"
      if (reply.status !== 200) return yield* fail(`the server at ${baseUrl} answered ${reply.status} to TENDER_SECRET_KEY: ${reply.json?.message ?? ""}`)
      // The key's account is not in any answer a merchant reads; the commands only show it.
      return { baseUrl, accountId: "(TENDER_SECRET_KEY's account)", mode, secretKey: envKey, signingSecret: envSecret! } satisfies ApiAccess
    }
    return yield* fromDatabase(input, invocation.config, explicitUrl)
  })

/** The account and a temporary key through the database the CLI shares with the server. */
const fromDatabase = (input: AccessInput, config: TenderConfig, explicitUrl: Option.Option<string>) =>
  Effect.gen(function*() {
    const [{ Accounts, ServerListeners, LISTENER_STALE_MS }, Services] = yield* Effect.promise(() =>
      Promise.all([import("@tender/domain"), import("./Services.ts")])
    )
    if (config.storage === "memory") {
      return yield* fail("with --storage memory the CLI shares no database with a server: set TENDER_SECRET_KEY and TENDER_SIGNING_SECRET")
    }
    // The services live as long as the command's scope, so that the key is revoked through them at its end.
    const context = yield* Layer.build(Services.layer(config)).pipe(
      Effect.mapError((e) => fail(`cannot open the database: ${messageOf(e)}`))
    )
    const service = Context.get(context, Accounts)

    const accountId = yield* Option.match(input.account, {
      onSome: (id) => Effect.succeed(id),
      onNone: () =>
        Effect.gen(function*() {
          const candidates = (yield* service.list()).filter((a) => a.mode === "test" && a.status === "active")
          if (candidates.length === 1) return candidates[0]!.id
          return yield* fail(
            candidates.length === 0
              ? "no active test-mode account: create one with `tender accounts create --name NAME`, or pass --account acct_…"
              : `${candidates.length} test-mode accounts: pass --account (${candidates.slice(0, 5).map((a) => a.id).join(", ")}${candidates.length > 5 ? ", …" : ""})`
          )
        })
    })
    const issued = yield* Effect.acquireRelease(
      service.issueTemporaryKey(accountId, TEMPORARY_KEY_SECONDS).pipe(
        Effect.mapError((e) => fail(e._tag === "AccountNotFound" ? `no account ${accountId}` : messageOf(e)))
      ),
      (key) => service.revokeKey(accountId, key.secret_key).pipe(Effect.ignore)
    )
    if (issued.account.status !== "active") return yield* fail(`account ${accountId} is ${issued.account.status}: activate it first`)

    const baseUrl = Option.isSome(explicitUrl) ? explicitUrl.value : yield* Effect.gen(function*() {
      const serving = yield* Context.get(context, ServerListeners).listening(LISTENER_STALE_MS)
      return serving.length > 0 ? `http://127.0.0.1:${serving[0]!.port}` : DEFAULT_URL
    })
    return {
      baseUrl,
      accountId,
      mode: issued.account.mode,
      secretKey: issued.secret_key,
      signingSecret: issued.account.signing_secret
    } satisfies ApiAccess
  })

const messageOf = (e: unknown) =>
  typeof e === "object" && e !== null && "message" in e && typeof e.message === "string" ? e.message : String(e)

export interface ApiReply {
  readonly status: number
  readonly json: any
  readonly headers: Headers
}

const send = (
  options: { readonly baseUrl: string; readonly secretKey: string; readonly signingSecret: string },
  method: string,
  pathWithQuery: string,
  body?: unknown,
  signal?: AbortSignal
): Effect.Effect<ApiReply, ApiAccessFailure> =>
  Effect.tryPromise({
    try: (abort) =>
      signedFetch(options, method, pathWithQuery, {
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        signal: signal ?? abort
      }),
    catch: (e) => fail(`cannot reach Tender at ${options.baseUrl} (${messageOf((e as any)?.cause ?? e)}): is \`tender serve\` running?`)
  }).pipe(Effect.flatMap((reply) =>
    // An answer whose signature does not verify is not read (as the typed client does).
    reply.verified
      ? Effect.succeed({ status: reply.status, json: reply.json, headers: reply.headers })
      : reply.status === 401
      // Tender signs no answer to a key it does not know: it has no secret to sign it with.
      ? Effect.fail(fail(`the server at ${options.baseUrl} does not know the secret key (401): wrong server or a revoked key`))
      : Effect.fail(fail(`the answer to ${method} ${pathWithQuery} (HTTP ${reply.status}) is not signed by the account: wrong server, or wrong signing secret`))
  ))

/**
 * Tender accepts a signed write once. Two CLI processes of one account (triggers run at once) may
 * send the very same bytes in the same second: the second is refused as a replay of the first, and
 * nothing of it applied, so it is signed again in a later second (as the refusal says to).
 */
const isReplayOfAnother = (reply: ApiReply) =>
  reply.status === 409 && typeof reply.json?.message === "string" && reply.json.message.startsWith("This signed request was already accepted")

/** A signed request through the public API; the answer's signature is verified before it is read. */
export const request = (access: ApiAccess, method: "GET" | "POST" | "DELETE", pathWithQuery: string, body?: unknown) => {
  const attempt = (tries: number): Effect.Effect<ApiReply, ApiAccessFailure> =>
    send(access, method, pathWithQuery, method === "POST" && body === undefined ? {} : body).pipe(
      Effect.flatMap((reply) =>
        isReplayOfAnother(reply) && tries < 5
          // Into the next second, with a jitter so that the two processes do not meet there again.
          ? Effect.sleep(Duration.millis(1000 - (Date.now() % 1000) + Math.floor(Math.random() * 200))).pipe(Effect.andThen(attempt(tries + 1)))
          : Effect.succeed(reply)
      )
    )
  return attempt(0)
}
