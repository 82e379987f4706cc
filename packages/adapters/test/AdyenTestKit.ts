/**
 * What Adyen tests play besides the fake: the shopper on its 3-D Secure page (over HTTPS with the
 * fake's certificate trusted; Node's fetch takes no CA option), and the merchant's notification
 * endpoint receiving its deliveries.
 */
import * as http from "node:http"
import * as https from "node:https"
import type { AddressInfo } from "node:net"
import { ACCEPTED } from "../src/providers/adyen/AdyenNotifications.ts"

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
      res.end(ACCEPTED)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/notifications`,
    bodies,
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
