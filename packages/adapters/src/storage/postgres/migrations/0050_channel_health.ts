/**
 * Channels' health shared by every server process (issue 27, docs/decisions.md "Channel health
 * shared across processes"). Each process counts its answers in memory and, once a second, adds
 * its counts into `channel_health_windows` and reads back the sums of the window; a breaker's
 * opening or closing is written to `channel_breakers` as it happens.
 *
 * - channel_health_windows: per channel × method × currency × card brand ('' when none) × bucket
 *   (its start, epoch ms: SuccessRate.bucketOf), the rated attempts and approvals. Rows older than the window are
 *   deleted by the sync (`bucket` is indexed for it).
 * - channel_breakers: one row per channel whose breaker ever moved, its BreakerState (epoch ms),
 *   and `changed_at`, when the state was decided (epoch ms): the later decision wins, whichever
 *   process writes last. `probe_until` is claimed by one conditional UPDATE (one winner).
 * No foreign keys: a count or a breaker outliving its channel is harmless and costs nothing.
 */
export const statements = [
  `CREATE TABLE channel_health_windows (
    channel_id text COLLATE "C" NOT NULL,
    method text COLLATE "C" NOT NULL,
    currency text COLLATE "C" NOT NULL,
    brand text COLLATE "C" NOT NULL,
    bucket bigint NOT NULL,
    attempts integer NOT NULL CHECK (attempts >= 0),
    approvals integer NOT NULL CHECK (approvals >= 0 AND approvals <= attempts),
    PRIMARY KEY (channel_id, method, currency, brand, bucket)
  )`,
  `CREATE INDEX channel_health_windows_bucket ON channel_health_windows (bucket)`,
  `CREATE TABLE channel_breakers (
    channel_id text COLLATE "C" PRIMARY KEY,
    failures integer NOT NULL CHECK (failures >= 0),
    opened_at bigint,
    open_until bigint,
    trips integer NOT NULL CHECK (trips >= 0),
    probe_until bigint,
    changed_at bigint NOT NULL
  )`
]
