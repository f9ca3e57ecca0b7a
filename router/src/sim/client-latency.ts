import { SeededRng } from '../common/seeded-rng';
import type { RequestRecord } from '../report/request-record';

/** A range of milliseconds, drawn uniformly per request. */
export interface MsRange {
  readonly min: number;
  readonly max: number;
}

/**
 * Time a client sees that no engine spends: a managed router's per-request overhead (AWS reports 1.3–1.9 ms
 * for SageMaker's routing) and the network round trip between client and endpoint. Both add to the TTFT and
 * E2E the client measures; neither occupies an engine. Off (undefined) by default: the simulation then measures
 * at the router's door.
 */
export interface ClientLatency {
  readonly routerOverheadMs?: MsRange;
  readonly networkRttMs?: MsRange;
}

/** AWS's published per-request overhead of SageMaker's managed routing. */
export const AWS_ROUTER_OVERHEAD_MS: MsRange = { min: 1.3, max: 1.9 };
export const CLIENT_LATENCY_RANGE_MS = { min: 0, max: 60_000 } as const;

export function checkMsRange(name: string, range: MsRange): void {
  const { min, max } = CLIENT_LATENCY_RANGE_MS;
  if (!(range.min >= min && range.max <= max && range.min <= range.max)) {
    throw new RangeError(
      `${name} must be a range of milliseconds within ${min}..${max} with min ≤ max (got ${range.min}..${range.max})`,
    );
  }
}

function draw(rng: SeededRng, range: MsRange | undefined): number {
  if (range === undefined) return 0;
  return range.min + rng.next() * (range.max - range.min);
}

/**
 * The records as the client sees them: each request's TTFT and E2E grow by its router overhead plus network
 * round trip, drawn from a generator seeded by `seed` in record order (deterministic for a seed). A closed
 * loop's next send is not delayed by it: at the millisecond scale of these sources against requests of
 * hundreds of milliseconds and more, the effect on the engines' load is below what the report resolves.
 */
export function withClientLatency(
  records: readonly RequestRecord[],
  latency: ClientLatency | undefined,
  seed: number,
): readonly RequestRecord[] {
  if (latency === undefined || (latency.routerOverheadMs === undefined && latency.networkRttMs === undefined))
    return records;
  if (latency.routerOverheadMs) checkMsRange('routerOverheadMs', latency.routerOverheadMs);
  if (latency.networkRttMs) checkMsRange('networkRttMs', latency.networkRttMs);
  const rng = new SeededRng(seed).fork('client-latency');
  return records.map((r) => {
    const extra = draw(rng, latency.routerOverheadMs) + draw(rng, latency.networkRttMs);
    return { ...r, ttftMs: r.ttftMs === null ? null : r.ttftMs + extra, e2eMs: r.e2eMs + extra };
  });
}
