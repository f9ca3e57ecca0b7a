import type { RoutingRequest } from '../protocol/routing-request';

/**
 * The contract every routing policy implements. A policy is pure: no I/O, no clock, no Math.random.
 * Randomness comes from an injected seeded Rng; time, if a policy ever needs it, comes in the snapshot.
 *
 * One request flows: parse -> key -> decide -> commit -> proxy -> release. `decide` must not mutate policy
 * state other than drawing from its injected Rng; anything a policy remembers about the decision (a round-robin
 * cursor, a prefix index entry) is written in `commit`, once the caller has actually dispatched the request.
 * The live router and the simulator call these methods in the same order, so they make the same decisions.
 */
export type PolicyName = 'sagemaker-prefix-aware' | 'least-outstanding-requests' | 'random' | 'round-robin';

export const POLICY_NAMES: readonly PolicyName[] = [
  'sagemaker-prefix-aware',
  'least-outstanding-requests',
  'random',
  'round-robin',
];

/** What the caller knows about one instance at decision time. */
export interface InstanceView {
  /** Stable identifier (the same on every router replica for the same backend list), e.g. the backend URL. */
  readonly id: string;
  /** False while health checks have ejected the instance: a policy never chooses it. */
  readonly healthy: boolean;
  /** Requests dispatched to the instance and not yet finished (counted by the caller before dispatch). */
  readonly inFlight: number;
}

export interface RoutingSnapshot {
  /** Every configured instance, healthy or not, in configuration order. */
  readonly instances: readonly InstanceView[];
  /** Caller's clock in milliseconds (virtual time in the simulator). */
  readonly nowMs: number;
}

export interface RoutingDecision<Reason extends string = DecisionReason> {
  /** The chosen instance's id. */
  readonly instance: string;
  /** Why it was chosen: a closed set, counted in metrics. */
  readonly reason: Reason;
}

/** The closed set of reasons; each policy uses a subset. */
export type DecisionReason =
  /** sagemaker-prefix-aware: the instance the prefix key hashes to. */
  | 'prefix-affinity'
  /** sagemaker-prefix-aware: the affinity instance had reached concurrencyThreshold, spilled to most spare. */
  | 'threshold-spill'
  /** sagemaker-prefix-aware: every healthy instance is at the threshold; the least loaded one is used anyway. */
  | 'all-saturated'
  | 'least-outstanding'
  | 'random'
  | 'round-robin';

export interface RoutingPolicy {
  readonly name: PolicyName;
  /** Choose an instance. Throws NoHealthyInstanceError when no instance is healthy. */
  decide(request: RoutingRequest, snapshot: RoutingSnapshot): RoutingDecision;
  /** Record that the request was dispatched as decided (advance cursors, update indexes). */
  commit(request: RoutingRequest, decision: RoutingDecision): void;
}

export class NoHealthyInstanceError extends Error {
  constructor() {
    super('no healthy instance is available');
    this.name = 'NoHealthyInstanceError';
  }
}
