/**
 * The use cases over the driven adapters, composed once for every command: `serve` hands them to
 * the HTTP server, the operator commands call them directly, so both act through the same code on
 * the same database. A use case the server needs and this list lacks fails `tsc` in Serve.ts.
 */
import type { TenderConfig } from "@tender/adapters/Config"
import * as Infrastructure from "@tender/adapters/Infrastructure"
import type { InfrastructureError } from "@tender/adapters"
import { UseCases } from "@tender/domain"
import { type Context, Effect, Layer } from "effect"
import type { Command } from "effect/cli"
import { command } from "./Cli.ts"
import * as Output from "./Output.ts"

/** The use cases, plus the ports they sit on (the HTTP server also needs some ports directly). */
export const layer = (config: TenderConfig) =>
  UseCases.layer.pipe(
    Layer.provideMerge(Infrastructure.layer(config))
  )

/**
 * A command that calls one use case over the configured storage and prints its result: the shape
 * of every operator command (accounts, payments, …).
 */
export const useCaseCommand = <Id extends Layer.Success<ReturnType<typeof layer>>, S>(useCase: Context.Service<Id, S>) =>
<const Name extends string, const Config extends Command.Command.Config, A, E>(
  name: Name,
  config: Config,
  run: (service: S, input: Command.Command.Config.Infer<Config>) => Effect.Effect<A, E>,
  present: (input: Command.Command.Config.Infer<Config>) => Output.Presentation<A>
) =>
  command(name, config, (input, invocation) =>
    useCase.use((service) => run(service, input)).pipe(
      Effect.flatMap((result) => Output.print(result, present(input), invocation.json)),
      Effect.provide(layer(invocation.config))
      // `Id` is one of the layer's services (the constraint above); the compiler cannot reduce
      // Exclude<Id, …> for a type parameter, so the requirement is asserted gone.
    ) as Effect.Effect<void, E | InfrastructureError>)
