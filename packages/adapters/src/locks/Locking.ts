/** What both lock adapters share: the defaults and the wording of a lock not obtained in time. */
import { Errors } from "@tender/domain"

/** How long `withLock` waits for a held key before answering `Conflict`. */
export const DEFAULT_WAIT_MS = 5_000
/** How long a Redis lock outlives a holder that vanished without releasing it. */
export const DEFAULT_TTL_MS = 30_000

export const busy = (key: string, waitMs: number) =>
  new Errors.Conflict({ message: `${key} is being changed by another request (waited ${waitMs} ms); retry` })
