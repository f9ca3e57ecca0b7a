/**
 * Soak: the router in its own process (so its memory is its own) under a steady mixed load for `durationMs`.
 * RSS, heap (after a full GC), open TCP handles and event-loop delay are sampled after a warm-up and at the end,
 * both at idle (load stopped, `settleMs` later).
 *
 * Invariants (the stated bounds): RSS and heap at the end within `maxGrowthBytes` of the start; open TCP handles
 * at the end no more than at the start plus `maxExtraSockets` (pooled keep-alive connections that have not yet
 * timed out); every request succeeded.
 */
import { startFakeBackend } from '../fake-openai-backend';
import { forkChild } from '../router-overhead';
import type { ChildStats } from '../overhead-child';
import {
  chaosAgent,
  chaosBody,
  openLoopFor,
  percentileMs,
  sendChaosRequest,
  tally,
  type Outcome,
} from './chaos-client';

export interface SoakOptions {
  readonly rate: number;
  readonly durationMs: number;
  readonly warmupMs: number;
  readonly settleMs: number;
  readonly maxGrowthBytes: number;
  readonly maxExtraSockets: number;
}

export interface SoakResult {
  readonly requests: number;
  readonly outcomes: Record<string, number>;
  readonly start: ChildStats;
  readonly end: ChildStats;
  /** Event-loop delay over the soak window (under load). */
  readonly underLoad: { eventLoopDelayP99Ms: number; eventLoopDelayMaxMs: number };
  readonly latencyMs: { p50: number; p99: number };
  readonly violations: string[];
}

export async function runSoak(o: SoakOptions): Promise<SoakResult> {
  const backends = await Promise.all(
    [0, 1].map((i) =>
      startFakeBackend({ name: `soak-${i}`, record: false, behavior: { streamChunks: 5, chunkDelayMs: 5 } }),
    ),
  );
  const router = await forkChild(
    [
      'router',
      JSON.stringify({
        backends: backends.map((b) => b.url),
        port: 0,
        logLevel: 'silent',
        healthCheck: { intervalMs: 1000 },
      }),
    ],
    ['--expose-gc'],
  );
  const agent = chaosAgent(64);
  const url = router.ready.urls[0];
  const violations: string[] = [];
  const outcomes: Outcome[] = [];
  const load = (ms: number, into: Outcome[]): Promise<number> =>
    openLoopFor(o.rate, ms, async (i) => {
      const stream = i % 2 === 0;
      into.push(await sendChaosRequest({ url, body: chaosBody(`s${i % 256}`, stream, 2048), stream, agent }));
    });
  const settle = (): Promise<void> => new Promise((r) => setTimeout(r, o.settleMs));
  try {
    await load(o.warmupMs, []);
    await settle();
    const start = await router.stats();
    const requests = await load(o.durationMs, outcomes);
    const loaded = await router.stats();
    await settle();
    const end = await router.stats();
    const failed = outcomes.filter((x) => x.kind !== 'ok');
    if (failed.length > 0) {
      const details = failed
        .map((x) => [x.errorCode, x.status].filter((v) => v !== undefined).join(' '))
        .filter((d) => d !== '');
      violations.push(
        `${failed.length} requests failed: ${JSON.stringify(tally(failed))}${details.length > 0 ? ` (${[...new Set(details)].join(', ')})` : ''}`,
      );
    }
    if (end.rssBytes - start.rssBytes > o.maxGrowthBytes)
      violations.push(`RSS grew by ${mib(end.rssBytes - start.rssBytes)} MiB (bound ${mib(o.maxGrowthBytes)})`);
    if (end.heapUsedBytes - start.heapUsedBytes > o.maxGrowthBytes)
      violations.push(
        `heap grew by ${mib(end.heapUsedBytes - start.heapUsedBytes)} MiB (bound ${mib(o.maxGrowthBytes)})`,
      );
    if (end.tcpHandles > start.tcpHandles + o.maxExtraSockets)
      violations.push(`${end.tcpHandles} TCP handles at the end, ${start.tcpHandles} at the start`);
    const ms = outcomes.map((x) => x.ms);
    return {
      requests,
      outcomes: tally(outcomes),
      start,
      end,
      underLoad: { eventLoopDelayP99Ms: loaded.eventLoopDelayP99Ms, eventLoopDelayMaxMs: loaded.eventLoopDelayMaxMs },
      latencyMs: { p50: percentileMs(ms, 50), p99: percentileMs(ms, 99) },
      violations,
    };
  } finally {
    agent.destroy();
    await router.stop();
    await Promise.all(backends.map((b) => b.close()));
  }
}

export function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}
