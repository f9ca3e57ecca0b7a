import {
  CLI_OPTIONS,
  CONFIG_FILE_ENV,
  loadRouterConfig,
  RouterConfigError,
  type RouterConfig,
  type RouterValidation,
} from '../config';
import {
  CONTAINER_DEFAULTS,
  CONTAINER_ENV,
  ContainerConfigError,
  parseContainerEnv,
  type ContainerSettings,
} from './container-env';

/**
 * The settings of `prefix-router container` read as one: its own variables (container-env.ts) and its router's
 * PREFIX_ROUTER_* variables, with the defaults the container gives the router. Pure (no processes, no sockets, no
 * logger), so the construct library runs this very module at `cdk synth` (`checkContainerEnvironment`) from the
 * compiled copy it ships in the sidecar build context: a setting that would stop the container on the GPU instance
 * fails synth instead, with the container's own message.
 */

const POLICY_ENV = 'PREFIX_ROUTER_POLICY';
const OPEN_CONTAINER_PATHS_ENV = 'PREFIX_ROUTER_OPEN_CONTAINER_PATHS';
/** The router policy of multi-engine mode when none is configured. */
export const MULTI_ENGINE_DEFAULT_POLICY = 'cache-aware';

type Env = Readonly<Record<string, string | undefined>>;

/** The router's environment: the container's, with the backends, host, port and drain the container decides. */
export function routerEnvironment(
  env: Env,
  settings: ContainerSettings,
  backends: readonly string[],
): NodeJS.ProcessEnv {
  const routerEnv: NodeJS.ProcessEnv = {
    ...env,
    [CONTAINER_ENV.backends]: backends.join(','),
    [CONTAINER_ENV.host]: settings.host,
    [CONTAINER_ENV.port]: String(settings.port),
  };
  // Only a container default: a value the user set goes to the router as it is (and is validated there).
  if ((env[CONTAINER_ENV.shutdownGraceMs] ?? '').trim() === '')
    routerEnv[CONTAINER_ENV.shutdownGraceMs] = String(settings.shutdownGraceMs);
  // The only engine of sagemaker mode answers /health late when loaded: a longer timeout (and, in startContainer,
  // timeouts that never eject it).
  if (settings.mode === 'sagemaker' && (env[CONTAINER_ENV.healthTimeoutMs] ?? '').trim() === '') {
    routerEnv[CONTAINER_ENV.healthTimeoutMs] = String(CONTAINER_DEFAULTS.sagemakerHealthTimeoutMs);
  }
  // Several engines behind one router: cache-aware is the recommended policy for a fleet the router manages itself
  // (docs/router.md). A policy set by variable or config file wins.
  const policyGiven = (env[POLICY_ENV] ?? '').trim() !== '' || (env[CONFIG_FILE_ENV] ?? '').trim() !== '';
  if (settings.mode === 'multi-engine' && !policyGiven) routerEnv[POLICY_ENV] = MULTI_ENGINE_DEFAULT_POLICY;
  // SageMaker calls POST /invocations with no key (its front end authenticated the caller with SigV4): with
  // PREFIX_ROUTER_API_KEY_FILE set, the container contract stays open in sagemaker mode unless the user says otherwise.
  if (settings.mode === 'sagemaker' && (env[OPEN_CONTAINER_PATHS_ENV] ?? '').trim() === '')
    routerEnv[OPEN_CONTAINER_PATHS_ENV] = 'on';
  return routerEnv;
}

/** Validates the container's and the router's settings together, so one start reports every problem. */
export function loadContainerConfig(
  env: Env,
  validation: RouterValidation = {},
): {
  settings: ContainerSettings;
  warnings: readonly string[];
  routerConfigFor: (backends: readonly string[]) => RouterConfig;
} {
  const problems: string[] = [];
  let parsed: ReturnType<typeof parseContainerEnv> | undefined;
  try {
    parsed = parseContainerEnv(env);
  } catch (err) {
    if (!(err instanceof ContainerConfigError)) throw err;
    problems.push(...err.problems);
  }
  // With placeholder backends: a bad PREFIX_ROUTER_POLICY or limit is reported before any engine starts.
  const placeholderSettings =
    parsed?.settings ?? ({ host: '0.0.0.0', port: 8080, shutdownGraceMs: 20_000 } as ContainerSettings);
  const routerConfigFor = (backends: readonly string[]): RouterConfig =>
    loadRouterConfig({ flags: {}, env: routerEnvironment(env, placeholderSettings, backends) }, validation);
  try {
    routerConfigFor(['http://127.0.0.1:1']);
  } catch (err) {
    if (!(err instanceof RouterConfigError)) throw err;
    problems.push(...err.problems);
  }
  if (problems.length > 0 || parsed === undefined) throw new ContainerConfigError(problems);
  return { settings: parsed.settings, warnings: parsed.warnings, routerConfigFor };
}

/** Every PREFIX_ROUTER_* variable the container or its router reads, sorted. */
export const CONTAINER_VARIABLES: readonly string[] = [
  ...new Set([...Object.values(CONTAINER_ENV), ...CLI_OPTIONS.map((option) => option.env), CONFIG_FILE_ENV]),
]
  .filter((name) => name.startsWith('PREFIX_ROUTER_'))
  .sort();

/** What `checkContainerEnvironment` found. */
export interface ContainerEnvironmentCheck {
  /** What would stop the container at start, each line naming the variable, the allowed values and the value. */
  readonly problems: readonly string[];
  /** Legal but doubtful settings the container would log at start. */
  readonly warnings: readonly string[];
  /** PREFIX_ROUTER_* variables neither the container nor the router reads (a typo is ignored at start). */
  readonly unknownVariables: readonly string[];
}

/**
 * The container's start-up validation without its machine: no GPUs (the engine plan is checked at start), no
 * files (a config file or key file named by a variable lies in the container; only its form is checked). The
 * construct library calls it at synth (lib/private/router-settings.ts).
 */
export function checkContainerEnvironment(env: Env): ContainerEnvironmentCheck {
  const unknownVariables = Object.keys(env)
    .filter((name) => name.startsWith('PREFIX_ROUTER_') && !CONTAINER_VARIABLES.includes(name))
    .sort();
  try {
    const { warnings } = loadContainerConfig(env, { readFiles: false });
    return { problems: [], warnings, unknownVariables };
  } catch (err) {
    if (!(err instanceof ContainerConfigError)) throw err;
    return { problems: err.problems, warnings: [], unknownVariables };
  }
}
