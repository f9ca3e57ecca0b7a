import {
  CLI_OPTIONS,
  CONFIG_FILE_ENV,
  isRoutingPolicy,
  KV_EVENTS_POLICIES,
  loadRouterConfig,
  policyReadsKvEvents,
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

/**
 * The engines' KV event streams the router follows (PREFIX_ROUTER_ENGINE_KV_EVENTS=on): one per backend, and the
 * tokenizer the container found (undefined: PREFIX_ROUTER_TOKENIZER, as the user set it).
 */
export interface EngineKvEventStreams {
  readonly streams: readonly { readonly url: string; readonly endpoint: string; readonly replayEndpoint: string }[];
  readonly tokenizer: string | undefined;
}

/** The router's environment: the container's, with the backends, host, port and drain the container decides. */
export function routerEnvironment(
  env: Env,
  settings: ContainerSettings,
  backends: readonly string[],
  kvEvents?: EngineKvEventStreams,
): NodeJS.ProcessEnv {
  const routerEnv: NodeJS.ProcessEnv = {
    ...env,
    [CONTAINER_ENV.backends]: backends.join(','),
    [CONTAINER_ENV.host]: settings.host,
    [CONTAINER_ENV.port]: String(settings.port),
  };
  if (kvEvents !== undefined) {
    routerEnv[CONTAINER_ENV.kvEvents] = kvEvents.streams.map((s) => `${s.url}=${s.endpoint}`).join(',');
    routerEnv[CONTAINER_ENV.kvEventsReplay] = kvEvents.streams.map((s) => `${s.url}=${s.replayEndpoint}`).join(',');
    if (kvEvents.tokenizer !== undefined) routerEnv[CONTAINER_ENV.tokenizer] = kvEvents.tokenizer;
  }
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
  /** The router's log level, for the container's own log. */
  logLevel: RouterConfig['logLevel'];
  routerConfigFor: (backends: readonly string[], kvEvents?: EngineKvEventStreams) => RouterConfig;
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
  const routerConfigFor = (backends: readonly string[], kvEvents?: EngineKvEventStreams): RouterConfig =>
    loadRouterConfig({ flags: {}, env: routerEnvironment(env, placeholderSettings, backends, kvEvents) }, validation);
  let placeholderConfig: RouterConfig | undefined;
  try {
    const placeholder = 'http://127.0.0.1:1';
    placeholderConfig = routerConfigFor(
      [placeholder],
      parsed?.settings.engineKvEvents === true ? placeholderKvEvents(env, placeholder) : undefined,
    );
    if (parsed?.settings.engineKvEvents === true) problems.push(...kvEventsPolicyProblems(placeholderConfig.policy));
  } catch (err) {
    if (!(err instanceof RouterConfigError)) throw err;
    problems.push(...err.problems);
  }
  if (problems.length > 0 || parsed === undefined || placeholderConfig === undefined)
    throw new ContainerConfigError(problems);
  return {
    settings: parsed.settings,
    warnings: parsed.warnings,
    logLevel: placeholderConfig.logLevel,
    routerConfigFor,
  };
}

/** Streams for validating the router's settings before the engines' sockets exist (the tokenizer is found later). */
function placeholderKvEvents(env: Env, url: string): EngineKvEventStreams {
  const tokenizerGiven = (env[CONTAINER_ENV.tokenizer] ?? '').trim() !== '';
  return {
    streams: [{ url, endpoint: 'ipc:///engine-0.kv', replayEndpoint: 'tcp://127.0.0.1:1' }],
    tokenizer: tokenizerGiven ? undefined : 'emulator',
  };
}

/** The engines' KV events change only what a policy that reads them decides: any other is a setting that does nothing. */
function kvEventsPolicyProblems(policy: RouterConfig['policy']): string[] {
  if (policyReadsKvEvents(policy)) return [];
  return [
    `${CONTAINER_ENV.engineKvEvents} must be off unless the router's policy reads the engines' KV events, ${POLICY_ENV} one of ${KV_EVENTS_POLICIES.join(', ')} (got on with policy ${isRoutingPolicy(policy) ? 'a policy object' : policy.name})`,
  ];
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
