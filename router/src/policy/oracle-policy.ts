import type { Rng } from '../common/seeded-rng';
import { definePolicy } from './policy-definition';
import type { InstanceView } from './routing-policy';
import { HEALTHY_FILTER } from './stages/healthy-filter';
import { maxScorePicker } from './stages/max-score-picker';
import { predictedTtftScorer } from './stages/predicted-ttft-scorer';
import { SERVES_MODEL_FILTER } from './stages/serves-model-filter';
import { INSTANCES_AS_CANDIDATES, StagedPolicy } from './stages/staged-policy';

/**
 * `oracle` (issue 37), simulator only: sees every engine model's exact prefix cache and queue (InstanceView.engine)
 * and places each request greedily where the engine's own state predicts the earliest first token: its prefill work
 * ahead plus this prompt's uncached part by the engine's actual cache, in fastest-instance time. Ties (idle engines
 * holding nothing of the prompt) are broken uniformly by the seeded RNG. It is the greedy bound the peer tables
 * show: it knows what no router can (evictions, the engine's queue), but it does not plan ahead (where a cold prefix
 * lands decides later hits), so a policy may beat it at a percentile; by how much is what the tables show.
 */
export class OraclePolicy extends StagedPolicy<InstanceView, 'oracle-least-predicted-ttft'> {
  readonly engineState = 'cached-blocks-and-queue';

  constructor(rng: Rng) {
    super('oracle', {
      instanceFilters: [SERVES_MODEL_FILTER, HEALTHY_FILTER],
      candidates: INSTANCES_AS_CANDIDATES,
      stages: [predictedTtftScorer('oracle'), maxScorePicker(rng, 'oracle-least-predicted-ttft')],
    });
  }
}

export const oracleDefinition = definePolicy({
  name: 'oracle',
  description:
    "simulator only: each engine's exact cache and queue, greedy by predicted TTFT (prefill ahead + this prompt's uncached part); serve refuses it",
  reasons: ['oracle-least-predicted-ttft'],
  stages: [
    { kind: 'filter', name: 'serves-model' },
    { kind: 'filter', name: 'healthy' },
    { kind: 'scorer', name: 'predicted-ttft', weight: 1 },
    { kind: 'picker', name: 'max-score' },
  ],
  options: [],
  engineState: 'cached-blocks-and-queue',
  create: (_options, deps) => new OraclePolicy(deps.rng),
});
