#!/usr/bin/env node
import { Command } from 'commander';
import { COMMANDS } from '../router/src/cli/commands';

const program = new Command()
  .name('prefix-router')
  .description('Prefix-aware routing for self-hosted LLMs: router, vLLM emulator, simulator and benchmark')
  .showHelpAfterError();

for (const register of COMMANDS) register(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`prefix-router: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
