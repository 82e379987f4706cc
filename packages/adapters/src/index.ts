/**
 * @tender/adapters: the driven side. `Infrastructure.layer(config)` is what the server and the CLI
 * need; the rest is exported for tests and for embedding (memory storage, individual adapters).
 */
export * as Config from "./Config.ts"
export * as Infrastructure from "./Infrastructure.ts"
export { InfrastructureError } from "./InfrastructureError.ts"
export { CardCipher } from "./crypto/CardCipher.ts"
export * as IdsRandom from "./crypto/IdsRandom.ts"
export * as KeyHasherSha256 from "./crypto/KeyHasherSha256.ts"
export * as VaultKey from "./crypto/VaultKey.ts"
export * as LocksMemory from "./locks/LocksMemory.ts"
export * as LocksRedis from "./locks/LocksRedis.ts"
export * as RateLimiterMemory from "./ratelimit/RateLimiterMemory.ts"
export * as RateLimiterRedis from "./ratelimit/RateLimiterRedis.ts"
export * as TokenBucket from "./ratelimit/TokenBucket.ts"
export { Redis } from "./redis/Redis.ts"
export { MemoryDatabase } from "./storage/memory/MemoryDatabase.ts"
export * as CvcStoreMemory from "./storage/memory/CvcStoreMemory.ts"
export * as EmbeddedPostgres from "./storage/postgres/Embedded.ts"
export * as Migrator from "./storage/postgres/Migrator.ts"
export * as PgDatabase from "./storage/postgres/PgDatabase.ts"
export * as PaymentProviderSandbox from "./providers/sandbox/PaymentProviderSandbox.ts"
