import { aibrixPrefixCacheDefinition } from './aibrix-prefix-cache-policy';
import { cacheAwareDefinition } from './cache-aware-policy';
import { dynamoKvDefinition } from './dynamo-kv-policy';
import { leastOutstandingRequestsDefinition } from './least-outstanding-requests-policy';
import { llmDDefinition } from './llm-d-policy';
import { llmDPreciseDefinition } from './llm-d-precise-policy';
import { oracleDefinition } from './oracle-policy';
import { productionStackPrefixAwareDefinition } from './production-stack-prefixaware-policy';
import type { PolicyDefinition } from './policy-definition';
import { randomDefinition } from './random-policy';
import { roundRobinDefinition } from './round-robin-policy';
import { sageMakerPrefixAwareDefinition } from './sagemaker-prefix-aware-policy';
import { smgCacheAwareDefinition } from './smg-cache-aware-policy';

/**
 * Every routing policy, one line each. The first is the default. Validation, flags, variables, spec strings,
 * help texts, the docs' tables and the cross-policy tests all read this list.
 */
export const POLICY_DEFINITIONS = [
  sageMakerPrefixAwareDefinition,
  cacheAwareDefinition,
  leastOutstandingRequestsDefinition,
  randomDefinition,
  roundRobinDefinition,
  smgCacheAwareDefinition,
  dynamoKvDefinition,
  productionStackPrefixAwareDefinition,
  aibrixPrefixCacheDefinition,
  llmDDefinition,
  llmDPreciseDefinition,
  oracleDefinition,
] as const;

type Registered = (typeof POLICY_DEFINITIONS)[number];

/** The name of a registered policy. */
export type PolicyName = Registered['name'];

/** Every reason any registered policy gives for a decision: a closed set, counted in metrics. */
export type DecisionReason = Registered['reasons'][number];

export const POLICY_NAMES: readonly PolicyName[] = POLICY_DEFINITIONS.map((d) => d.name);

export const DEFAULT_POLICY_NAME: PolicyName = POLICY_DEFINITIONS[0].name;

export function policyDefinition(name: string): PolicyDefinition | undefined {
  return (POLICY_DEFINITIONS as readonly PolicyDefinition[]).find((d) => d.name === name);
}
