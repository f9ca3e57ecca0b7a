import {
  NoHealthyInstanceError,
  type RoutingDecision,
  type RoutingPolicy,
  type RoutingSnapshot,
} from './routing-policy';
import { definePolicy } from './policy-definition';

/**
 * Round robin over healthy instances in configuration order. decide() picks the first healthy instance after
 * the last committed one (wrapping around); commit() moves the cursor. A decision that is never committed
 * (e.g. the caller could not dispatch it) does not advance the cursor. If the last committed instance is no
 * longer configured, the scan restarts from the first instance.
 */
export class RoundRobinPolicy implements RoutingPolicy {
  readonly name = 'round-robin' as const;
  private lastCommitted: string | undefined;

  decide(_request: unknown, snapshot: RoutingSnapshot): RoutingDecision {
    const instances = snapshot.instances;
    const n = instances.length;
    let start = 0;
    if (this.lastCommitted !== undefined) {
      for (let i = 0; i < n; i++) {
        if (instances[i].id === this.lastCommitted) {
          start = i + 1;
          break;
        }
      }
    }
    for (let k = 0; k < n; k++) {
      const instance = instances[(start + k) % n];
      if (instance.healthy) return { instance: instance.id, reason: 'round-robin' };
    }
    throw new NoHealthyInstanceError();
  }

  commit(_request: unknown, decision: RoutingDecision): void {
    this.lastCommitted = decision.instance;
  }

  release(): void {
    // Nothing to learn from outcomes.
  }
}

export const roundRobinDefinition = definePolicy({
  name: 'round-robin',
  description: 'next healthy instance after the last one used, in configuration order',
  reasons: ['round-robin'],
  options: [],
  create: () => new RoundRobinPolicy(),
});
