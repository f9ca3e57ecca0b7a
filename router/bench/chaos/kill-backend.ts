/**
 * One of four backends dies at a random moment under steady mixed load (half streamed, 200 ms streams), and
 * comes back `downMs` later on the same port. "Dies": its listening socket and every open connection are closed
 * at once, which is what the router sees when the process is killed (the kernel closes its sockets).
 *
 * Invariants: every request gets exactly one final outcome (a 200, an HTTP error naming its code, or a terminal
 * SSE error event naming its code; never a silent cut); client-visible failures ≤ the requests in flight on the
 * victim when it died; the health checker ejects it within `maxEjectMs` and re-admits it within `maxReadmitMs`
 * of its return; afterwards every load counter is 0.
 */
import { SeededRng } from '../../src/common/seeded-rng';
import { startFakeBackend } from '../fake-openai-backend';
import { chaosBody, openLoopFor, sendChaosRequest, tally, type Outcome } from './chaos-client';
import { loadCounters, nonZero, startChaosStack, until } from './chaos-stack';

export interface KillBackendOptions {
  readonly rate: number;
  readonly durationMs: number;
  readonly downMs: number;
  readonly seed: number;
  readonly maxEjectMs: number;
  readonly maxReadmitMs: number;
}

export interface KillBackendResult {
  readonly requests: number;
  readonly outcomes: Record<string, number>;
  readonly inFlightOnVictimAtKill: number;
  readonly clientVisibleFailures: number;
  readonly ejectedAfterMs: number | undefined;
  readonly readmittedAfterMs: number | undefined;
  readonly healthCheck: { intervalMs: number; timeoutMs: number; failureThreshold: number; recoveryThreshold: number };
  readonly violations: string[];
}

/** Health checking as recommended for fast failover (docs/reliability.md): eject in ≤ 3 × 250 ms + timeout. */
export const FAST_FAILOVER_HEALTH = { intervalMs: 250, timeoutMs: 200, failureThreshold: 3, recoveryThreshold: 2 };

export async function runKillBackend(o: KillBackendOptions): Promise<KillBackendResult> {
  const stack = await startChaosStack(4, { streamChunks: 10, chunkDelayMs: 20 }, { healthCheck: FAST_FAILOVER_HEALTH });
  const rng = new SeededRng(o.seed);
  const victimIndex = Math.floor(rng.next() * 4);
  const victim = stack.backends[victimIndex];
  const outcomes: Outcome[] = [];
  const violations: string[] = [];
  let inFlightOnVictimAtKill = 0;
  let ejectedAfterMs: number | undefined;
  let readmittedAfterMs: number | undefined;
  let revived: Awaited<ReturnType<typeof startFakeBackend>> | undefined;
  const health = (): boolean => stack.router.backends[victimIndex].healthy;
  try {
    const killAt = o.durationMs * (0.2 + 0.3 * rng.next());
    const chaos = (async () => {
      await new Promise((r) => setTimeout(r, killAt));
      // In flight on the victim as the router counts it: dispatched, not finished (includes requests still in
      // transit that the backend has not read yet).
      inFlightOnVictimAtKill = Math.max(stack.router.backends[victimIndex].inFlight, victim.openResponses);
      const killed = performance.now();
      await victim.close();
      if (await until(() => !health(), Math.max(o.downMs, o.maxEjectMs), 5))
        ejectedAfterMs = performance.now() - killed;
      const remaining = o.downMs - (performance.now() - killed);
      if (remaining > 0) await new Promise((r) => setTimeout(r, remaining));
      revived = await startFakeBackend({
        name: `${victim.name}-revived`,
        port: victim.port,
        record: false,
        behavior: { streamChunks: 10, chunkDelayMs: 20 },
      });
      const back = performance.now();
      if (await until(health, Math.max(o.maxReadmitMs * 3, 5000), 5)) readmittedAfterMs = performance.now() - back;
    })();
    const requests = await openLoopFor(o.rate, o.durationMs, async (i) => {
      const stream = i % 2 === 0;
      outcomes.push(
        await sendChaosRequest({
          url: stack.router.url,
          body: chaosBody(`k${Math.floor(rng.next() * 64)}`, stream),
          stream,
          agent: stack.agent,
        }),
      );
    });
    await chaos;
    const failures = outcomes.filter((x) => x.kind !== 'ok');
    for (const f of failures) {
      if (f.kind === 'cut') violations.push(`a request ended without a final outcome (status ${f.status ?? 'none'})`);
    }
    if (failures.length > inFlightOnVictimAtKill)
      violations.push(
        `${failures.length} client-visible failures, more than the ${inFlightOnVictimAtKill} requests in flight on the victim`,
      );
    if (ejectedAfterMs === undefined || ejectedAfterMs > o.maxEjectMs)
      violations.push(`victim ejected after ${ejectedAfterMs?.toFixed(0) ?? 'never'} ms (limit ${o.maxEjectMs})`);
    if (readmittedAfterMs === undefined || readmittedAfterMs > o.maxReadmitMs)
      violations.push(
        `victim re-admitted after ${readmittedAfterMs?.toFixed(0) ?? 'never'} ms (limit ${o.maxReadmitMs})`,
      );
    await until(() => stack.router.backends.every((b) => b.inFlight === 0), 5000);
    const left = nonZero(await loadCounters(stack.router));
    if (Object.keys(left).length > 0) violations.push(`load counters not 0 after the run: ${JSON.stringify(left)}`);
    return {
      requests,
      outcomes: tally(outcomes),
      inFlightOnVictimAtKill,
      clientVisibleFailures: failures.length,
      ejectedAfterMs,
      readmittedAfterMs,
      healthCheck: FAST_FAILOVER_HEALTH,
      violations,
    };
  } finally {
    await stack.close();
    await revived?.close();
  }
}
