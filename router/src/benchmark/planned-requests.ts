import type { LoadShape } from '../workload/load-shape';

export interface PlannedRequests {
  /** Requests the run is planned to send; null when unknown. */
  readonly expected: number | null;
  /** False when `expected` is an estimate (shown as ≈ in progress). */
  readonly exact: boolean;
}

/**
 * How many requests a live run will send, for its progress line: the workload's own count, capped by
 * --max-requests and, when --duration ends the run first, by what fits in the duration: the planned arrivals of
 * an open Poisson loop (rate × duration), else the pace so far extrapolated to the duration (closed loops and
 * traces send as fast as completions or timestamps allow, which is only known while running).
 */
export function plannedRequests(
  workload: { readonly expectedRequests: number; readonly expectedRequestsExact: boolean; readonly load: LoadShape },
  limits: { readonly maxRequests: number; readonly durationMs: number },
  sofar: { readonly sent: number; readonly modelMs: number },
): PlannedRequests {
  let expected = Math.min(workload.expectedRequests, limits.maxRequests);
  let exact = workload.expectedRequestsExact || limits.maxRequests <= workload.expectedRequests;
  if (Number.isFinite(limits.durationMs)) {
    let byDuration: number | null = null;
    if (workload.load.mode === 'open-poisson') byDuration = (workload.load.ratePerSecond * limits.durationMs) / 1000;
    else if (sofar.sent > 0 && sofar.modelMs > 0)
      byDuration = Math.max(sofar.sent, (sofar.sent * limits.durationMs) / Math.min(sofar.modelMs, limits.durationMs));
    if (byDuration !== null && byDuration < expected) {
      expected = Math.max(sofar.sent, Math.round(byDuration));
      exact = false;
    }
  }
  return Number.isFinite(expected) && expected > 0 ? { expected, exact } : { expected: null, exact: false };
}
