import type { Rng } from '../../common/seeded-rng';
import type { InstanceView } from '../routing-policy';
import type { Picker } from './stage';

const exp = Math.exp;

/**
 * `softmax` at temperature 0 is the best score (ties uniformly at random, one Rng draw only on a tie); above 0, a softmax draw
 * over the scores min-max normalized to [0, 1] and divided by the temperature (one draw), so the temperature means
 * the same whatever the scores' scale.
 */
export function softmaxPicker<Candidate extends { readonly view: InstanceView }, Reason extends string>(
  temperature: number,
  rng: Rng,
  reason: Reason,
  /** 'max-score' where a policy only ever uses temperature 0 (llm-d's max-score picker). */
  name: 'softmax' | 'max-score' = 'softmax',
): Picker<Candidate, Reason, unknown> {
  return {
    kind: 'picker',
    name,
    pick(candidates, scores) {
      const n = candidates.length;
      let max = -Infinity;
      let min = Infinity;
      for (let i = 0; i < n; i++) {
        if (scores[i] > max) max = scores[i];
        if (scores[i] < min) min = scores[i];
      }
      const range = max - min;
      const weight = (i: number) =>
        temperature === 0 || range === 0 ? (scores[i] === max ? 1 : 0) : exp((scores[i] - max) / range / temperature);
      let total = 0;
      for (let i = 0; i < n; i++) total += weight(i);
      let draw = (temperature === 0 || range === 0) && total === 1 ? 0 : rng.next() * total;
      for (let i = 0; i < n; i++) {
        const w = weight(i);
        if (w > 0 && draw < w) return { instance: candidates[i].view.id, reason };
        draw -= w;
      }
      let last = n - 1;
      while (weight(last) === 0) last--;
      return { instance: candidates[last].view.id, reason };
    },
  };
}
