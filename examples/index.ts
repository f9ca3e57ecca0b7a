import { App } from 'aws-cdk-lib';
import { AwsBenchmarkReplicaStack } from './aws-benchmark-replica-stack';
import { InferenceComponentsStack } from './inference-components';
import { MinimalStack } from './minimal-stack';
import { PrivateVpcStack } from './private-vpc-stack';
import { RouterSidecarStack } from './router-sidecar-stack';
import { RoutingAbVariantsStack } from './routing-ab-variants-stack';

export { AwsBenchmarkReplicaStack } from './aws-benchmark-replica-stack';
export { InferenceComponentsStack } from './inference-components';
export { MinimalStack } from './minimal-stack';
export { PrivateVpcStack } from './private-vpc-stack';
export { RouterSidecarStack } from './router-sidecar-stack';
export { RoutingAbVariantsStack } from './routing-ab-variants-stack';

/** Stack names `bin/app.ts` (and `cdk synth`) use for the examples. */
export const EXAMPLE_STACK_NAMES = {
  benchmarkReplica: 'PrefixAwareLlmBenchmarkReplica',
  inferenceComponents: 'PrefixAwareLlmInferenceComponents',
  minimal: 'PrefixAwareLlmMinimal',
  privateVpc: 'PrefixAwareLlmPrivateVpc',
  routerSidecar: 'PrefixAwareLlmRouterSidecar',
  routingAbVariants: 'PrefixAwareLlmRoutingAbVariants',
} as const;

/** Adds every example stack, environment-agnostic, to the app. */
export function addExampleStacks(app: App) {
  return {
    benchmarkReplica: new AwsBenchmarkReplicaStack(app, EXAMPLE_STACK_NAMES.benchmarkReplica),
    inferenceComponents: new InferenceComponentsStack(app, EXAMPLE_STACK_NAMES.inferenceComponents),
    minimal: new MinimalStack(app, EXAMPLE_STACK_NAMES.minimal),
    privateVpc: new PrivateVpcStack(app, EXAMPLE_STACK_NAMES.privateVpc),
    routerSidecar: new RouterSidecarStack(app, EXAMPLE_STACK_NAMES.routerSidecar),
    routingAbVariants: new RoutingAbVariantsStack(app, EXAMPLE_STACK_NAMES.routingAbVariants),
  };
}
