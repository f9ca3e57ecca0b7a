/**
 * A router in front of fake backends, in this process, for the chaos scenarios; plus the invariants every
 * scenario checks at its end (all load counters and in-flight gauges back to exactly 0).
 */
import type { Agent } from 'node:http';
import { chaosAgent } from './chaos-client';
import { startFakeBackend, type FakeBackend, type FakeBackendBehavior } from '../fake-openai-backend';
import type { RouterOptions } from '../../src/config';
import { createRouterLogger, startRouter, type RunningRouter } from '../../src/server';

export interface ChaosStack {
  readonly router: RunningRouter;
  readonly backends: FakeBackend[];
  readonly agent: Agent;
  close(): Promise<void>;
}

export async function startChaosStack(
  backends: number,
  behavior: Partial<FakeBackendBehavior>,
  router: Partial<RouterOptions> = {},
): Promise<ChaosStack> {
  const fakes = await Promise.all(
    Array.from({ length: backends }, (_, i) =>
      startFakeBackend({ name: `chaos-${i}`, record: false, behavior: { ...behavior } }),
    ),
  );
  let started: RunningRouter;
  try {
    started = await startRouter(
      // The scenarios read which backend served each answer.
      { port: 0, healthCheck: { intervalMs: 0 }, routingHeaders: 'all', ...router, backends: fakes.map((b) => b.url) },
      { logger: createRouterLogger('silent') },
    );
  } catch (err) {
    await Promise.all(fakes.map((b) => b.close()));
    throw err;
  }
  const agent = chaosAgent(256);
  return {
    router: started,
    backends: fakes,
    agent,
    async close() {
      agent.destroy();
      await started.close();
      await Promise.all(fakes.map((b) => b.close()));
    },
  };
}

/** Per-instance load fields the router keeps while requests are in flight (whichever this router version has). */
const LOAD_FIELDS = ['inFlight', 'queuedPrefillTokens', 'decodeSequences'] as const;

/**
 * Every in-flight gauge and load counter the router keeps, by name: must all be exactly 0 once no request is in
 * flight. Reads both the live per-backend state and the Prometheus gauges /metrics would serve.
 */
export async function loadCounters(router: RunningRouter): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const b of router.backends) {
    const stats = b as unknown as Record<string, unknown>;
    for (const field of LOAD_FIELDS) if (typeof stats[field] === 'number') out[`${b.id} ${field}`] = stats[field];
  }
  for (const metric of await router.metricsRegistry.getMetricsAsJSON()) {
    if (String(metric.type) !== 'gauge' || metric.name === 'prefix_router_backend_healthy') continue;
    for (const v of metric.values) out[`${metric.name}{${Object.values(v.labels).join(',')}}`] = v.value;
  }
  return out;
}

export function nonZero(counters: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(counters).filter(([, v]) => v !== 0));
}

/** Sum of prefix_router_requests_total by status label. */
export async function requestsByStatus(router: RunningRouter): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const metric = (await router.metricsRegistry.getMetricsAsJSON()).find(
    (m) => m.name === 'prefix_router_requests_total',
  );
  for (const v of metric?.values ?? []) {
    const status = String(v.labels.status);
    out[status] = (out[status] ?? 0) + v.value;
  }
  return out;
}

/** Polls until `condition` or `timeoutMs`; returns whether it became true. */
export async function until(condition: () => boolean, timeoutMs: number, stepMs = 10): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, stepMs));
  }
  return true;
}

export class ChaosViolation extends Error {
  constructor(scenario: string, violations: readonly string[]) {
    super(`${scenario}: ${violations.join('; ')}`);
    this.name = 'ChaosViolation';
  }
}
