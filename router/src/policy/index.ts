import { LeastOutstandingRequestsPolicy } from './least-outstanding-requests-policy';
import {
  DEFAULT_CONCURRENCY_THRESHOLD,
  DEFAULT_PREFIX_LENGTH,
  PolicyConfigError,
  policyConfigProblems,
  type PolicyConfig,
  type PolicyDeps,
} from './policy-config';
import { RandomPolicy } from './random-policy';
import { RoundRobinPolicy } from './round-robin-policy';
import type { RoutingPolicy } from './routing-policy';
import { SageMakerPrefixAwarePolicy } from './sagemaker-prefix-aware-policy';

export * from './routing-policy';
export * from './policy-config';
export { prefixKey } from './prefix-key';
export { rendezvousRanking, rendezvousScore, InstanceHashCache } from './rendezvous';
export { SageMakerPrefixAwarePolicy, type SageMakerPrefixAwareOptions } from './sagemaker-prefix-aware-policy';
export { LeastOutstandingRequestsPolicy } from './least-outstanding-requests-policy';
export { RandomPolicy } from './random-policy';
export { RoundRobinPolicy } from './round-robin-policy';

/**
 * Builds a policy from its configuration. Throws PolicyConfigError naming every invalid option. The live
 * router and the simulator both build policies here, so the same config gives the same behaviour.
 */
export function createPolicy(config: PolicyConfig, deps: PolicyDeps): RoutingPolicy {
  const problems = policyConfigProblems(config);
  if (problems.length > 0) throw new PolicyConfigError(problems);
  switch (config.name) {
    case 'sagemaker-prefix-aware':
      return new SageMakerPrefixAwarePolicy({
        prefixLength: config.prefixLength ?? DEFAULT_PREFIX_LENGTH,
        concurrencyThreshold: config.concurrencyThreshold ?? DEFAULT_CONCURRENCY_THRESHOLD,
      });
    case 'least-outstanding-requests':
      return new LeastOutstandingRequestsPolicy(deps.rng);
    case 'random':
      return new RandomPolicy(deps.rng);
    case 'round-robin':
      return new RoundRobinPolicy();
  }
}
