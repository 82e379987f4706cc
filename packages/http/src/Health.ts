/**
 * Probes for load balancers and orchestrators (issue 13, operations), served without a key:
 *
 *   GET /healthz  200 `{"status":"ok"}` whenever the process serves: restart it when this fails.
 *   GET /readyz   200 when the database answers, its migrations are current and (with REDIS_URL)
 *                 Redis answers; 503 `{"status":"not_ready","reason":…,"checks":[…]}` otherwise:
 *                 send it no traffic until it is ready again.
 *
 * The per-IP limit of keyless routes leaves them out (IpLimits.ts): load balancers poll often, from
 * few addresses. A readiness answer is reused for a second, so a burst of probes costs one check.
 */
import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { type Check, Operations } from "@tender/adapters/Operations"

export const HEALTH_PATH = "/healthz"
export const READY_PATH = "/readyz"

export const HEALTH_ROUTES: ReadonlyArray<{ readonly method: string; readonly path: string }> = [
  { method: "GET", path: HEALTH_PATH },
  { method: "GET", path: READY_PATH }
]

const READINESS_CACHE_MS = 1_000

const NO_STORE = { "cache-control": "no-store" }

export const layer = Layer.effectDiscard(Effect.gen(function*() {
  const router = yield* HttpRouter.HttpRouter
  const operations = yield* Operations
  // Probes arriving while a check runs wait for it rather than start their own: a slow database
  // is when load balancers poll hardest.
  const readiness: Effect.Effect<ReadonlyArray<Check>> = yield* Effect.cachedWithTTL(operations.readiness, READINESS_CACHE_MS)

  yield* router.add("GET", HEALTH_PATH, Effect.succeed(HttpServerResponse.jsonUnsafe({ status: "ok" }, { headers: NO_STORE })))
  yield* router.add(
    "GET",
    READY_PATH,
    Effect.map(readiness, (checks) => {
      const failing = checks.filter((check) => !check.ok)
      return failing.length === 0
        ? HttpServerResponse.jsonUnsafe({ status: "ready", checks }, { headers: NO_STORE })
        : HttpServerResponse.jsonUnsafe(
          { status: "not_ready", reason: failing.map((check) => `${check.name}: ${check.reason ?? "failed"}`).join("; "), checks },
          { status: 503, headers: NO_STORE }
        )
    })
  )
}))
