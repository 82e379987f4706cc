/** The unit of work over the memory database: its transactions (serialised, copy-on-write, joinable). */
import { UnitOfWork } from "@tender/domain"
import { Effect, Layer } from "effect"
import { MemoryDatabase } from "./MemoryDatabase.ts"

export const layer: Layer.Layer<UnitOfWork, never, MemoryDatabase> = Layer.effect(
  UnitOfWork,
  Effect.map(MemoryDatabase, (db) => UnitOfWork.of({ transaction: db.transaction }))
)
