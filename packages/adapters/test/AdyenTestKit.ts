/**
 * What Adyen tests play besides the fake: the shopper on its 3-D Secure page (over HTTPS with the
 * fake's certificate trusted; Node's fetch takes no CA option), a provider connected to the fake, the merchant's notification
 * endpoint receiving its deliveries, and the notification route handing them to the provider.
 */
import * as http from "node:http"
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import type { AdyenFake, NotificationRequestItem } from "../src/providers/adyen/AdyenFake.ts"
import { module } from "../src/providers/adyen/AdyenModule.ts"
import { verify } from "../src/providers/adyen/AdyenNotifications.ts"
import { type AdyenProvider, type AdyenProviderConfig, makeAdyenProvider } from "../src/providers/adyen/AdyenProvider.ts"
import { sign } from "../src/providers/adyen/AdyenSignature.ts"
import { run } from "../src/providers/fake/ProviderScenarios.ts"

/** Tender's 3-D Secure return page, as the tests' providers name it. */
export const RETURN_URL = "https://tender.test/v1/providers/adyen/3ds-return"

/** A test-mode provider on `server` (multiple partial captures on, a 10 s timeout); `options` override. */
export const connect = (server: AdyenFake, options: Partial<AdyenProviderConfig> = {}): AdyenProvider =>
  makeAdyenProvider({
    apiKey: server.apiKey,
    merchantAccount: server.merchantAccount,
    environment: "test",
    endpoint: server.endpoint,
    caCertificate: server.caCertificate,
    timeoutMs: 10_000,
    multipleCaptures: true,
    mode: "test",
    returnUrl: RETURN_URL,
    ...options
  })

export interface PageAnswer { readonly status: number; readonly location: string | undefined; readonly body: string }

const request = (url: string, ca: string, method: "GET" | "POST", form?: string) =>
  new Promise<PageAnswer>((resolve, reject) => {
    const sent = https.request(url, { method, ca, headers: form === undefined ? {} : { "content-type": "application/x-www-form-urlencoded" } }, (res) => {
      let body = ""
      res.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, location: res.headers.location, body }))
    })
    sent.on("error", reject)
    sent.end(form)
  })

export const openChallenge = (url: string, ca: string) => request(url, ca, "GET")

/** Answers the challenge; returns the URL the shopper is sent back to (the return URL with redirectResult). */
export const answerChallenge = async (url: string, ca: string, answer: "approve" | "deny") => {
  const page = await request(url, ca, "POST", `answer=${answer}`)
  if (page.status !== 302 || page.location === undefined) throw new Error(`The challenge page answered ${page.status}`)
  return page.location
}

/** A notification endpoint on 127.0.0.1 that keeps each raw body and answers Adyen's `[accepted]`. */
export const notificationReceiver = async () => {
  const bodies: Array<string> = []
  const server = http.createServer((req, res) => {
    let body = ""
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")))
    req.on("end", () => {
      bodies.push(body)
      res.end(module.acknowledgement.body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/notifications`,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}

/** One notification item as Adyen delivers it for `hmacKey`: signed, alone in a request body. */
export const deliveryOf = (item: NotificationRequestItem, hmacKey: string) =>
  JSON.stringify({ live: "false", notificationItems: [{ NotificationRequestItem: { ...item, additionalData: { hmacSignature: sign(item, hmacKey) } } }] })

/**
 * Hands the fake's notifications about `psp` to the provider, verified as the notification route
 * would. A fake without a notification URL emits unsigned items: they are signed here as Adyen would.
 */
export const observeNotifications = async (fake: AdyenFake, via: AdyenProvider, psp: string, hmacKey: string) => {
  const items = fake.notifications().filter((item) => item.pspReference === psp || item.originalReference === psp)
  for (const item of items) {
    for (const notification of await run(verify(deliveryOf(item, hmacKey), hmacKey))) await run(via.observe(notification))
  }
}
