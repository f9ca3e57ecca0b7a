import { definePolicy } from './policy-definition';
import type { InstanceView } from './routing-policy';
import { HEALTHY_FILTER } from './stages/healthy-filter';
import { RoundRobinPicker } from './stages/round-robin-picker';
import { SERVES_MODEL_FILTER } from './stages/serves-model-filter';
import { INSTANCES_AS_CANDIDATES, OutcomeBlindStagedPolicy } from './stages/staged-policy';

/**
 * Round robin over healthy instances in configuration order: the first healthy instance after the last committed
 * one (wrapping around); a decision that is never committed does not advance the cursor (RoundRobinPicker).
 */
export class RoundRobinPolicy extends OutcomeBlindStagedPolicy<InstanceView, 'round-robin'> {
  constructor() {
    super('round-robin', {
      instanceFilters: [SERVES_MODEL_FILTER, HEALTHY_FILTER],
      candidates: INSTANCES_AS_CANDIDATES,
      stages: [new RoundRobinPicker('round-robin')],
    });
  }
}

export const roundRobinDefinition = definePolicy({
  name: 'round-robin',
  description: 'next healthy instance after the last one used, in configuration order',
  reasons: ['round-robin'],
  stages: [
    { kind: 'filter', name: 'serves-model' },
    { kind: 'filter', name: 'healthy' },
    { kind: 'picker', name: 'round-robin' },
  ],
  options: [],
  create: () => new RoundRobinPolicy(),
});
