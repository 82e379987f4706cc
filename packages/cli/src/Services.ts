/**
 * The use cases over the driven adapters, composed once for every command: `serve` hands them to
 * the HTTP server, the operator commands call them directly, so both act through the same code on
 * the same database. A use case the server needs and this list lacks fails `tsc` in Serve.ts.
 * Handlers only import this (it loads the domain and the adapters).
 */
import type { TenderConfig } from "@tender/adapters/Config"
import * as Infrastructure from "@tender/adapters/Infrastructure"
import { type Errors, UseCases } from "@tender/domain"
import { type Context, Effect, Layer } from "effect"
import type { Command } from "effect/cli"
import type { Invocation } from "./Cli.ts"
import * as Output from "./Output.ts"

/** The use cases, plus the ports they sit on (the HTTP server also needs some ports directly). */
export const layer = (config: TenderConfig) =>
  UseCases.layer.pipe(
    Layer.provideMerge(Infrastructure.layer(config))
  )

/** What `layer` provides: every use case and port. */
export type Services = Layer.Success<ReturnType<typeof layer>>

/**
 * The handler of a command that calls one use case over the configured storage and prints its
 * result: the shape of every operator command (accounts, payments, …). `run` may use further
 * services of the layer (another use case, to look up an account) and what the CLI runtime provides
 * (Stdio, for progress).
 */
export const useCase = <Id extends Services, S>(useCase: Context.Service<Id, S>) =>
<Input, A, E>(
  run: (service: S, input: Input) => Effect.Effect<A, E, Services | Command.Environment>,
  present: (input: Input) => Output.Presentation<A>
) =>
(input: Input, invocation: Invocation) => {
  // Widened to every service of the layer, so that providing the layer leaves exactly the CLI
  // runtime's part as a concrete type (the compiler cannot reduce Exclude<…> of a type parameter).
  const program: Effect.Effect<void, E | Errors.DomainError, Services | Command.Environment> = useCase.use((service) =>
    run(service, input)
  ).pipe(Effect.flatMap((result) => Output.print(result, present(input), invocation.json)))
  return Effect.provide(program, layer(invocation.config))
}
