/**
 * The way into the public API for the commands that act as a merchant would (`tender listen`,
 * `tender trigger`): where the server is and the account's credentials. They go through the API
 * (signed requests, verified answers) rather than the domain, so that what they show and make is
 * exactly what a merchant's integration sees (issue 25; docs/decisions.md, "The CLI in the public API").
 *
 * The server: `--api-url`, else `TENDER_API_URL`, else a `serve` process of this database on this
 * machine (where the servers listen, as webhook delivery reads it), else `http://127.0.0.1:8080`.
 * The credentials: `TENDER_SECRET_KEY` with `TENDER_SIGNING_SECRET`, else `--account ID` (the CLI,
 * which shares the database like every operator command, issues a secret key for that account that
 * expires after a day and is revoked when the command ends), else the only active test-mode account.
 * A temporary key is renewed before it expires and when the server refuses it (the account's keys
 * rolled): a long `tender listen` outlives its keys. A TENDER_SECRET_KEY refused is the operator's to
 * replace: the request fails with `unauthorized`.
 */
import type { TenderConfig } from "@tender/adapters/Config"
import { causeMessage } from "@tender/adapters/InfrastructureError"
import { ALREADY_ACCEPTED } from "@tender/api/Signature"
import { signedFetch } from "@tender/client/Raw"
import { Context, Data, Duration, Effect, Layer, Option, type Scope, Semaphore } from "effect"
import type { Invocation } from "./Cli.ts"

/** Where the server is and an account's credentials, valid while the scope that acquired them is open. */
export interface ApiAccess {
  /** Scheme, host and port, no trailing slash: `http://127.0.0.1:8080`. */
  readonly baseUrl: string
  readonly accountId: string
  readonly mode: "test" | "live"
  /** The secret key requests carry now (with `--account`, the temporary key of the moment: `renew`). */
  readonly secretKey: string
  /** Signs the requests and verifies the answers. */
  readonly signingSecret: string
  /**
   * With `--account`: issues a fresh temporary key and revokes `refused` if still live, unless the key
   * was renewed since `refused` was current (so that concurrent refusals renew once). `None` with
   * TENDER_SECRET_KEY, which the CLI cannot replace.
   */
  readonly renew: Option.Option<(refused: string) => Effect.Effect<void, ApiAccessFailure>>
}

/**
 * A failure of the way in (no server, no account, an unverified answer): one line for the operator.
 * `unauthorized`: the server does not know the key (401), and renewing it did not help or was not possible.
 */
export class ApiAccessFailure extends Data.TaggedError("ApiAccessFailure")<{
  readonly message: string
  readonly unauthorized?: boolean
}> {}

/** The flags every command through the API takes (declared apart, ApiAccessFlags.ts: a declaration loads them). */
export { flags } from "./ApiAccessFlags.ts"

export interface AccessInput<E = never> {
  readonly account: Option.Option<string>
  readonly apiUrl: Option.Option<string>
  /**
   * The command's own refusal of an account, decided before any key is issued or request sent
   * (`trigger` refuses a live-mode account): none, or the failure to end with.
   */
  readonly refuse?: ((account: { readonly id: string; readonly mode: "test" | "live" }) => Option.Option<E>) | undefined
}

/**
 * A temporary key lives a day at most: short enough to forget one a killed process left behind. A
 * command still running halfway through its key's life renews it (a long `listen`).
 */
const TEMPORARY_KEY_SECONDS = 24 * 3600
const RENEW_AFTER = Duration.seconds(TEMPORARY_KEY_SECONDS / 2)
const DEFAULT_URL = "http://127.0.0.1:8080"

const fail = (message: string) => new ApiAccessFailure({ message })

const trimmed = (url: string) => url.replace(/\/+$/, "")

/** The URL if it is an http(s) one (the server's, `--forward-to`'s), else undefined. */
export const httpUrl = (url: string): URL | undefined => {
  const parsed = URL.parse(url)
  return parsed !== null && (parsed.protocol === "http:" || parsed.protocol === "https:") ? parsed : undefined
}

const validUrl = (url: string, from: string) => {
  const parsed = httpUrl(url)
  return parsed === undefined ? Effect.fail(fail(`${from} is not an http(s) URL: ${url}`)) : Effect.succeed(trimmed(parsed.origin + parsed.pathname))
}

/**
 * Resolves the server and the account's credentials. With `--account`, the temporary key is
 * revoked when the scope closes (an interrupted command included); one left by a killed process
 * stops working at its expiry.
 */
