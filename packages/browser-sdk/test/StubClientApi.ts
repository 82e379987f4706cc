/**
 * A stand-in for the server's `/v1/client/…` routes, built to /tmp/briefs/client-api.md's interface
 * exactly, for the SDK's browser tests until the real routes land (they are built on another
 * branch of issue 10; once merged, these tests should run against `startTestServer` instead).
 *
 * It also serves the SDK's static files through the same functions the real server uses
 * (assets.ts), with this stub as the API host, so the SDK under test is the one a merchant gets.
 * The card rules it re-checks are the server's own (CardTokens.validateCard).
 */
import { randomBytes } from "node:crypto"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { validateCard } from "@tender/domain/CardTokens"
import { ValidationFailed } from "@tender/domain/Errors"
import { cardPage, cardPageCsp, loadScript, type TenderEnv } from "../src/assets.ts"

export interface StubPayment {
  readonly secret: string
  readonly paymentId: string
  readonly collect: "card" | "cvv"
  readonly savedCard: { readonly brand: string; readonly last4: string; readonly token: string } | null
  readonly displayMode: "inline" | "popup" | "redirect"
  /** How long `/v1/client/session` takes for this secret (a slow network). */
  readonly sessionDelayMs: number
  status: "requires_payment" | "succeeded" | "failed" | "requires_action"
  declineCode?: string
  expired: boolean
}

export interface StubRequest {
  readonly path: string
  readonly origin: string | undefined
  readonly body: Record<string, unknown>
}

export interface Stub {
  readonly origin: string
  /** Every `/v1/client/…` request, in order (bodies included: tests assert what left the iframe). */
  readonly requests: Array<StubRequest>
  readonly payment: (options?: Partial<Pick<StubPayment, "collect" | "savedCard" | "displayMode" | "sessionDelayMs">>) => StubPayment
  readonly close: () => Promise<void>
}

const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  response.writeHead(status, { "content-type": "application/json", ...headers })
  response.end(JSON.stringify(body))
}

const readBody = (request: IncomingMessage) =>
  new Promise<string>((done) => {
    let text = ""
    request.on("data", (chunk) => (text += chunk))
    request.on("end", () => done(text))
  })

/** Sandbox outcomes by number (contract.md, Sandbox): approved, declined, 3-D Secure. */
const OUTCOME: Record<string, "succeeded" | "failed" | "requires_action"> = {
  "4242424242424242": "succeeded",
  "4000000000000002": "failed",
  "4000000000003220": "requires_action"
}

