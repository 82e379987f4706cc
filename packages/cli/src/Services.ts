/**
 * The use cases over the driven adapters, composed once for every command: `serve` hands them to
 * the HTTP server, the operator commands call them directly, so both act through the same code on
 * the same database. A use case the server needs and this list lacks fails `tsc` in Serve.ts.
 */
import type { TenderConfig } from "@tender/adapters/Config"
import * as Infrastructure from "@tender/adapters/Infrastructure"
import { UseCases } from "@tender/domain"
import { Layer } from "effect"

/** The use cases, plus the ports they sit on (the HTTP server also needs some ports directly). */
export const layer = (config: TenderConfig) =>
  UseCases.layer.pipe(
    Layer.provideMerge(Infrastructure.layer(config))
  )