export const acquire = <E = never>(input: AccessInput<E>, invocation: Invocation): Effect.Effect<ApiAccess, ApiAccessFailure | E, Scope.Scope> =>
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
      const mode = envKey.startsWith("sk_live_") ? "live" : "test"
      const refused = input.refuse?.({ id: "(TENDER_SECRET_KEY's account)", mode }) ?? Option.none()
      if (Option.isSome(refused)) return yield* Effect.fail(refused.value)
      const reply = yield* send({ baseUrl, secretKey: envKey, signingSecret: envSecret! }, "GET", "/v1/webhook_endpoints")
      if (reply.status !== 200) return yield* fail(`the server at ${baseUrl} answered ${reply.status} to TENDER_SECRET_KEY: ${reply.json?.message ?? ""}`)
      // The key's account is not in any answer a merchant reads; the commands only show it.
      return { baseUrl, accountId: "(TENDER_SECRET_KEY's account)", mode, secretKey: envKey, signingSecret: envSecret!, renew: Option.none() } satisfies ApiAccess
    }
    return yield* fromDatabase(input, invocation.config, explicitUrl)
  })

const isLoopback = (address: string) => address === "::1" || address.startsWith("127.")

/** The account and a temporary key through the database the CLI shares with the server. */
const fromDatabase = <E>(input: AccessInput<E>, config: TenderConfig, explicitUrl: Option.Option<string>) =>
  Effect.gen(function*() {
    const [{ Accounts, MachineAddresses, ServerListeners, LISTENER_STALE_MS }, Services] = yield* Effect.promise(() =>
      Promise.all([import("@tender/domain"), import("./Services.ts")])
    )
    if (config.storage === "memory") {
      return yield* fail("with --storage memory the CLI shares no database with a server: set TENDER_SECRET_KEY and TENDER_SIGNING_SECRET")
    }
    // The services live as long as the command's scope, so that the key is revoked through them at its end.
    const context = yield* Layer.build(Services.layer(config)).pipe(
      Effect.mapError((e) => fail(`cannot open the database: ${causeMessage(e)}`))
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
    const account = yield* service.get(accountId).pipe(Effect.mapError(() => fail(`no account ${accountId}`)))
    const refused = input.refuse?.({ id: account.id, mode: account.mode }) ?? Option.none()
    if (Option.isSome(refused)) return yield* Effect.fail(refused.value)
    if (account.status !== "active") return yield* fail(`account ${accountId} is ${account.status}: activate it first`)
    const issue = service.issueTemporaryKey(accountId, TEMPORARY_KEY_SECONDS).pipe(
      Effect.mapError((e) => fail(e._tag === "AccountNotFound" ? `no account ${accountId}` : causeMessage(e))),
      Effect.flatMap((issued) =>
        issued.account.status === "active"
          ? Effect.succeed(issued)
          // The key is not used: revoked at once rather than left to its expiry.
          : Effect.andThen(service.revokeKey(accountId, issued.secret_key).pipe(Effect.ignore), Effect.fail(fail(`account ${accountId} is ${issued.account.status}: activate it first`)))
      )
    )
    // The key of the moment, revoked when the scope closes (whichever it is then).
    const current = yield* Effect.acquireRelease(
      Effect.map(issue, (issued) => ({ secretKey: issued.secret_key, signingSecret: issued.account.signing_secret, mode: issued.account.mode })),
      (held) => service.revokeKey(accountId, held.secretKey).pipe(Effect.ignore)
    )
    const renewing = yield* Semaphore.make(1)
    const renew = (refused: string) =>
      renewing.withPermit(Effect.gen(function*() {
        if (current.secretKey !== refused) return // renewed meanwhile
        const issued = yield* issue
        current.secretKey = issued.secret_key
        // The signing secret may have been rolled too (an operator's `signing-secret roll`).
        current.signingSecret = issued.account.signing_secret
        yield* service.revokeKey(accountId, refused).pipe(Effect.ignore)
      }))
    // Renewed halfway through its life, so that it never expires under a running command.
    yield* Effect.forkScoped(
      Effect.suspend(() => renew(current.secretKey)).pipe(Effect.ignore, Effect.delay(RENEW_AFTER), Effect.forever)
    )

    const baseUrl = Option.isSome(explicitUrl) ? explicitUrl.value : yield* Effect.gen(function*() {
      const serving = yield* Context.get(context, ServerListeners).listening(LISTENER_STALE_MS)
      // Only a server on this machine: the database may be shared by servers elsewhere, and the key
      // must not go to whatever listens on their port here. Loopback is every machine's, so it
      // says nothing.
      const own = new Set((yield* Context.get(context, MachineAddresses).addresses).filter((a) => !isLoopback(a)))
      // (A machine with no other address has no network to share the database over.)
      const here = own.size === 0 ? serving[0] : serving.find((listener) => listener.addresses.some((a) => own.has(a)))
      return here !== undefined ? `http://127.0.0.1:${here.port}` : DEFAULT_URL
    })
    return {
      baseUrl,
      accountId,
      mode: current.mode,
      get secretKey() {
        return current.secretKey
      },
      get signingSecret() {
        return current.signingSecret
      },
      renew: Option.some(renew)
    } satisfies ApiAccess
  })

export interface ApiReply {
  readonly status: number
  readonly json: any
  readonly headers: Headers
}

const send = (
  options: { readonly baseUrl: string; readonly secretKey: string; readonly signingSecret: string },
  method: string,
  pathWithQuery: string,
  body?: unknown
): Effect.Effect<ApiReply, ApiAccessFailure> =>
  Effect.tryPromise({
    try: (signal) => signedFetch(options, method, pathWithQuery, { ...(body !== undefined ? { body: JSON.stringify(body) } : {}), signal }),
    catch: (e) => fail(`cannot reach Tender at ${options.baseUrl} (${causeMessage(e)}): is \`tender serve\` running?`)
  }).pipe(Effect.flatMap((reply) =>
    reply.status === 401
      // Tender signs no answer to a key it does not know: it has no secret to sign it with.
      ? Effect.fail(new ApiAccessFailure({ message: `the server at ${options.baseUrl} does not know the secret key (401): wrong server or a revoked key`, unauthorized: true }))
      // An answer whose signature does not verify is not read (as the typed client does).
      : reply.verified
      ? Effect.succeed({ status: reply.status, json: reply.json, headers: reply.headers })
      : Effect.fail(fail(`the answer to ${method} ${pathWithQuery} (HTTP ${reply.status}) is not signed by the account: wrong server, or wrong signing secret`))
  ))

/**
 * Sends with the key of the moment; a 401 renews a temporary key (ApiAccess.renew) and sends once
 * more. A TENDER_SECRET_KEY refused, or a fresh key refused too, fails `unauthorized`.
 */
const sendRenewing = (access: ApiAccess, method: string, pathWithQuery: string, body?: unknown) => {
  const credentials = { baseUrl: access.baseUrl, secretKey: access.secretKey, signingSecret: access.signingSecret }
  return send(credentials, method, pathWithQuery, body).pipe(
    Effect.catchIf(
      (e) => e.unauthorized === true && Option.isSome(access.renew),
      () =>
        Option.getOrThrow(access.renew)(credentials.secretKey).pipe(
          // Not a server away: retrying with the refused key would never work.
          Effect.mapError((e) => new ApiAccessFailure({ message: `the server refused the temporary key (401) and no fresh one could be issued: ${e.message}`, unauthorized: true })),
          Effect.andThen(Effect.suspend(() => send(access, method, pathWithQuery, body)))
        )
    )
  )
}

/**
 * Tender accepts a signed write once. Two CLI processes of one account (triggers run at once) may
 * send the very same bytes in the same second: the second is refused as a replay of the first, and
 * nothing of it applied, so it is signed again in a later second (as the refusal says to).
 */
const isReplayOfAnother = (reply: ApiReply) =>
  reply.status === 409 && typeof reply.json?.message === "string" && reply.json.message.startsWith(ALREADY_ACCEPTED)

/** A signed request through the public API; the answer's signature is verified before it is read. */
export const request = (access: ApiAccess, method: "GET" | "POST" | "DELETE", pathWithQuery: string, body?: unknown) => {
  const attempt = (tries: number): Effect.Effect<ApiReply, ApiAccessFailure> =>
    sendRenewing(access, method, pathWithQuery, method === "POST" && body === undefined ? {} : body).pipe(
      Effect.flatMap((reply) =>
        isReplayOfAnother(reply) && tries < 5
          // Into the next second, with a jitter so that the two processes do not meet there again.
          ? Effect.sleep(Duration.millis(1000 - (Date.now() % 1000) + Math.floor(Math.random() * 200))).pipe(Effect.andThen(attempt(tries + 1)))
          : Effect.succeed(reply)
      )
    )
  return attempt(0)
}