export const startStub = () =>
  new Promise<Stub>((ready) => {
    const payments = new Map<string, StubPayment>()
    const tokens = new Map<string, string>()
    const requests: Array<StubRequest> = []
    let origin = ""
    let seq = 0

    const error = (type: string, code: string, message: string) => ({
      error: { type, code, message, correlationId: `req_${randomBytes(6).toString("hex")}` }
    })

    const client = (path: string, body: Record<string, unknown>, key: string | undefined, response: ServerResponse, cors: Record<string, string>) => {
      if (key === undefined || !/^pk_(test|live)_/.test(key)) {
        return json(response, 401, error("authentication_error", "client_secret_invalid", "A publishable key is required."), cors)
      }
      const payment = typeof body.client_secret === "string" ? payments.get(body.client_secret) : undefined
      if (payment === undefined) return json(response, 401, error("authentication_error", "client_secret_invalid", "Unknown client secret."), cors)
      if (payment.expired) return json(response, 401, error("authentication_error", "CLIENT_SECRET_EXPIRED", "The client secret expired."), cors)
      switch (path) {
        case "/v1/client/session":
          return void setTimeout(() => json(response, 200, {
            kind: "payment",
            payment_id: payment.paymentId,
            collect: payment.collect,
            amount: 25,
            currency: "USD",
            saved_card: payment.savedCard === null ? null : { brand: payment.savedCard.brand, last4: payment.savedCard.last4 },
            livemode: false,
            expires_at: new Date(Date.now() + 15 * 60_000).toISOString()
          }, cors), payment.sessionDelayMs)
        case "/v1/client/card_tokens": {
          if (payment.collect === "cvv") {
            const saved = payment.savedCard!
            if (!/^\d{3,4}$/.test(String(body.cvc))) return json(response, 400, error("validation_error", "invalid_cvc", "Invalid CVC."), cors)
            return json(response, 201, { token: saved.token, brand: saved.brand, last4: saved.last4, bin: "42424242", exp_month: null, exp_year: null }, cors)
          }
          const checked = validateCard({
            number: String(body.number ?? ""),
            exp_month: Number(body.exp_month),
            exp_year: Number(body.exp_year),
            cvc: String(body.cvc ?? "")
          }, new Date())
          if (checked instanceof ValidationFailed) {
            const field = checked.errors?.[0]?.field ?? "number"
            const code = field === "number" ? "invalid_number" : field === "cvc" ? "invalid_cvc" : "invalid_expiry"
            return json(response, 400, error("validation_error", code, "The card was not accepted."), cors)
          }
          const token = `tok_${randomBytes(8).toString("hex")}`
          tokens.set(token, checked.number)
          return json(response, 201, {
            token,
            brand: checked.brand,
            last4: checked.number.slice(-4),
            bin: checked.number.slice(0, 8),
            exp_month: Number(body.exp_month),
            exp_year: Number(body.exp_year)
          }, cors)
        }
        case "/v1/client/pay": {
          if (payment.status !== "requires_payment") {
            return json(response, 409, error("api_error", "card_payment_invalid_order_state", "Already paid."), cors)
          }
          const number = typeof body.token === "string" ? tokens.get(body.token) ?? (body.token === payment.savedCard?.token ? "4242424242424242" : undefined) : undefined
          if (number === undefined) return json(response, 400, error("api_error", "card_token_invalid", "Unknown token."), cors)
          payment.status = OUTCOME[number] ?? "succeeded"
          if (payment.status === "failed") payment.declineCode = "card_declined"
          return json(response, 200, {
            status: payment.status,
            payment_id: payment.paymentId,
            ...(payment.status === "failed" ? { decline_code: payment.declineCode } : {}),
            ...(payment.status === "requires_action"
              ? { challenge_url: `${origin}/challenge/${payment.paymentId}`, display_mode: payment.displayMode }
              : {})
          }, cors)
        }
        case "/v1/client/payment_status":
          return json(response, 200, {
            status: payment.status === "requires_payment" ? "requires_action" : payment.status,
            payment_id: payment.paymentId,
            ...(payment.declineCode !== undefined ? { decline_code: payment.declineCode } : {})
          }, cors)
        default:
          return json(response, 404, error("api_error", "not_found", "No such route."), cors)
      }
    }

    const server: Server = createServer(async (request, response) => {
      const url = new URL(request.url ?? "/", origin)
      const env: TenderEnv = { apiUrl: origin, fieldsUrl: origin }
      if (url.pathname.startsWith("/v1/client/")) {
        const cors = {
          "access-control-allow-origin": request.headers.origin ?? "*",
          "access-control-allow-methods": "POST, OPTIONS",
          "access-control-allow-headers": "authorization, content-type",
          vary: "Origin"
        }
        if (request.method === "OPTIONS") {
          response.writeHead(204, cors)
          return response.end()
        }
        let body: Record<string, unknown> = {}
        try {
          body = JSON.parse(await readBody(request)) as Record<string, unknown>
        } catch {
          // An unreadable body is an unknown secret below.
        }
        requests.push({ path: url.pathname, origin: request.headers.origin, body })
        const key = /^Bearer (\S+)$/.exec(request.headers.authorization ?? "")?.[1]
        return client(url.pathname, body, key, response, cors)
      }
      if (url.pathname === "/sdk/v1/tender.js" || url.pathname === "/fields/v1/card.js") {
        const asset = loadScript(url.pathname.endsWith("tender.js") ? "tender.js" : "card.js", env)
        response.writeHead(200, { "content-type": asset.contentType, etag: asset.etag })
        return response.end(asset.body)
      }
      if (url.pathname === "/fields/v1/card.html") {
        const asset = cardPage()
        response.writeHead(200, { "content-type": asset.contentType, "content-security-policy": cardPageCsp(env.apiUrl) })
        return response.end(asset.body)
      }
      const challenge = /^\/challenge\/(ord_\w+)$/.exec(url.pathname)
      if (challenge !== null) {
        const payment = [...payments.values()].find((p) => p.paymentId === challenge[1])
        if (request.method === "POST" && payment !== undefined) payment.status = "succeeded"
        response.writeHead(200, { "content-type": "text/html" })
        return response.end(`<!doctype html><form method="post"><button id="complete">Complete authentication</button></form>`)
      }
      response.writeHead(404)
      response.end()
    })
    server.listen(0, "127.0.0.1", () => {
      origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      ready({
        origin,
        requests,
        payment: (options = {}) => {
          const payment: StubPayment = {
            secret: `ord_${++seq}_secret_${randomBytes(8).toString("hex")}`,
            paymentId: `ord_${seq}${randomBytes(4).toString("hex")}`,
            collect: options.collect ?? "card",
            savedCard: options.savedCard ?? null,
            displayMode: options.displayMode ?? "inline",
            sessionDelayMs: options.sessionDelayMs ?? 0,
            status: "requires_payment",
            expired: false
          }
          payments.set(payment.secret, payment)
          return payment
        },
        close: () => new Promise((closed) => server.close(() => closed()))
      })
    })
  })
