import type { RoutingRequest } from '../../protocol/routing-request';
import type { InstanceView, RoutingDecision } from '../routing-policy';
import type { DecisionFacts, Picker } from './stage';

/**
 * The first candidate after the last committed instance in configuration order (the snapshot's), wrapping around.
 * Only `commit` moves the cursor, so a decision never dispatched does not advance it; when the last committed
 * instance is no longer configured, the scan restarts from the first instance.
 */
export class RoundRobinPicker<Reason extends string> implements Picker<InstanceView, Reason> {
  readonly kind = 'picker';
  readonly name = 'round-robin';
  private lastCommitted: string | undefined;

  constructor(private readonly reason: Reason) {}

  pick(
    candidates: readonly InstanceView[],
    _scores: Float64Array,
    { snapshot }: DecisionFacts,
  ): RoutingDecision<Reason> {
    const instances = snapshot.instances;
    let start = 0;
    if (this.lastCommitted !== undefined) {
      for (let i = 0; i < instances.length; i++) {
        if (instances[i].id === this.lastCommitted) {
          start = i + 1;
          break;
        }
      }
    }
    // The candidates are a subsequence of the configured instances, in order: walk both once.
    let position = 0;
    for (let c = 0; c < candidates.length; c++) {
      while (position < instances.length && instances[position] !== candidates[c]) position++;
      if (position >= start) return { instance: candidates[c].id, reason: this.reason };
    }
    return { instance: candidates[0].id, reason: this.reason };
  }

  commit(_request: RoutingRequest, decision: RoutingDecision): void {
    this.lastCommitted = decision.instance;
  }
}
