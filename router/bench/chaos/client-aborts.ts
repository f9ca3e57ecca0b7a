/**
 * Client aborts at random points. `requests` chat requests (half streamed) at `concurrency`; a seeded random
 * third are cut by the client: while uploading the body, after the body but before the response headers, or
 * after the first streamed bytes. The backend holds an aborted request's response open at the matching point
 * (x-fake-hold-after-chunks), so the only way it can end is the router closing the upstream connection.
 *
 * Invariants: afterwards every in-flight gauge and load counter is exactly 0; every aborted request that reached
 * a backend ended there as a closed connection (none is left open, none "finished"); every request that was not
 * aborted got a complete 200; requests counted 499 never exceed the aborts.
 */
import { SeededRng } from '../../src/common/seeded-rng';
import type { RouterOptions } from '../../src/config';
import { CHAOS_ID_HEADER, HOLD_HEADER } from '../fake-openai-backend';
import { chaosBody, sendChaosRequest, tally, type AbortPlan, type Outcome } from './chaos-client';
import { loadCounters, nonZero, requestsByStatus, startChaosStack, until } from './chaos-stack';

export interface ClientAbortOptions {
  readonly requests: number;
  readonly concurrency: number;
  readonly seed: number;
  /** The routing policy (default: the router's default). Policies that keep per-instance load (cache-aware)
   *  must release it on every abort too. */
  readonly policy?: RouterOptions['policy'];
}

export interface ClientAbortResult {
  readonly requests: number;
  readonly aborted: Record<AbortPlan, number>;
  /** Aborted requests that had reached a backend (all must have ended there as closed connections). */
  readonly abortsSeenByBackends: number;
  readonly closedAtBackends: number;
  readonly outcomes: Record<string, number>;
  readonly counted499: number;
  readonly countersAfter: Record<string, number>;
  readonly violations: string[];
}

const PLANS: readonly AbortPlan[] = ['during-upload', 'before-headers', 'mid-stream'];

export async function runClientAborts(o: ClientAbortOptions): Promise<ClientAbortResult> {
  const stack = await startChaosStack(2, { streamChunks: 4 }, o.policy !== undefined ? { policy: o.policy } : {});
  const rng = new SeededRng(o.seed);
  const aborted: Record<AbortPlan, number> = { 'during-upload': 0, 'before-headers': 0, 'mid-stream': 0 };
  const abortedIds = new Set<string>();
  const outcomes: Outcome[] = [];
  const violations: string[] = [];
  try {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < o.requests) {
        const i = next++;
        const stream = rng.next() < 0.5;
        const abort =
          rng.next() < 1 / 3
            ? stream
              ? PLANS[Math.floor(rng.next() * 3)]
              : PLANS[Math.floor(rng.next() * 2)]
            : undefined;
        const id = `r${i}`;
        const headers: Record<string, string> = { [CHAOS_ID_HEADER]: id };
        if (abort !== undefined) {
          aborted[abort]++;
          abortedIds.add(id);
          headers[HOLD_HEADER] = abort === 'mid-stream' ? String(1 + Math.floor(rng.next() * 2)) : '0';
        }
        const outcome = await sendChaosRequest({
          url: stack.router.url,
          body: chaosBody(`k${i % 97}`, stream),
          stream,
          headers,
          agent: stack.agent,
          ...(abort !== undefined ? { abort, abortDelayMs: Math.floor(rng.next() * 5) } : {}),
        });
        outcomes.push(outcome);
        if (abort === undefined && outcome.kind !== 'ok')
          violations.push(`request ${id} (not aborted) ended ${outcome.kind}${outcome.code ? `:${outcome.code}` : ''}`);
      }
    };
    await Promise.all(Array.from({ length: o.concurrency }, worker));
    // Aborts propagate asynchronously (client socket → router → upstream socket → backend): wait, bounded.
    await until(
      () => stack.router.backends.every((b) => b.inFlight === 0) && stack.backends.every((b) => b.openResponses === 0),
      10_000,
    );
    const countersAfter = await loadCounters(stack.router);
    const left = nonZero(countersAfter);
    if (Object.keys(left).length > 0) violations.push(`load counters not 0 after the run: ${JSON.stringify(left)}`);
    let seen = 0;
    let closed = 0;
    for (const b of stack.backends) {
      if (b.openResponses !== 0) violations.push(`${b.name} still has ${b.openResponses} open responses`);
      for (const [id, end] of b.outcomes) {
        if (!abortedIds.has(id)) {
          if (end !== 'finished') violations.push(`${id} (not aborted) ended ${end} at ${b.name}`);
          continue;
        }
        seen++;
        if (end === 'closed') closed++;
        else violations.push(`${id} was aborted by its client but ${b.name} finished it`);
      }
    }
    const byStatus = await requestsByStatus(stack.router);
    const counted499 = byStatus['499'] ?? 0;
    if (counted499 > abortedIds.size)
      violations.push(`${counted499} requests counted 499, more than the ${abortedIds.size} aborts`);
    if (counted499 < seen) violations.push(`${seen} aborts reached a backend but only ${counted499} were counted 499`);
    return {
      requests: o.requests,
      aborted,
      abortsSeenByBackends: seen,
      closedAtBackends: closed,
      outcomes: tally(outcomes),
      counted499,
      countersAfter,
      violations,
    };
  } finally {
    await stack.close();
  }
}
