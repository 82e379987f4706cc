/**
 * `tender listen` (commands/Listen.ts): reads the account's event feed (GET /v1/events, a long
 * poll) through the public API and POSTs each event to `--forward-to` as a webhook delivery would be
 * (contract.md, Signatures), keyed by a listen secret of its own. docs/decisions.md, "Events feed and
 * tender listen".
 *
 * At least once, never a gap: the position (the feed's cursor) is stored in the data directory per
 * account, forward-to URL and event filter, and it moves only after the events before it were
 * forwarded there (whatever the receiver answered). Events of a page already forwarded when the
 * process stopped are remembered by id, so a restart resends none of them; one killed mid-forward is
 * forwarded again. The listen secret is the account's (one for every listener of it), so that a
 * receiver configures it once.
 *
 * Two listeners of one account with different URLs or filters keep apart positions, so neither moves
 * the other's past an event it has not forwarded. Two with the same ones both forward every event
 * (the receiver gets each twice) and share a position, which each saves only past events it
 * forwarded itself: never past one that did not reach that URL.
 */
import { createHash, randomBytes } from "node:crypto"
import { link, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises"
import { join } from "node:path"
import { Errors, Webhook } from "@tender/domain"
import { MAX_FEED_WAIT_SECONDS } from "@tender/api/Limits"
import { signatureHeader } from "@tender/api/Signature"
import { Console, Data, Effect, Option, Schedule } from "effect"
import * as ApiAccess from "../ApiAccess.ts"
import type { Invocation } from "../Cli.ts"

export interface ListenInput extends ApiAccess.AccessInput {
  readonly forwardTo: string
  readonly events: Option.Option<string>
}

/** The feed refused the listener for good (a suspended account, a refused query): one line, exit 1. */
class ListenFailure extends Data.TaggedError("ListenFailure")<{ readonly message: string }> {}

/** What survives a restart, per account, forward-to URL and event filter. */
interface Position {
  readonly forward_to: string
  readonly events: ReadonlyArray<string> | "*"
  /** The feed's `next_cursor` after the last page fully forwarded; null before the first read. */
  cursor: string | null
  /** Events of the page after `cursor` already forwarded. */
  forwarded: Array<string>
}

/** A read that has not answered this long after its wait is given up and asked again (the server is gone). */
const READ_TIMEOUT_MS = (MAX_FEED_WAIT_SECONDS + 10) * 1000

/** The account's files' stem: its id, or with TENDER_SECRET_KEY (the account not known here) the key, hashed. */
const stemOf = (dataDir: string, access: ApiAccess.ApiAccess) =>
  join(
    dataDir,
    "listen",
    access.accountId.startsWith("acct_") ? access.accountId : `key-${createHash("sha256").update(access.secretKey).digest("hex").slice(0, 16)}`
  )

/** `<stem>/<hash of URL and filter>.json`: one listener's position. */
const positionFile = (stem: string, forwardTo: string, types: ReadonlyArray<string> | undefined) =>
  join(stem, `${createHash("sha256").update(`${forwardTo}\n${types === undefined ? "*" : [...types].sort().join(",")}`).digest("hex").slice(0, 16)}.json`)

const readJson = async (file: string): Promise<any> => {
  try {
    return JSON.parse(await readFile(file, "utf8"))
  } catch {
    return undefined
  }
}

/**
 * The account's listen secret (`<stem>.json`), made at the first start of any listener of it: a
 * whole file linked into place, which fails if one is there, so two listeners starting at once agree
 * on one secret.
 */
const listenSecret = (stem: string) =>
  Effect.promise(async (): Promise<string> => {
    const file = `${stem}.json`
    while (true) {
      const saved = await readJson(file)
      if (typeof saved?.secret === "string" && saved.secret.startsWith("whsec_")) return saved.secret
      const secret = `whsec_${randomBytes(24).toString("hex")}`
      await mkdir(join(file, ".."), { recursive: true, mode: 0o700 })
      const temporary = `${file}.${process.pid}.tmp`
      await writeFile(temporary, JSON.stringify({ secret }), { mode: 0o600 })
      try {
        // A file there without a secret (unreadable: a crash mid-write) is replaced.
        if (saved !== undefined) await rename(temporary, file)
        else await link(temporary, file)
        return secret
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
        // Another listener made it meanwhile: read its secret.
      } finally {
        await rm(temporary, { force: true })
      }
    }
  })

const loadPosition = (file: string, forwardTo: string, types: ReadonlyArray<string> | undefined) =>
  Effect.promise(async (): Promise<Position> => {
    const saved = await readJson(file)
    return {
      forward_to: forwardTo,
      events: types ?? "*",
      cursor: typeof saved?.cursor === "string" ? saved.cursor : null,
      forwarded: Array.isArray(saved?.forwarded) ? saved.forwarded.filter((id: unknown) => typeof id === "string") : []
    }
  })

/** Written whole under a name of this process, then renamed over the old file: a kill mid-write leaves the previous one. */
const savePosition = (file: string, position: Position) =>
  Effect.promise(async () => {
    await mkdir(join(file, ".."), { recursive: true, mode: 0o700 })
    await writeFile(`${file}.${process.pid}.tmp`, JSON.stringify(position), { mode: 0o600 })
    await rename(`${file}.${process.pid}.tmp`, file)
  })

const targetOf = (url: string) => {
  const parsed = ApiAccess.httpUrl(url)
  return parsed === undefined ? Effect.fail(Errors.invalidField("--forward-to", `is not an http(s) URL: ${url}`)) : Effect.succeed(parsed)
}

const typesOf = (events: Option.Option<string>) =>
  Effect.gen(function*() {
    if (Option.isNone(events)) return undefined
    const types = [...new Set(events.value.split(",").map((t) => t.trim()).filter((t) => t !== ""))]
    const unknown = types.filter((t) => !(Webhook.EVENT_TYPES as ReadonlyArray<string>).includes(t))
    if (types.length === 0 || unknown.length > 0) {
      return yield* Errors.invalidField(
        "--events",
        `${types.length === 0 ? "names no event type" : `has unknown event types: ${unknown.join(", ")}`} (known: ${Webhook.EVENT_TYPES.join(", ")})`
      )
    }
    return types
  })

/** An answer of the feed. */
interface FeedPage {
  readonly data: ReadonlyArray<{ readonly id: string; readonly type: string }>
  readonly next_cursor: string
  readonly has_more: boolean
}

/** What one forward came to: the receiver's status, or why there was none. */
type Forwarded = { readonly status: number; readonly ms: number } | { readonly error: string; readonly ms: number }

/** POSTs one envelope as a webhook delivery would: same headers, same signature, 15 s. */
const forward = (target: URL, secret: string, event: { readonly id: string; readonly type: string }) =>
  Effect.promise(async (): Promise<Forwarded> => {
    const body = new TextEncoder().encode(JSON.stringify(event))
    const started = Date.now()
    try {
      const reply = await fetch(target, {
        method: "POST",
        headers: Webhook.deliveryHeaders(signatureHeader([secret], Math.floor(started / 1000), target.pathname, body), event),
        body,
        redirect: "manual",
        signal: AbortSignal.timeout(Webhook.ATTEMPT_TIMEOUT_MS)
      })
      await reply.arrayBuffer().catch(() => undefined)
      return { status: reply.status, ms: Date.now() - started }
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } })?.cause
      const reason = (error as Error)?.name === "TimeoutError"
        ? `timed out after ${Webhook.ATTEMPT_TIMEOUT_MS / 1000} s`
        : cause?.code ?? cause?.message ?? (error as Error)?.message ?? String(error)
      return { error: reason, ms: Date.now() - started }
    }
  })

