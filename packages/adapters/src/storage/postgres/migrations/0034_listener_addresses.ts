/**
 * Where each server process is reachable (issue 21, review): the addresses of its machine beside its
 * port, so webhook endpoints on a sibling's private or public address are refused as its loopback
 * port is. Rows written before carry none (loopback only) until their next heartbeat, 30 s later.
 */
export const statements = [
  `ALTER TABLE server_listeners ADD COLUMN addresses text[] NOT NULL DEFAULT '{}'`
]
