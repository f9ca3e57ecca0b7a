import type { Rng } from '../common/seeded-rng';
import {
  NoHealthyInstanceError,
  type RoutingDecision,
  type RoutingPolicy,
  type RoutingSnapshot,
} from './routing-policy';
import { definePolicy } from './policy-definition';

const floor = Math.floor; // one global lookup (see hashing.ts)

/**
 * SageMaker's LEAST_OUTSTANDING_REQUESTS: the healthy instance with the fewest requests in flight. Ties are
 * broken uniformly at random with the injected Rng, which is drawn from only when there is a tie.
 */
export class LeastOutstandingRequestsPolicy implements RoutingPolicy {
  readonly name = 'least-outstanding-requests' as const;

  constructor(private readonly rng: Rng) {}

  decide(_request: unknown, snapshot: RoutingSnapshot): RoutingDecision {
    const instances = snapshot.instances;
    let min = Infinity;
    let ties = 0;
    for (let i = 0; i < instances.length; i++) {
      const instance = instances[i];
      if (!instance.healthy) continue;
      if (instance.inFlight < min) {
        min = instance.inFlight;
        ties = 1;
      } else if (instance.inFlight === min) {
        ties++;
      }
    }
    if (ties === 0) throw new NoHealthyInstanceError();
    let pick = ties === 1 ? 0 : floor(this.rng.next() * ties);
    for (let i = 0; i < instances.length; i++) {
      const instance = instances[i];
      if (!instance.healthy || instance.inFlight !== min) continue;
      if (pick === 0) return { instance: instance.id, reason: 'least-outstanding' };
      pick--;
    }
    throw new NoHealthyInstanceError(); // unreachable: `ties` instances matched above
  }

  commit(): void {
    // Stateless: the in-flight counts come from the caller.
  }

  release(): void {
    // Nothing to learn from outcomes.
  }
}

export const leastOutstandingRequestsDefinition = definePolicy({
  name: 'least-outstanding-requests',
  description:
    "SageMaker's LEAST_OUTSTANDING_REQUESTS: fewest in-flight requests; ties broken uniformly by the seeded RNG",
  reasons: ['least-outstanding'],
  options: [],
  create: (_options, deps) => new LeastOutstandingRequestsPolicy(deps.rng),
});
