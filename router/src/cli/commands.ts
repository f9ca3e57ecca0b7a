import type { Command } from 'commander';
import { register as registerAb } from './ab-command';
import { register as registerBench } from './bench-command';
import { register as registerContainer } from './container-command';
import { register as registerDemo } from './demo-command';
import { register as registerEmulate } from './emulate-command';
import { register as registerPlan } from './plan-command';
import { register as registerServe } from './serve-command';
import { register as registerSimulate } from './simulate-command';
import { register as registerTrace } from './trace-command';

/**
 * Every `prefix-router` sub-command lives in its own file under router/src/cli/ and exports a function that
 * registers it on the program. Add one line per command here.
 */
export type RegisterCommand = (program: Command) => void;

export const COMMANDS: readonly RegisterCommand[] = [
  registerServe,
  registerEmulate,
  registerSimulate,
  registerBench,
  registerDemo,
  registerContainer,
  registerAb,
  registerTrace,
  registerPlan,
];
