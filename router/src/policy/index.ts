import { createPolicyFromConfig, type PolicyConfig, type PolicyDeps } from './policy-config';
import type { RoutingPolicy } from './routing-policy';

export * from './routing-policy';
export * from './policy-config';
export * from './policy-definition';
export { POLICY_DEFINITIONS, POLICY_NAMES, DEFAULT_POLICY_NAME, policyDefinition } from './policy-registry';
export { parsePolicySpec, formatPolicySpec, readPolicySpec, expandPolicySweep } from './policy-spec';
export { prefixKey } from './prefix-key';
export { allHealthySameModels, requireServingInstance, servesModel, UnknownModelError } from './served-models';
export { rendezvousRanking, rendezvousScore, weightedRendezvousScore, InstanceHashCache } from './rendezvous';
export { SageMakerPrefixAwarePolicy, type SageMakerPrefixAwareOptions } from './sagemaker-prefix-aware-policy';
export {
  CacheAwarePolicy,
  CACHE_AWARE_FOR_BLIND_REPLICAS,
  placesColdPromptsByLoad,
  type CacheAwareOptions,
} from './cache-aware-policy';
export { LeastOutstandingRequestsPolicy } from './least-outstanding-requests-policy';
export { RandomPolicy } from './random-policy';
export { RoundRobinPolicy } from './round-robin-policy';
export { StagedPolicy, type StagePlan } from './stages/staged-policy';
export type {
  CandidateStage,
  DecisionFacts,
  Filter,
  Picker,
  Scorer,
  Stage,
  StageMemory,
  StageSummary,
} from './stages/stage';

/**
 * Builds a policy from its configuration. Throws PolicyConfigError naming every invalid option. The live
 * router and the simulator both build policies here, so the same config gives the same behaviour.
 */
export function createPolicy(config: PolicyConfig, deps: PolicyDeps): RoutingPolicy {
  return createPolicyFromConfig(config, deps);
}
