/**
 * A process's view of the channels' health (ChannelHealth, issue 27): the breakers and the sliding
 * windows' counts that routing reads on every payment, held in memory so that a read never waits
 * on storage. The memory adapter is this view alone (one process: exact); the PostgreSQL adapter
 * keeps one per process and replaces its shared part once a second with what every process wrote
 * (ChannelHealthPg.ts).
 *
 * The counts are kept in two parts:
 * - `shared`: the window's sums per channel × method × currency × brand as storage last said
 *   (PostgreSQL's, every process's included; empty in memory);
 * - `pending`: this process's counts by bucket that storage has not taken yet (in memory: all of
 *   them, dropped once past the window).
 * A standing adds both, so an answer counts in this process at once and in the others at their next
 * sync. How an answer counts, where a bucket starts and how a breaker moves are the domain's
 * (SuccessRate.ts, Breaker.ts): this module only keeps what they decide.
 */
import * as Breaker from "@tender/domain/channels/Breaker"
import type { BreakerState, ChannelStanding, RateCounts, Segment } from "@tender/domain/channels/RoutingModel"
import type { HealthObservation } from "@tender/domain/channels/RoutingPorts"
import * as SuccessRate from "@tender/domain/channels/SuccessRate"

/** One count of the window: a channel × method × currency × brand ('' when none) × bucket. */
export interface WindowCount extends RateCounts {
  readonly channel_id: string
  readonly method: string
  readonly currency: string
  readonly brand: string
  readonly bucket: number
}

/** A breaker as kept, with when its state was decided (epoch ms): the later decision wins across processes. */
export interface KeptBreaker {
  readonly state: BreakerState
  readonly changed_at: number
}

const ZERO: RateCounts = { attempts: 0, approvals: 0 }

const add = SuccessRate.plus

/** channel NUL method NUL currency: the rate's segment; brands are kept under it. */
const segmentKey = (channelId: string, method: string, currency: string) => `${channelId}\u0000${method}\u0000${currency}`

const brandOf = (segment: Segment) => segment.brand ?? ""

export class ChannelHealthView {
  /** Storage's sums of the window, by segment key, then brand. */
  private shared = new Map<string, Map<string, RateCounts>>()
  /** This process's counts not yet taken by storage: segment key → brand → bucket → counts. */
  private pending: Counts = new Map()
  /** Counts being written (taken from `pending`), still counted here until storage's sums include them. */
  private inflight: Counts = new Map()
  private readonly breakers = new Map<string, KeptBreaker>()
  /** Breakers whose change storage has not taken yet (PostgreSQL writes them; memory never asks). */
  private readonly unwritten = new Set<string>()

  /**
   * Folds one answer in. Returns true when the breaker moved between closed and open (or back):
   * the change others must hear of at once.
   */
  observe(observation: HealthObservation): boolean {
    const counts = SuccessRate.rated(observation.outcome)
    if (counts.attempts > 0) {
      const { channel_id, segment } = observation
      addCount(this.pending, { channel_id, method: segment.method, currency: segment.currency, brand: brandOf(segment), bucket: SuccessRate.bucketOf(observation.at), ...counts })
    }
    const kept = this.breakers.get(observation.channel_id)
    const before = kept?.state ?? Breaker.INITIAL
    const after = Breaker.observe(before, observation.outcome, observation.at)
    if (sameState(before, after)) return false
    const moved = Breaker.position(before, observation.at) !== Breaker.position(after, observation.at)
    if (!moved) {
      // A failure counted (or the count reset) while the breaker stays where it is: this process's
      // own, not a decision others must follow. It keeps the decision's time, so storage's next
      // decision replaces it.
      this.breakers.set(observation.channel_id, { state: after, changed_at: kept?.changed_at ?? 0 })
      return false
    }
    this.breakers.set(observation.channel_id, { state: after, changed_at: observation.at })
    this.unwritten.add(observation.channel_id)
    return true
  }

  standings(channelIds: ReadonlyArray<string>, segment: Segment, now: number): ReadonlyArray<ChannelStanding> {
    const from = SuccessRate.windowStart(now)
    return channelIds.map((channelId) => {
      const key = segmentKey(channelId, segment.method, segment.currency)
      let rate = ZERO
      let brandRate = ZERO
      for (const [brand, counts] of this.shared.get(key) ?? []) {
        rate = add(rate, counts)
        if (segment.brand !== null && brand === segment.brand) brandRate = add(brandRate, counts)
      }
      for (const local of [this.pending, this.inflight]) {
        for (const [brand, buckets] of local.get(key) ?? []) {
          for (const [bucket, counts] of buckets) {
            if (bucket < from) continue
            rate = add(rate, counts)
            if (segment.brand !== null && brand === segment.brand) brandRate = add(brandRate, counts)
          }
        }
      }
      const state = this.breakerOf(channelId)
      return { channel_id: channelId, breaker: Breaker.position(state, now), breaker_state: state, rate, brand_rate: brandRate }
    })
  }

  /** The breaker's state (the initial one when it never moved). */
  breakerOf(channelId: string): BreakerState {
    return this.breakers.get(channelId)?.state ?? Breaker.INITIAL
  }

  /** When the breaker's current decision was made (0: never moved). */
  changedAt(channelId: string): number {
    return this.breakers.get(channelId)?.changed_at ?? 0
  }