/** The feed's answer, or why not: the server away (retried), or a refusal asking again will not change. */
const pageOf = (reply: ApiAccess.ApiReply): Effect.Effect<FeedPage, ApiAccess.ApiAccessFailure | ListenFailure> => {
  if (reply.status === 200) return Effect.succeed(reply.json as FeedPage)
  if (reply.status >= 500 || reply.status === 429) {
    return Effect.fail(new ApiAccess.ApiAccessFailure({ message: `the server answered ${reply.status}: ${reply.json?.message ?? ""}` }))
  }
  // A suspended account, a refused query: asking again will not change it.
  return Effect.fail(new ListenFailure({ message: `the event feed refused the listener (${reply.status} ${reply.json?.code ?? ""}): ${reply.json?.message ?? ""}` }))
}

const clock = () => new Date().toISOString().slice(11, 19)

/**
 * Ctrl-C or SIGTERM is how a listener is meant to end, so it exits 0. The runtime ends an interrupted
 * command with 130 (NodeRuntime's teardown calls process.exit(130)); Node reads `process.exitCode`
 * again after the 'exit' listeners ran, so one set on interruption has the last word.
 */
const exitZeroOnInterrupt = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.onInterrupt(effect, () =>
    Effect.sync(() => {
      process.once("exit", () => {
        process.exitCode = 0
      })
    }))

