import type { Workload } from './workload';
import type { WorkloadRequest } from './workload-request';

/**
 * A stretch of an open-loop workload's arrivals, `[fromMs, untilMs)`, replayed on its own: arrival times are
 * shifted so the stretch starts at 0, requests are renumbered from 0, and a request whose dependency (an
 * earlier turn) arrived before the stretch is sent as if it had none. `plan` sizes autoscaling bounds on the
 * busiest and quietest windows of a workload this way.
 */
export interface ArrivalWindow {
  readonly fromMs: number;
  readonly untilMs: number;
  /**
   * Send the stretch twice, back to back, the first time as warm-up (ids suffixed `~warm-up`): the measured
   * pass then meets caches and queues as its own traffic leaves them, with no backlog from another load level
   * (which the window before it would bring at a fleet sized for this one).
   */
  readonly warmUpWithItself?: boolean;
}

export function workloadWindow(workload: Workload, window: ArrivalWindow): Workload {
  const { fromMs, untilMs } = window;
  if (!(fromMs >= 0 && untilMs > fromMs))
    throw new RangeError(`an arrival window needs 0 ≤ fromMs < untilMs (got ${fromMs}..${untilMs})`);
  if (workload.load.mode === 'closed')
    throw new RangeError('an arrival window needs an open-loop workload: a closed loop has no arrival times');
  return {
    ...workload,
    expectedRequests: workload.expectedRequests,
    expectedRequestsExact: false,
    notes: [
      ...workload.notes,
      `Only arrivals from ${fromMs / 1000} s to ${untilMs / 1000} s of the workload, replayed from 0 s${window.warmUpWithItself ? ' after a first pass of the same arrivals as warm-up' : ''}.`,
    ],
    *requests(): Generator<WorkloadRequest, void, undefined> {
      let index = 0;
      const passes = window.warmUpWithItself
        ? [
            { suffix: '~warm-up', offsetMs: 0 },
            { suffix: '', offsetMs: untilMs - fromMs },
          ]
        : [{ suffix: '', offsetMs: 0 }];
      for (const { suffix, offsetMs } of passes) {
        const kept = new Set<string>();
        for (const request of workload.requests()) {
          if (request.arrivalMs < fromMs) continue;
          if (request.arrivalMs >= untilMs) break;
          kept.add(request.id);
          const dependsOnId =
            request.dependsOnId !== undefined && kept.has(request.dependsOnId)
              ? `${request.dependsOnId}${suffix}`
              : undefined;
          const { dependsOnId: _dropped, ...rest } = request;
          yield {
            ...rest,
            id: `${request.id}${suffix}`,
            index: index++,
            arrivalMs: request.arrivalMs - fromMs + offsetMs,
            ...(dependsOnId !== undefined ? { dependsOnId } : {}),
          };
        }
      }
    },
  };
}
