import type { Rng } from '../common/seeded-rng';
import {
  NoHealthyInstanceError,
  type RoutingDecision,
  type RoutingPolicy,
  type RoutingSnapshot,
} from './routing-policy';
import { definePolicy } from './policy-definition';

const floor = Math.floor; // one global lookup (see hashing.ts)

/** SageMaker's RANDOM: a uniformly random healthy instance, one draw from the injected Rng per decision. */
export class RandomPolicy implements RoutingPolicy {
  readonly name = 'random' as const;

  constructor(private readonly rng: Rng) {}

  decide(_request: unknown, snapshot: RoutingSnapshot): RoutingDecision {
    const instances = snapshot.instances;
    let healthy = 0;
    for (let i = 0; i < instances.length; i++) if (instances[i].healthy) healthy++;
    if (healthy === 0) throw new NoHealthyInstanceError();
    let pick = floor(this.rng.next() * healthy);
    for (let i = 0; i < instances.length; i++) {
      if (!instances[i].healthy) continue;
      if (pick === 0) return { instance: instances[i].id, reason: 'random' };
      pick--;
    }
    throw new NoHealthyInstanceError(); // unreachable
  }

  commit(): void {
    // Stateless.
  }

  release(): void {
    // Nothing to learn from outcomes.
  }
}

export const randomDefinition = definePolicy({
  name: 'random',
  description: "SageMaker's RANDOM: uniform over healthy instances, one RNG draw per decision",
  reasons: ['random'],
  options: [],
  create: (_options, deps) => new RandomPolicy(deps.rng),
});