export const listen = (input: ListenInput, invocation: Invocation) =>
  exitZeroOnInterrupt(Effect.scoped(Effect.gen(function*() {
    const target = yield* targetOf(input.forwardTo)
    const types = yield* typesOf(input.events)
    const access = yield* ApiAccess.acquire({ account: input.account, apiUrl: input.apiUrl }, invocation)
    const stem = stemOf(invocation.config.dataDir, access)
    const secret = yield* listenSecret(stem)
    const file = positionFile(stem, target.href, types)
    const state = yield* loadPosition(file, target.href, types)
    yield* savePosition(file, state)
    const say = (json: Record<string, unknown>, text: string) => Console.log(invocation.json ? JSON.stringify(json) : text)

    yield* say(
      { type: "ready", account: access.accountId, forward_to: target.href, secret, events: types ?? "*", api_url: access.baseUrl },
      `Ready: forwarding ${types === undefined ? "every event" : types.join(", ")} of ${access.accountId} to ${target.href} ` +
        `(listen secret ${secret}; server ${access.baseUrl}; Ctrl-C to stop)`
    )

    const query = (cursor: string | null) =>
      `/v1/events?${cursor === null ? "" : `after=${cursor}&`}wait=${cursor === null ? 0 : MAX_FEED_WAIT_SECONDS}` +
      (types === undefined ? "" : `&types=${types.join(",")}`)
    /**
     * One read of the feed: an `ApiAccessFailure` is the server being away (refused, timed out, 5xx,
     * 429); a key refused (a TENDER_SECRET_KEY, or a temporary key refused even once renewed) ends it.
     */
    const read = (cursor: string | null): Effect.Effect<FeedPage, ApiAccess.ApiAccessFailure | ListenFailure> =>
      ApiAccess.request(access, "GET", query(cursor)).pipe(
        Effect.mapError((e) => (e.unauthorized === true ? new ListenFailure({ message: e.message }) : e)),
        Effect.timeoutOrElse({
          duration: READ_TIMEOUT_MS,
          orElse: () => Effect.fail(new ApiAccess.ApiAccessFailure({ message: `no answer from ${access.baseUrl} within ${READ_TIMEOUT_MS / 1000} s` }))
        }),
        Effect.flatMap(pageOf)
      )

    let connected = true
    const noteDisconnected = (error: ApiAccess.ApiAccessFailure | ListenFailure) =>
      connected && error._tag === "ApiAccessFailure"
        ? Effect.andThen(
          Effect.sync(() => (connected = false)),
          say({ type: "disconnected", at: new Date().toISOString(), error: error.message }, `${clock()}  disconnected: ${error.message}; retrying`)
        )
        : Effect.void
    const noteConnected = Effect.suspend(() =>
      connected
        ? Effect.void
        : Effect.andThen(Effect.sync(() => (connected = true)), say({ type: "connected", at: new Date().toISOString() }, `${clock()}  connected again to ${access.baseUrl}`))
    )
    /** Reads until it gets an answer, backing off to one try every 5 s; a line when the server goes away, one when it is back. */
    const readSurely = (cursor: string | null) =>
      read(cursor).pipe(
        Effect.tapError(noteDisconnected),
        Effect.retry({
          schedule: Schedule.min([Schedule.exponential("250 millis"), Schedule.spaced("5 seconds")]),
          while: (error) => error._tag === "ApiAccessFailure"
        }),
        Effect.tap(() => noteConnected)
      )

    if (state.cursor === null) {
      // A first start: from now.
      state.cursor = (yield* readSurely(null)).next_cursor
      yield* savePosition(file, state)
    }
    while (true) {
      const page: FeedPage = yield* readSurely(state.cursor)
      for (const event of page.data) {
        if (state.forwarded.includes(event.id)) continue
        const outcome = yield* forward(target, secret, event)
        state.forwarded.push(event.id)
        yield* savePosition(file, state)
        yield* say(
          { type: "event", at: new Date().toISOString(), event_type: event.type, event_id: event.id, ...("status" in outcome ? { status: outcome.status } : { error: outcome.error }), latency_ms: outcome.ms },
          `${clock()}  ${event.type.padEnd(28)} ${event.id}  → ${"status" in outcome ? outcome.status : `error: ${outcome.error}`}  ${outcome.ms} ms`
        )
      }
      state.cursor = page.next_cursor
      state.forwarded = []
      yield* savePosition(file, state)
    }
  })))
