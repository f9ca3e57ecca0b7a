import type { Command } from 'commander';
import { CLI_OPTIONS, CONFIG_FILE_ENV, CONFIG_FILE_FLAG, loadRouterConfig } from '../config';
import { startRouterWithConfig, type RunningRouter } from '../server';

/**
 * `prefix-router serve`: the router sidecar. Every option has a PREFIX_ROUTER_* environment variable and a
 * key in the --config JSON file (flag > env > file > default); bad values stop the start with a message that
 * names the option and its allowed range.
 */
export function register(program: Command): void {
  const command = program
    .command('serve')
    .description(
      'route OpenAI / SageMaker requests to vLLM-compatible backends with SageMaker-style prefix-aware routing',
    )
    .option(`${CONFIG_FILE_FLAG} <file>`, `JSON config file with the startRouter options [env ${CONFIG_FILE_ENV}]`);
  for (const spec of CLI_OPTIONS) {
    const flags = `${spec.flag} <${spec.valueName}>`;
    const description = `${spec.description} [env ${spec.env}]`;
    if (spec.kind === 'list')
      command.option(flags, description, (value: string, previous: string[]) => [...previous, value], [] as string[]);
    else command.option(flags, description);
  }
  command.action(async (flags: Record<string, unknown>) => {
    await serve(flags, process.env);
  });
}

/** Starts the router from CLI flags and env, drains it on SIGTERM/SIGINT (a second signal exits at once), re-reads key files on SIGHUP. */
export async function serve(flags: Record<string, unknown>, env: NodeJS.ProcessEnv): Promise<RunningRouter> {
  const router = await startRouterWithConfig(loadRouterConfig({ flags, env }));
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      process.stderr.write(`prefix-router: second ${signal}, exiting without waiting\n`);
      process.exit(130);
    }
    stopping = true;
    router.close().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`prefix-router: error while shutting down: ${String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  // Key rotation without a restart: the files are also polled, SIGHUP makes the change take effect at once.
  process.on('SIGHUP', () => void router.reloadKeys());
  return router;
}
