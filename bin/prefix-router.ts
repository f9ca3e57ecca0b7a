#!/usr/bin/env node
import { Command } from 'commander';
import { COMMANDS } from '../router/src/cli/commands';
import { versionText } from '../router/src/cli/package-version';

const program = new Command()
  .name('prefix-router')
  .description('Prefix-aware routing for self-hosted LLMs: router, vLLM emulator, simulator and benchmark')
  .version(versionText(), '-V, --version', 'print the router package version')
  .showHelpAfterError();

for (const register of COMMANDS) register(program);

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`prefix-router: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
