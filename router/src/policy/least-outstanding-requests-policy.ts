import type { Rng } from '../common/seeded-rng';
import { definePolicy } from './policy-definition';
import type { InstanceView } from './routing-policy';
import { fewestInFlightScorer } from './stages/fewest-in-flight-scorer';
import { HEALTHY_FILTER } from './stages/healthy-filter';
import { maxScorePicker } from './stages/max-score-picker';
import { SERVES_MODEL_FILTER } from './stages/serves-model-filter';
import { INSTANCES_AS_CANDIDATES, MemorylessStagedPolicy } from './stages/staged-policy';

/**
 * SageMaker's LEAST_OUTSTANDING_REQUESTS: the healthy instance with the fewest requests in flight. Ties are
 * broken uniformly at random with the injected Rng, which is drawn from only when there is a tie.
 */
export class LeastOutstandingRequestsPolicy extends MemorylessStagedPolicy<InstanceView, 'least-outstanding'> {
  constructor(rng: Rng) {
    super('least-outstanding-requests', {
      instanceFilters: [SERVES_MODEL_FILTER, HEALTHY_FILTER],
      candidates: INSTANCES_AS_CANDIDATES,
      stages: [fewestInFlightScorer(1), maxScorePicker(rng, 'least-outstanding')],
    });
  }
}

export const leastOutstandingRequestsDefinition = definePolicy({
  name: 'least-outstanding-requests',
  description:
    "SageMaker's LEAST_OUTSTANDING_REQUESTS: fewest in-flight requests; ties broken uniformly by the seeded RNG",
  reasons: ['least-outstanding'],
  stages: [
    { kind: 'filter', name: 'serves-model' },
    { kind: 'filter', name: 'healthy' },
    { kind: 'scorer', name: 'fewest-in-flight', weight: 1 },
    { kind: 'picker', name: 'max-score' },
  ],
  options: [],
  create: (_options, deps) => new LeastOutstandingRequestsPolicy(deps.rng),
});
