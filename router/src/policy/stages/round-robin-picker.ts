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
  /**
   * Where the last committed instance probably stands: where this picker's last pick stood in its snapshot. Instance
   * ids are unique within a snapshot (a decision names its instance by id), so cursorIn trusts it only when that
   * position still holds the same id, and otherwise scans: a decision the picker did not make, or a changed instance
   * list, costs a scan, never a wrong cursor.
   */
  private lastCommittedPosition = 0;
  private lastPickedPosition = 0;
  /** `commit` reads only the decision. */
  readonly commitReadsSnapshot = false;

  constructor(private readonly reason: Reason) {}

  pick(
    candidates: readonly InstanceView[],
    _scores: Float64Array,
    { snapshot }: DecisionFacts,
  ): RoutingDecision<Reason> {
    const instances = snapshot.instances;
    const start = this.cursorIn(instances);
    if (candidates === instances) return this.decision(candidates, start < instances.length ? start : 0);
    // The candidates are a subsequence of the configured instances, in order: walk both once.
    let position = 0;
    for (let c = 0; c < candidates.length; c++) {
      while (position < instances.length && instances[position] !== candidates[c]) position++;
      if (position >= start) return this.decision(candidates, c, position);
    }
    return this.decision(candidates, 0, instances.indexOf(candidates[0]));
  }

  /** The first eligible instance at or after the cursor, wrapping around: `pick` over the eligible ones. */
  pickEligible(
    instances: readonly InstanceView[],
    eligible: (instance: InstanceView, request: RoutingRequest) => boolean,
    request: RoutingRequest,
  ): RoutingDecision<Reason> | undefined {
    const n = instances.length;
    const start = this.cursorIn(instances);
    for (let k = 0; k < n; k++) {
      const position = (start + k) % n;
      if (eligible(instances[position], request)) return this.decision(instances, position);
    }
    return undefined;
  }

  /** The position after the last committed instance in `instances`, 0 when there is none. */
  private cursorIn(instances: readonly InstanceView[]): number {
    const last = this.lastCommitted;
    if (last === undefined) return 0;
    const guess = this.lastCommittedPosition;
    if (guess < instances.length && instances[guess].id === last) return guess + 1;
    for (let i = 0; i < instances.length; i++) if (instances[i].id === last) return i + 1;
    return 0;
  }

  private decision(candidates: readonly InstanceView[], c: number, position = c): RoutingDecision<Reason> {
    this.lastPickedPosition = position;
    return { instance: candidates[c].id, reason: this.reason };
  }

  commit(_request: RoutingRequest, decision: RoutingDecision): void {
    this.lastCommitted = decision.instance;
    this.lastCommittedPosition = this.lastPickedPosition; // only a guess for a decision it did not make (cursorIn)
  }
}
