/** Operation: every operator, as shown (`tender operators list`). */
import { Effect } from "effect"
import { OperatorRepo } from "../OperatorPorts.ts"
import { viewOf } from "./Load.ts"

export const list = Effect.gen(function*() {
  const operators = yield* (yield* OperatorRepo).list()
  return operators.map(viewOf)
})