  /**
   * Every breaker not at rest (other than Breaker.INITIAL): open, half open, or closed with failures
   * counted. A breaker closed by an answer is INITIAL again, so it leaves this list (and /metrics).
   */
  movedBreakers(): ReadonlyArray<{ readonly channel_id: string; readonly state: BreakerState }> {
    return [...this.breakers].filter(([, kept]) => !sameState(kept.state, Breaker.INITIAL)).map(([channel_id, kept]) => ({ channel_id, state: kept.state }))
  }

  /**
   * The breaker with this process's probe claimed, when the breaker lets one through now (null:
   * it lets none). Memory keeps it at once (`keepClaim`); PostgreSQL first wins it in storage.
   */
  claimable(channelId: string, now: number): BreakerState | null {
    return Breaker.claimProbe(this.breakerOf(channelId), now) ?? null
  }

  /** Keeps the probe this process claimed at `at` (memory: at once; PostgreSQL: once storage said it won). */
  keepClaim(channelId: string, state: BreakerState, at: number): void {
    this.breakers.set(channelId, { state, changed_at: at })
  }

  /**
   * Sets a breaker as storage holds it, when storage's decision is later than this process's: an
   * older row (read while this process's own change was being written) does not undo a newer one.
   */
  adopt(channelId: string, kept: KeptBreaker): void {
    const mine = this.breakers.get(channelId)
    if (mine !== undefined && mine.changed_at >= kept.changed_at) return
    this.breakers.set(channelId, kept)
    this.unwritten.delete(channelId)
  }

  /** The breakers storage has not taken yet, and marks them taken (a failed write gives them back: `unwrite`). */
  takeUnwritten(ids?: ReadonlyArray<string>): ReadonlyArray<{ readonly channel_id: string } & KeptBreaker> {
    const taken = []
    for (const channelId of ids ?? [...this.unwritten]) {
      const kept = this.breakers.get(channelId)
      if (kept === undefined || !this.unwritten.delete(channelId)) continue
      taken.push({ channel_id: channelId, ...kept })
    }
    return taken
  }

  /** Gives back breakers whose write failed, to be written at the next sync (as they are by then). */
  unwrite(channelIds: ReadonlyArray<string>): void {
    for (const channelId of channelIds) this.unwritten.add(channelId)
  }

  /**
   * This process's counts storage has not taken yet, now being written: still counted here until
   * `replaceShared` (storage's sums include them) or `restore` (the write failed).
   */
  takePending(): ReadonlyArray<WindowCount> {
    this.inflight = this.pending
    this.pending = new Map()
    return countsOf(this.inflight)
  }

  /** The counts being written were not taken (the write failed): they are written at the next sync. */
  restore(): void {
    for (const c of countsOf(this.inflight)) addCount(this.pending, c)
    this.inflight = new Map()
  }

  /** Replaces the shared sums with storage's (every process's counts of the window, this one's taken included). */
  replaceShared(sums: ReadonlyArray<Omit<WindowCount, "bucket">>): void {
    const shared = new Map<string, Map<string, RateCounts>>()
    for (const s of sums) {
      const key = segmentKey(s.channel_id, s.method, s.currency)
      const brands = shared.get(key) ?? new Map<string, RateCounts>()
      brands.set(s.brand, add(brands.get(s.brand) ?? ZERO, s))
      shared.set(key, brands)
    }
    this.shared = shared
    this.inflight = new Map()
  }

  /** The counts being written were taken, but storage's sums could not be read: they count again at the next read. */
  settle(): void {
    this.inflight = new Map()
  }

  /** Drops pending counts older than the window (memory keeps them all until then). */
  prune(now: number): void {
    const from = SuccessRate.windowStart(now)
    for (const [key, brands] of this.pending) {
      for (const [brand, buckets] of brands) {
        for (const bucket of buckets.keys()) if (bucket < from) buckets.delete(bucket)
        if (buckets.size === 0) brands.delete(brand)
      }
      if (brands.size === 0) this.pending.delete(key)
    }
  }

}

/** Counts by segment key → brand → bucket. */
type Counts = Map<string, Map<string, Map<number, RateCounts>>>

const addCount = (counts: Counts, c: WindowCount) => {
  const key = segmentKey(c.channel_id, c.method, c.currency)
  const brands = counts.get(key) ?? new Map<string, Map<number, RateCounts>>()
  const buckets = brands.get(c.brand) ?? new Map<number, RateCounts>()
  buckets.set(c.bucket, add(buckets.get(c.bucket) ?? ZERO, c))
  brands.set(c.brand, buckets)
  counts.set(key, brands)
}

const countsOf = (counts: Counts): Array<WindowCount> => {
  const all: Array<WindowCount> = []
  for (const [key, brands] of counts) {
    const [channel_id, method, currency] = key.split("\u0000") as [string, string, string]
    for (const [brand, buckets] of brands) {
      for (const [bucket, c] of buckets) all.push({ channel_id, method, currency, brand, bucket, attempts: c.attempts, approvals: c.approvals })
    }
  }
  return all
}

const sameState = (a: BreakerState, b: BreakerState) =>
  a.failures === b.failures && a.opened_at === b.opened_at && a.open_until === b.open_until && a.trips === b.trips &&
  a.probe_until === b.probe_until
