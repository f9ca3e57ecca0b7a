/**
 * Backends that fail without dying, and the router's documented policy for each (docs/reliability.md):
 *  - never answers (accepts, reads, stays silent): `upstreamHeadersTimeoutMs` ends the wait with
 *    504 upstream_timeout, the upstream request is aborted and the in-flight slot released;
 *  - gray failure (answers slowly, passes health checks): not ejected; it is avoided through its in-flight
 *    count — once it holds `concurrencyThreshold` requests, new requests for its keys spill to the least loaded
 *    instance (threshold-spill) — and its keys come back as soon as it drains;
 *  - answers 429 / 500 / 503: passed through unchanged on the OpenAI paths and never retried on another
 *    instance (the backend did receive the request; OpenAI clients retry these statuses with backoff themselves,
 *    and a router retry would multiply their retries); on the SageMaker runtime paths the same answers become
 *    424 ModelError with OriginalStatusCode, as SageMaker does.
 */
import { request } from 'undici';
import { chaosBody, openLoopFor, sendChaosRequest, tally, type Outcome } from './chaos-client';
import { loadCounters, nonZero, startChaosStack, until } from './chaos-stack';

export interface FaultResult {
  readonly scenario: string;
  readonly figures: Record<string, unknown>;
  readonly violations: string[];
}

/** A backend that never answers: every request ends with 504 upstream_timeout and no slot stays taken. */
export async function runNeverAnswers(o: { requests: number; upstreamHeadersTimeoutMs: number }): Promise<FaultResult> {
  const stack = await startChaosStack(
    1,
    { hang: true },
    { limits: { upstreamHeadersTimeoutMs: o.upstreamHeadersTimeoutMs } },
  );
  const violations: string[] = [];
  try {
    const outcomes: Outcome[] = await Promise.all(
      Array.from({ length: o.requests }, (_, i) =>
        sendChaosRequest({
          url: stack.router.url,
          body: chaosBody(`h${i}`, i % 2 === 0),
          stream: i % 2 === 0,
          agent: stack.agent,
        }),
      ),
    );
    const bad = outcomes.filter((x) => x.kind !== 'http_error' || x.status !== 504 || x.code !== 'upstream_timeout');
    if (bad.length > 0)
      violations.push(`${bad.length} requests did not end with 504 upstream_timeout: ${JSON.stringify(tally(bad))}`);
    await until(() => stack.backends[0].openResponses === 0, 5000);
    if (stack.backends[0].openResponses !== 0)
      violations.push(`${stack.backends[0].openResponses} upstream requests still open at the silent backend`);
    const left = nonZero(await loadCounters(stack.router));
    if (Object.keys(left).length > 0) violations.push(`load counters not 0: ${JSON.stringify(left)}`);
    const ms = outcomes.map((x) => x.ms);
    return {
      scenario: 'never answers',
      figures: {
        requests: o.requests,
        outcomes: tally(outcomes),
        upstreamHeadersTimeoutMs: o.upstreamHeadersTimeoutMs,
        slowestMs: Math.round(Math.max(...ms)),
      },
      violations,
    };
  } finally {
    await stack.close();
  }
}

/**
 * Gray failure: one of three backends answers every request `slowMs` late but passes its health checks.
 * Closed-loop load with `concurrency` workers over many keys: the slow instance never holds much more than
 * `concurrencyThreshold` requests, the spill shows in threshold-spill decisions, nothing fails; when it turns
 * fast again, a key it owns lands on it again (prefix-affinity).
 */
