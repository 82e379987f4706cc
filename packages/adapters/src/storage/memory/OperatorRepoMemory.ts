/**
 * Console operators in memory (the PostgreSQL twin: OperatorRepoPg.ts). Names are unique as the
 * table's unique index makes them; an update lands only over the version before it.
 */
import { type Operator, OperatorRepo } from "@tender/domain"
import { Effect, Layer, Option, Result } from "effect"
import { operatorNameTaken, staleWrite } from "../Conflicts.ts"
import { MemoryDatabase, table } from "./MemoryDatabase.ts"

const operators = table<string, Operator.OperatorRecord>("operators")

export const layer: Layer.Layer<OperatorRepo, never, MemoryDatabase> = Layer.effect(
  OperatorRepo,
  Effect.gen(function*() {
    const db = yield* MemoryDatabase
    const find = (matches: (operator: Operator.OperatorRecord) => boolean) =>
      db.read((r) => Option.fromNullishOr([...r.get(operators).values()].find(matches)))
    return OperatorRepo.of({
      insert: (operator) =>
        db.write((w) => {
          if (w.get(operators).has(operator.id)) throw new Error(`OperatorRepoMemory: duplicate operator id ${operator.id}`)
          if ([...w.get(operators).values()].some((o) => o.name === operator.name)) return Result.fail(operatorNameTaken(operator.name))
          w.mutable(operators).set(operator.id, operator)
          return Result.succeed(undefined)
        }),
      findById: (id) => db.read((r) => Option.fromNullishOr(r.get(operators).get(id))),
      findByName: (name) => find((o) => o.name === name),
      findByEnrolmentToken: (tokenHash) => find((o) => o.enrolment_token_hash === tokenHash),
      update: (operator) =>
        db.write((w) => {
          const current = w.get(operators).get(operator.id)
          if (current === undefined || current.version !== operator.version - 1) {
            return Result.fail(staleWrite("Operator", operator.id, operator.version - 1))
          }
          w.mutable(operators).set(operator.id, operator)
          return Result.succeed(undefined)
        }),
      list: () => db.read((r) => [...r.get(operators).values()].sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    })
  })
)
