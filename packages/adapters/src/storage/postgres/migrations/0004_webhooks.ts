/**
 * Webhook endpoints, their deliveries and each delivery's attempts, plus the index of the event
 * search by account. A delivery keeps no foreign key to its endpoint: deleting an endpoint leaves
 * its deliveries and their attempts in place (the port: the log outlives the endpoint).
 */
export const statements = [
  `CREATE TABLE webhook_endpoints (
    id text COLLATE "C" PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id),
    url text NOT NULL,
    enabled_events jsonb NOT NULL CHECK (jsonb_typeof(enabled_events) = 'array'),
    description text,
    status text NOT NULL CHECK (status IN ('enabled', 'disabled')),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    version integer NOT NULL CHECK (version >= 1)
  )`,
  // The outbox reads an account's endpoints for every event it records.
  `CREATE INDEX webhook_endpoints_account_idx ON webhook_endpoints (account_id, created_at, id)`,
  `CREATE TABLE webhook_deliveries (
    id text COLLATE "C" PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id),
    endpoint_id text COLLATE "C" NOT NULL,
    event_id text COLLATE "C" NOT NULL REFERENCES events (id),
    event_type text NOT NULL,
    status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed', 'exhausted')),
    attempts integer NOT NULL CHECK (attempts >= 0),
    next_attempt_at timestamptz,
    last_attempt_at timestamptz,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`,
  `CREATE INDEX webhook_deliveries_search_idx ON webhook_deliveries (account_id, created_at DESC, id DESC)`,
  `CREATE INDEX webhook_deliveries_endpoint_idx ON webhook_deliveries (endpoint_id, created_at DESC, id DESC)`,
  `CREATE INDEX webhook_deliveries_event_idx ON webhook_deliveries (event_id)`,
  // Exactly the dispatcher's predicate and order: its poll reads only the due backlog, in order.
  `CREATE INDEX webhook_deliveries_due_idx ON webhook_deliveries (next_attempt_at, id)
    WHERE status IN ('pending', 'failed')`,
  // `seq` orders attempts made in the same millisecond; the domain's record has no id of its own.
  `CREATE TABLE webhook_attempts (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delivery_id text COLLATE "C" NOT NULL REFERENCES webhook_deliveries (id),
    attempted_at timestamptz NOT NULL,
    status_code integer CHECK (status_code BETWEEN 100 AND 999),
    duration_ms integer NOT NULL CHECK (duration_ms >= 0),
    error text
  )`,
  `CREATE INDEX webhook_attempts_delivery_idx ON webhook_attempts (delivery_id, attempted_at, seq)`,
  `CREATE INDEX events_search_idx ON events (account_id, created_at DESC, id DESC)`
]