// eslint-disable-next-line max-lines-per-function -- a benchmark or example script read top to bottom as one scenario
export async function runGrayFailure(o: {
  durationMs: number;
  concurrency: number;
  slowMs: number;
  concurrencyThreshold: number;
}): Promise<FaultResult> {
  const stack = await startChaosStack(
    3,
    {},
    {
      policy: { name: 'sagemaker-prefix-aware', concurrencyThreshold: o.concurrencyThreshold },
      healthCheck: { intervalMs: 200 },
    },
  );
  const violations: string[] = [];
  const slow = stack.backends[0];
  const slowId = stack.router.backends[0].id;
  slow.behavior.responseDelayMs = o.slowMs;
  try {
    const outcomes: Outcome[] = [];
    let maxInFlightOnSlow = 0;
    let n = 0;
    const deadline = performance.now() + o.durationMs;
    const watch = setInterval(
      () => (maxInFlightOnSlow = Math.max(maxInFlightOnSlow, stack.router.backends[0].inFlight)),
      5,
    );
    await Promise.all(
      Array.from({ length: o.concurrency }, async () => {
        while (performance.now() < deadline) {
          const stream = n % 2 === 0;
          outcomes.push(
            await sendChaosRequest({
              url: stack.router.url,
              body: chaosBody(`g${n++ % 48}`, stream),
              stream,
              agent: stack.agent,
            }),
          );
        }
      }),
    );
    clearInterval(watch);
    const reasons = await decisionsByReason(stack.router.metricsRegistry, slowId);
    const failed = outcomes.filter((x) => x.kind !== 'ok');
    if (failed.length > 0) violations.push(`${failed.length} requests failed: ${JSON.stringify(tally(failed))}`);
    if (!stack.router.backends[0].healthy)
      violations.push('the slow backend was ejected although it passes its health checks');
    // Decide and commit run in one turn of the event loop, so the slow instance is never given a request while it
    // holds the threshold — unless every instance does (all-saturated), which `concurrency` below 3 × threshold rules out.
    if (o.concurrency < 3 * o.concurrencyThreshold && maxInFlightOnSlow > o.concurrencyThreshold)
      violations.push(
        `the slow instance held ${maxInFlightOnSlow} requests, above the threshold ${o.concurrencyThreshold}`,
      );
    if ((reasons.spilledAway ?? 0) === 0) violations.push('no request spilled away from the slow instance');
    // Recovery: the instance answers normally again; once drained, its own keys come back to it.
    slow.behavior.responseDelayMs = 0;
    await until(() => stack.router.backends[0].inFlight === 0, 5000);
    let backOnSlow = 0;
    for (let k = 0; k < 48; k++) {
      const res = await request(`${stack.router.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: chaosBody(`g${k}`, false),
      });
      await res.body.dump();
      if (
        res.headers['x-prefix-router-instance'] === stack.router.backends[0].name &&
        res.headers['x-prefix-router-decision'] === 'prefix-affinity'
      )
        backOnSlow++;
    }
    if (backOnSlow === 0) violations.push('no key came back to the recovered instance');
    const left = nonZero(await loadCounters(stack.router));
    if (Object.keys(left).length > 0) violations.push(`load counters not 0: ${JSON.stringify(left)}`);
    return {
      scenario: 'gray failure',
      figures: {
        requests: outcomes.length,
        outcomes: tally(outcomes),
        slowMs: o.slowMs,
        concurrencyThreshold: o.concurrencyThreshold,
        maxInFlightOnSlow,
        decisionsForSlowKeys: reasons,
        keysBackOnRecoveredInstance: `${backOnSlow} of 48`,
      },
      violations,
    };
  } finally {
    await stack.close();
  }
}

/** Decisions that chose the slow instance by reason, and spills (threshold-spill / all-saturated) to the others. */
async function decisionsByReason(
  registry: import('prom-client').Registry,
  slowId: string,
): Promise<Record<string, number>> {
  const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === 'prefix_router_decisions_total');
  const out: Record<string, number> = {};
  for (const v of metric?.values ?? []) {
    const reason = String(v.labels.reason);
    if (v.labels.instance === slowId) out[`onSlow:${reason}`] = (out[`onSlow:${reason}`] ?? 0) + v.value;
    else if (reason === 'threshold-spill' || reason === 'all-saturated')
      out.spilledAway = (out.spilledAway ?? 0) + v.value;
  }
  return out;
}

/** 429 / 500 / 503 from a backend: passed through once, never retried elsewhere; 424 ModelError on runtime paths. */
export async function runErrorStatuses(o: { requestsPerStatus: number }): Promise<FaultResult> {
  const violations: string[] = [];
  const figures: Record<string, unknown> = {};
  for (const status of [429, 500, 503]) {
    const stack = await startChaosStack(2, { errorStatus: status });
    try {
      const outcomes: Outcome[] = [];
      await openLoopFor(200, (o.requestsPerStatus / 200) * 1000, async (i) => {
        outcomes.push(
          await sendChaosRequest({
            url: stack.router.url,
            body: chaosBody(`e${i}`, i % 2 === 0),
            stream: i % 2 === 0,
            agent: stack.agent,
          }),
        );
      });
      const runtime = await request(`${stack.router.url}/endpoints/ep/invocations`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: chaosBody('rt', false),
      });
      const runtimeBody = (await runtime.body.json()) as { OriginalStatusCode?: number; error?: { code?: string } };
      const passedThrough = outcomes.filter((x) => x.status === status).length;
      if (passedThrough !== outcomes.length)
        violations.push(
          `${status}: ${outcomes.length - passedThrough} answers were not the backend's ${status}: ${JSON.stringify(tally(outcomes))}`,
        );
      const completed = stack.router.backends.reduce((n, b) => n + b.completed, 0);
      if (completed !== outcomes.length + 1)
        violations.push(
          `${status}: backends completed ${completed} requests for ${outcomes.length + 1} sent (a retry happened)`,
        );
      if (
        runtime.statusCode !== 424 ||
        runtimeBody.OriginalStatusCode !== status ||
        runtimeBody.error?.code !== 'model_error'
      ) {
        violations.push(`${status}: runtime path answered ${runtime.statusCode} ${JSON.stringify(runtimeBody)}`);
      }
      const left = nonZero(await loadCounters(stack.router));
      if (Object.keys(left).length > 0) violations.push(`${status}: load counters not 0: ${JSON.stringify(left)}`);
      figures[String(status)] = {
        sent: outcomes.length,
        passedThrough,
        retried: completed - outcomes.length - 1,
        runtimeApi: `${runtime.statusCode} ${runtimeBody.error?.code}`,
      };
    } finally {
      await stack.close();
    }
  }
  return { scenario: '429 / 500 / 503', figures, violations };
}
