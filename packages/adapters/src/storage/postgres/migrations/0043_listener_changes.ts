/**
 * Issue 24: where this deployment's servers listen (`server_listeners`) is read by every webhook
 * delivery's check, and now kept in process (ServerListenersPg, NotifiedCache.ts). A server that
 * starts listening, or listens elsewhere, must be refused as a delivery target at once, and a port
 * a server gave back may be registered again at once, so those changes notify (an insert, a move,
 * a removal); a heartbeat that changes nothing does not.
 */
export const CHANNEL = "tender_listeners_changed"

export const statements = [
  `CREATE FUNCTION tender_listeners_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('${CHANNEL}', '');
      RETURN NULL;
    END $$`,
  `CREATE TRIGGER tender_listener_added AFTER INSERT OR DELETE ON server_listeners
    FOR EACH ROW EXECUTE FUNCTION tender_listeners_changed()`,
  `CREATE TRIGGER tender_listener_moved AFTER UPDATE OF port, addresses ON server_listeners
    FOR EACH ROW WHEN (OLD.port IS DISTINCT FROM NEW.port OR OLD.addresses IS DISTINCT FROM NEW.addresses)
    EXECUTE FUNCTION tender_listeners_changed()`
]
