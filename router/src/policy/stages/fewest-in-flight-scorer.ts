import type { InstanceView } from '../routing-policy';
import type { Scorer } from './stage';

/** Scores an instance by its requests in flight, fewer is better: minus the count (exact, so ties are exact). */
export function fewestInFlightScorer(weight: number): Scorer<InstanceView, unknown> {
  return {
    kind: 'scorer',
    name: 'fewest-in-flight',
    weight,
    score(candidates, _facts, scores) {
      for (let i = 0; i < candidates.length; i++) scores[i] = fewerInFlightScore(candidates[i]);
    },
    scoreOf: fewerInFlightScore,
  };
}

function fewerInFlightScore(instance: InstanceView): number {
  return -instance.inFlight;
}
