#!/usr/bin/env node
/**
 * CDK app with every example stack. Stacks are environment-agnostic: `cdk synth` runs offline without credentials,
 * and the vLLM DLC registry account is resolved from the stack's region at deploy time.
 */
import { App } from 'aws-cdk-lib';
import { addExampleStacks } from '../examples';

const app = new App();
addExampleStacks(app);
app.synth();
