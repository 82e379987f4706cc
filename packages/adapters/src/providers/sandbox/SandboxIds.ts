/**
 * The sandbox's provider transaction ids carry everything a follow-up call needs, because several
 * server processes share one database and any of them may capture an authorization another made:
 *
 *   sbx_<kind>_<flags><time>_<digest>      e.g. sbx_auth_m_3f…, sbx_cap_s1718000000000_9a…
 *
 * `flags` are letters (`x` when none apply), `time` is epoch milliseconds (settling captures only)
 * and `digest` is derived from the kind and our reference, so a retried call yields the same id.
 */
import { createHash } from "node:crypto"

export type IdKind =
  /** A manual-capture authorization. */
  | "auth"
  /** An automatic-capture charge. */
  | "pay"
  /** A declined authorization attempt. */
  | "dec"
  /** An authorization waiting for its 3-D Secure challenge. */
  | "3ds"
  | "cap"
  | "void"
  /** A local (redirect, QR, voucher, bank transfer) payment. */
  | "lpm"
  /** A refund of a settlement. */
  | "ref"
  /** A payout or a transfer to an instrument. */
  | "po"

export interface IdFlags {
  /** Authorizations: several captures may be made. */
  readonly multicapture?: boolean
  /** Authorizations: the issuer refuses every capture. */
  readonly capturesRefused?: boolean
  /**
   * Authorizations: captures settle later. Charges and captures: refunds of them settle later.
   * Captures, refunds and payouts: this one is settling.
   */
  readonly settlesLater?: boolean
  /** Settling captures, refunds and payouts: when it was accepted (epoch ms). */
  readonly since?: number
}

const LETTERS = { multicapture: "m", capturesRefused: "r", settlesLater: "s" } as const
const DIGEST_LENGTH = 24
const PATTERN = /^sbx_(auth|pay|dec|3ds|cap|void|lpm|ref|po)_([a-z]+)(\d*)_([0-9a-f]+)$/

/** A stable digest of a seed: the same reference always gives the same id, in any process. */
export const digest = (seed: string): string => createHash("sha256").update(seed, "utf8").digest("hex")

export const make = (kind: IdKind, reference: string, flags: IdFlags = {}): string => {
  let letters = ""
  if (flags.multicapture) letters += LETTERS.multicapture
  if (flags.capturesRefused) letters += LETTERS.capturesRefused
  if (flags.settlesLater) letters += LETTERS.settlesLater
  const time = flags.since === undefined ? "" : String(flags.since)
  return `sbx_${kind}_${letters === "" ? "x" : letters}${time}_${digest(`${kind}:${reference}`).slice(0, DIGEST_LENGTH)}`
}

export interface ParsedId {
  readonly kind: IdKind
  readonly flags: IdFlags
}

/** `undefined` for an id this sandbox did not issue. */
export const parse = (id: string): ParsedId | undefined => {
  const match = PATTERN.exec(id)
  if (match === null) return undefined
  const [, kind, letters, time] = match
  return {
    kind: kind as IdKind,
    flags: {
      multicapture: letters.includes(LETTERS.multicapture),
      capturesRefused: letters.includes(LETTERS.capturesRefused),
      settlesLater: letters.includes(LETTERS.settlesLater),
      ...(time === "" ? {} : { since: Number(time) })
    }
  }
}
