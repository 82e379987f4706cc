/**
 * The driven side, assembled from a `TenderConfig`: storage (PostgreSQL or memory), the card vault,
 * locks and rate limits (Redis or in-process), ids and key hashing. The HTTP server and the CLI
 * compose their use cases over this one layer.
 *
 * CONTRACT (implemented by the storage work):
 *   layer(config): Layer<Ports, InfrastructureError>   — with postgres storage it starts or joins the
 *   embedded PostgreSQL (DATABASE_URL unset) and applies pending migrations before it is ready.
 *   migrate(config): Effect<ReadonlyArray<string> /* applied migration names *\/, InfrastructureError>
 */
