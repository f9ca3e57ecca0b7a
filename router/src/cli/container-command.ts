import type { Command } from 'commander';
import { runContainerProcess } from '../container';

/**
 * `prefix-router container`: the serving container's supervisor (router/entrypoint.sh execs it). Configured by
 * environment variables only, as SageMaker passes them; see docs/container.md. SageMaker starts containers
 * with `docker run IMAGE serve`, so a leading `serve` argument is accepted and ignored.
 */
export function register(program: Command): void {
  program
    .command('container')
    .description(
      'run vLLM engines (or PREFIX_ROUTER_ENGINE_COMMAND) with the router in front: the serving container main process, configured by env (docs/container.md)',
    )
    .argument('[serve]', "ignored: SageMaker's `docker run IMAGE serve`")
    .action(async (arg: string | undefined) => {
      if (arg !== undefined && arg !== 'serve')
        throw new Error(
          `container takes no argument but 'serve' (got '${arg}'); it is configured by environment variables`,
        );
      await runContainerProcess(process.env);
    });
}
