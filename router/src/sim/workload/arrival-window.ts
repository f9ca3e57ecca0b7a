import type { Workload } from './workload';
import type { WorkloadRequest } from './workload-request';

/**
 * A stretch of an open-loop workload's arrivals, `[fromMs, untilMs)`, replayed on its own: arrival times are
 * shifted so the stretch starts at 0, requests are renumbered from 0, and a request whose dependency (an
 * earlier turn) arrived before the stretch is sent as if it had none. `plan` simulates the busiest and quietest
 * windows of a trace this way (with a stretch before each as warm-up) to size autoscaling bounds.
 */
export interface ArrivalWindow {
  readonly fromMs: number;
  readonly untilMs: number;
}

export function workloadWindow(workload: Workload, window: ArrivalWindow): Workload {
  const { fromMs, untilMs } = window;
  if (!(fromMs >= 0 && untilMs > fromMs)) throw new RangeError(`an arrival window needs 0 ≤ fromMs < untilMs (got ${fromMs}..${untilMs})`);
  if (workload.load.mode === 'closed') throw new RangeError('an arrival window needs an open-loop workload: a closed loop has no arrival times');
  return {
    ...workload,
    expectedRequests: workload.expectedRequests,
    expectedRequestsExact: false,
    notes: [...workload.notes, `Only arrivals from ${fromMs / 1000} s to ${untilMs / 1000} s of the workload, replayed from 0 s.`],
    *requests(): Generator<WorkloadRequest, void, undefined> {
      const kept = new Set<string>();
      let index = 0;
      for (const request of workload.requests()) {
        if (request.arrivalMs < fromMs) continue;
        if (request.arrivalMs >= untilMs) return;
        kept.add(request.id);
        const dependsOnId = request.dependsOnId !== undefined && kept.has(request.dependsOnId) ? request.dependsOnId : undefined;
        const { dependsOnId: _dropped, ...rest } = request;
        yield { ...rest, index: index++, arrivalMs: request.arrivalMs - fromMs, ...(dependsOnId !== undefined ? { dependsOnId } : {}) } as WorkloadRequest;
      }
    },
  };
}
