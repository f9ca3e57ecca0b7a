#!/usr/bin/env node
/**
 * CDK app with every example stack. Stacks are environment-agnostic: `cdk synth` runs offline without credentials,
 * and the vLLM DLC registry account is resolved from the stack's region at deploy time.
 */
import { App } from 'aws-cdk-lib';
import { AwsBenchmarkReplicaStack } from '../examples/aws-benchmark-replica-stack';
import { MinimalStack } from '../examples/minimal-stack';
import { PrivateVpcStack } from '../examples/private-vpc-stack';

const app = new App();
new AwsBenchmarkReplicaStack(app, 'PrefixAwareLlmBenchmarkReplica');
new MinimalStack(app, 'PrefixAwareLlmMinimal');
new PrivateVpcStack(app, 'PrefixAwareLlmPrivateVpc');
app.synth();
