/**
 * Logs and traces of the long-running processes (`tender serve`, `tender worker`; issue 13, item 5).
 *
 * Logs: `TENDER_LOG_FORMAT=json` writes one JSON object per line to stdout — `timestamp`, `level`,
 * `message`, `request_id` when the line was logged while serving a request (the gateway annotates
 * it), other annotations, `cause` — and `pretty` the human form. Unset: json unless stdout is a
 * terminal (containers and service managers get json, a developer's shell the pretty form).
 * Whatever the format, every line passes `redact`: a card number, a CVC next to its key, an API key,
 * a signing secret, a card token or a bearer credential never reaches the output, whoever logged it.
 *
 * Traces: with `OTEL_EXPORTER_OTLP_ENDPOINT` set, spans go to it through Effect's OTLP tracer
 * (OTLP/HTTP, protobuf by default; `OTEL_EXPORTER_OTLP_PROTOCOL=http/json` for JSON), named by
 * `OTEL_SERVICE_NAME` (default `tender`). Unset: no tracer layer at all, so the server makes no
 * spans (Effect's HTTP server skips them under the native tracer): no cost.
 */
import { Card } from "@tender/domain"
import { Cause, Effect, Layer, Logger, References } from "effect"
import { FetchHttpClient } from "effect/http"
import { OtlpSerialization, OtlpTracer } from "effect/observability"
import { InfrastructureError } from "./InfrastructureError.ts"

export type LogFormat = "json" | "pretty"

export interface TelemetryOptions {
  /** TENDER_LOG_FORMAT; unset → json unless stdout is a terminal. */
  readonly logFormat?: LogFormat | undefined
  /** Where each log line goes (default stdout); tests capture it. */
  readonly write?: ((line: string) => void) | undefined
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL (`/v1/traces` is appended); unset → no tracing. */
  readonly otlpEndpoint?: string | undefined
  /** OTEL_EXPORTER_OTLP_PROTOCOL: `http/protobuf` (default) or `http/json`. */
  readonly otlpProtocol?: string | undefined
  /** OTEL_SERVICE_NAME (default `tender`). */
  readonly serviceName?: string | undefined
  /** How often spans are sent (default 5 s; tests shorten it). */
  readonly exportIntervalMs?: number | undefined
}

export const optionsFromEnv = (env: Record<string, string | undefined> = process.env): TelemetryOptions => {
  const format = env.TENDER_LOG_FORMAT?.trim().toLowerCase()
  if (format !== undefined && format !== "" && format !== "json" && format !== "pretty") {
    throw new Error(`TENDER_LOG_FORMAT must be json or pretty, got ${JSON.stringify(env.TENDER_LOG_FORMAT)}`)
  }
  return {
    logFormat: format === "json" || format === "pretty" ? format : undefined,
    otlpEndpoint: env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined,
    otlpProtocol: env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL || env.OTEL_EXPORTER_OTLP_PROTOCOL || undefined,
    serviceName: env.OTEL_SERVICE_NAME || undefined
  }
}

// --- redaction ---------------------------------------------------------------------------------

/**
 * 13–19 digits starting as card numbers do (2–6: Mastercard, Amex, Visa, Discover…; not 1, so
 * millisecond timestamps stay), possibly grouped by single spaces or dashes, not inside a longer number.
 */
const CARD_NUMBER = /(?<![\d])[2-6](?:[ -]?\d){12,18}(?![\d])/g
// Quotes may come escaped (`\"cvc\":\"123\"`): an object logged as JSON is escaped again when the line is.
const CVC = /((?:\\?["'])?(?:cvc|cvv|cvc2|cvv2|security_code|card_code)(?:\\?["'])?\s*(?:[:=]|=>)\s*(?:\\?["'])?)\d{3,4}\b/gi
const SECRETS = /\b(sk_(?:test|live)_|whsec_|tok_)[A-Za-z0-9]+|(_secret_)[0-9a-f]+|\bBearer\s+\S+/g

