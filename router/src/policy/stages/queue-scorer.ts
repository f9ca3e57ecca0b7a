import type { InstanceView } from '../routing-policy';
import type { Scorer } from './stage';

/** Requests waiting on a pod: in flight and not yet past their first token. */
function waitingOf(view: InstanceView): number {
  return Math.max(0, view.inFlight - (view.decodeSequences ?? 0));
}

/**
 * llm-d's queue scorer: the pods' waiting requests min-max normalized, fewest scoring 1 and most 0 (all 1 when
 * equal). Waiting = in flight and not yet past the first token (vLLM's num_requests_waiting is not in the view).
 */
export function queueScorer<Candidate extends { readonly view: InstanceView }>(
  weight: number,
): Scorer<Candidate, unknown> {
  return {
    kind: 'scorer',
    name: 'queue',
    weight,
    score(candidates, _facts, scores) {
      let min = Infinity;
      let max = -Infinity;
      for (const c of candidates) {
        const w = waitingOf(c.view);
        if (w < min) min = w;
        if (w > max) max = w;
      }
      for (let i = 0; i < candidates.length; i++)
        scores[i] = max === min ? 1 : (max - waitingOf(candidates[i].view)) / (max - min);
    },
  };
}
