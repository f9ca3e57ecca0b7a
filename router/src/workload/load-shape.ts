import type { Rng } from '../common/seeded-rng';

// Globals are looked up once: in vm contexts (Jest runs tests in one) each global access in a hot loop is slow.
const log = Math.log;

/**
 * How a driver (simulator or live benchmark) sends a workload's requests.
 *
 * - `open-poisson`: send each request at its `arrivalMs` (exponential gaps at `ratePerSecond`), whatever the
 *   server's state: queues grow when the server falls behind, as they do in production.
 * - `open-trace`: send each request at its `arrivalMs`, taken from the trace's timestamps divided by `speedup`.
 * - `closed`: keep `concurrency` requests in flight; when one completes, send the next request in workload
 *   order. `arrivalMs` then only orders requests.
 *
 * Multi-turn order (any mode): a request with `dependsOnId` is never sent before that request has completed.
 * Open loop: release it at max(arrivalMs, dependency's completion time). Closed loop: when a slot frees, send
 * the earliest request in workload order whose dependency (if any) has completed; a blocked request keeps its
 * place and goes first once its dependency completes.
 */
export type LoadShape =
  | { readonly mode: 'open-poisson'; readonly ratePerSecond: number }
  | { readonly mode: 'open-trace'; readonly speedup: number }
  | { readonly mode: 'closed'; readonly concurrency: number };

/** One-line description for reports and logs. */
export function describeLoad(load: LoadShape): string {
  switch (load.mode) {
    case 'open-poisson':
      return `open loop, Poisson arrivals at ${load.ratePerSecond} req/s`;
    case 'open-trace':
      return load.speedup === 1 ? 'open loop, trace timestamps' : `open loop, trace timestamps ÷ ${load.speedup}`;
    case 'closed':
      return `closed loop, ${load.concurrency} in flight`;
  }
}

/**
 * Poisson arrival times in milliseconds, starting after one exponential gap from 0. Infinite: the caller stops
 * at its count or duration.
 */
export function* poissonArrivalsMs(rng: Rng, ratePerSecond: number): Generator<number, never, undefined> {
  if (!(ratePerSecond > 0)) throw new RangeError(`ratePerSecond must be > 0 (got ${ratePerSecond})`);
  const meanGapMs = 1000 / ratePerSecond;
  let t = 0;
  for (;;) {
    t += -log(1 - rng.next()) * meanGapMs;
    yield t;
  }
}

/** A trace timestamp (ms from the trace start) compressed by `speedup` (2 = twice as fast). */
export function compressTraceTime(timestampMs: number, speedup: number): number {
  return timestampMs / speedup;
}