/**
 * A log line with card data and credentials masked: card numbers (those passing the Luhn check,
 * plain or grouped), CVCs named as such, secret keys, signing secrets, card tokens and bearer
 * credentials. A last line of defence: nothing is meant to log them in the first place.
 */
export const redact = (text: string): string =>
  text
    .replace(CARD_NUMBER, (match) => Card.luhnValid(match.replace(/[ -]/g, "")) ? "[card number]" : match)
    .replace(CVC, "$1[cvc]")
    .replace(SECRETS, (_match, key: string | undefined, clientSecret: string | undefined) => {
      const prefix = key ?? clientSecret
      return prefix === undefined ? "Bearer [redacted]" : `${prefix}[redacted]`
    })

// --- loggers -----------------------------------------------------------------------------------

const text = (value: unknown): string => {
  if (typeof value === "string") return value
  if (value instanceof Error) return value.message
  try {
    return JSON.stringify(value) ?? String(value)
  } catch {
    return String(value)
  }
}

/** One JSON object per line: timestamp, level, message, request_id (when serving a request), annotations, cause. */
const jsonLogger = (write: (line: string) => void) =>
  Logger.make(({ cause, date, fiber, logLevel, message }) => {
    const parts = Array.isArray(message) ? message : [message]
    const entry: Record<string, unknown> = {
      timestamp: date.toISOString(),
      level: logLevel.toLowerCase(),
      message: parts.map(text).join(" ")
    }
    for (const [key, value] of Object.entries(fiber.getRef(References.CurrentLogAnnotations) as Record<string, unknown>)) {
      if (!(key in entry)) entry[key] = value
    }
    if (cause.reasons.length > 0) entry.cause = Cause.pretty(cause)
    let line: string
    try {
      line = JSON.stringify(entry)
    } catch {
      // An annotation JSON cannot hold (a cycle, a bigint): its text instead, never a lost line.
      line = JSON.stringify(Object.fromEntries(Object.entries(entry).map(([key, value]) => [key, typeof value === "string" ? value : String(value)])))
    }
    write(redact(line) + "\n")
  })

const prettyLogger = (write: (line: string) => void) =>
  Logger.map(Logger.formatLogFmt, (line) => write(redact(line) + "\n"))

const stdout = (line: string) => void process.stdout.write(line)

export const loggerLayer = (options: TelemetryOptions = {}): Layer.Layer<never> => {
  const write = options.write ?? stdout
  const format = options.logFormat ?? (process.stdout.isTTY ? "pretty" : "json")
  return Logger.layer([format === "json" ? jsonLogger(write) : prettyLogger(write)])
}

// --- traces ------------------------------------------------------------------------------------

/** The OTLP tracer when an endpoint is configured; the empty layer (no tracer, no spans) otherwise. */
export const tracerLayer = (options: TelemetryOptions = {}): Layer.Layer<never> => {
  if (options.otlpEndpoint === undefined) return Layer.empty
  const url = `${options.otlpEndpoint.replace(/\/+$/, "")}/v1/traces`
  return OtlpTracer.layer({
    url,
    resource: { serviceName: options.serviceName ?? "tender" },
    ...(options.exportIntervalMs === undefined ? {} : { exportInterval: options.exportIntervalMs })
  }).pipe(
    Layer.provide(options.otlpProtocol === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
    Layer.provide(FetchHttpClient.layer)
    // Typed as providing nothing: its output is the tracer (a reference) and the exporter's flusher,
    // which nothing of Tender asks for by type.
  ) as unknown as Layer.Layer<never>
}

/** Logs and traces as configured (default: the environment's): what `serve` and `worker` run under. */
export const layer = (options?: TelemetryOptions): Layer.Layer<never, InfrastructureError> =>
  Layer.unwrap(Effect.map(
    options === undefined
      ? Effect.try({ try: () => optionsFromEnv(), catch: (error) => new InfrastructureError({ message: (error as Error).message }) })
      : Effect.succeed(options),
    (resolved) => Layer.merge(loggerLayer(resolved), tracerLayer(resolved))
  ))
