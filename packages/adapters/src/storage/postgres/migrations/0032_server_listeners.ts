/**
 * Where this deployment's servers listen (issue 21): each `serve` process's port, refreshed while
 * it runs, so that every process sharing the database (another `serve`, a standalone `tender
 * worker`) refuses webhook endpoints on it. A new table: nothing existing changes.
 */
export const statements = [
  `CREATE TABLE server_listeners (
    process text PRIMARY KEY,
    port integer NOT NULL,
    seen_at timestamptz NOT NULL
  )`
]
