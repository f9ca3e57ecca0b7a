import type { Rng } from '../common/seeded-rng';
import { definePolicy } from './policy-definition';
import type { InstanceView } from './routing-policy';
import { HEALTHY_FILTER } from './stages/healthy-filter';
import { randomPicker } from './stages/random-picker';
import { SERVES_MODEL_FILTER } from './stages/serves-model-filter';
import { INSTANCES_AS_CANDIDATES, MemorylessStagedPolicy } from './stages/staged-policy';

/** SageMaker's RANDOM: a uniformly random healthy instance, one draw from the injected Rng per decision. */
export class RandomPolicy extends MemorylessStagedPolicy<InstanceView, 'random'> {
  constructor(rng: Rng) {
    super('random', {
      instanceFilters: [SERVES_MODEL_FILTER, HEALTHY_FILTER],
      candidates: INSTANCES_AS_CANDIDATES,
      stages: [randomPicker(rng, 'random')],
    });
  }
}

export const randomDefinition = definePolicy({
  name: 'random',
  description: "SageMaker's RANDOM: uniform over healthy instances, one RNG draw per decision",
  reasons: ['random'],
  stages: [
    { kind: 'filter', name: 'serves-model' },
    { kind: 'filter', name: 'healthy' },
    { kind: 'picker', name: 'random' },
  ],
  options: [],
  create: (_options, deps) => new RandomPolicy(deps.rng),
});
