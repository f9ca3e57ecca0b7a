/**
 * Router configuration from the command line, PREFIX_ROUTER_* environment variables and a JSON config file.
 * Precedence: flag > environment variable > config file > default. The file has the shape of RouterOptions
 * (the programmatic startRouter options; `policy` may be just a name). Error messages name the option the way
 * the user set it (flag, variable, or file key), with the allowed range and the value received.
 */
import { readFileSync } from 'node:fs';
import { FLOW_CONTROL_DEFAULTS } from '../common/flow-control-settings';
import { parseDecimalInteger, parseDecimalNumber } from '../common/decimal-text';
import {
  DEFAULT_POLICY_NAME,
  kebabCase,
  optionRange,
  optionValueFromText,
  POLICY_DEFINITIONS,
  POLICY_NAMES,
  policyDefinition,
  readPolicySpec,
  screamingSnakeCase,
  type OptionProblem,
  type PolicyDefinition,
  type PolicyOptionSchema,
} from '../policy';
import {
  resolveRouterConfig,
  ROUTER_DEFAULTS,
  RouterConfigError,
  type RouterConfig,
  type RouterOptions,
  type RouterValidation,
} from './router-config';

/** One router option as the CLI, the environment and the docs see it: its flag, variable and value kind. */
export interface CliOptionSpec {
  /** Property path in RouterOptions. */
  readonly path: string;
  readonly flag: string;
  readonly valueName: string;
  readonly env: string;
  readonly kind: 'integer' | 'number' | 'string' | 'list' | 'policy';
  readonly description: string;
}

export const CONFIG_FILE_FLAG = '--config';
export const CONFIG_FILE_ENV = 'PREFIX_ROUTER_CONFIG';

export const CLI_OPTIONS: readonly CliOptionSpec[] = [
  {
    path: 'backends',
    flag: '--backend',
    valueName: 'url',
    env: 'PREFIX_ROUTER_BACKENDS',
    kind: 'list',
    description: 'backend base URL, repeatable (env: comma-separated)',
  },
  {
    path: 'policy.name',
    flag: '--policy',
    valueName: 'spec',
    env: 'PREFIX_ROUTER_POLICY',
    kind: 'policy',
    description: `routing policy: ${POLICY_NAMES.join(', ')} (default ${DEFAULT_POLICY_NAME}), optionally with options as name?option=value&option=value`,
  },
  ...policyOptionSpecs(),
  {
    path: 'seed',
    flag: '--seed',
    valueName: 'n',
    env: 'PREFIX_ROUTER_SEED',
    kind: 'integer',
    description: 'seed of the random number generator of random/least-outstanding-requests (default 1)',
  },
  {
    path: 'host',
    flag: '--host',
    valueName: 'host',
    env: 'PREFIX_ROUTER_HOST',
    kind: 'string',
    description: 'address to listen on (default 127.0.0.1; 0.0.0.0 in a container)',
  },
  {
    path: 'port',
    flag: '--port',
    valueName: 'port',
    env: 'PREFIX_ROUTER_PORT',
    kind: 'integer',
    description: 'port to listen on, 0 = any free port (default 8080)',
  },
  {
    path: 'healthCheck.intervalMs',
    flag: '--health-interval-ms',
    valueName: 'ms',
    env: 'PREFIX_ROUTER_HEALTH_INTERVAL_MS',
    kind: 'integer',
    description: 'health check period per backend, 0 = off (default 2000)',
  },
  {
    path: 'healthCheck.timeoutMs',
    flag: '--health-timeout-ms',
    valueName: 'ms',
    env: 'PREFIX_ROUTER_HEALTH_TIMEOUT_MS',
    kind: 'integer',
    description: 'health check timeout (default 1000)',
  },
  {
    path: 'healthCheck.failureThreshold',
    flag: '--health-failure-threshold',
    valueName: 'n',
    env: 'PREFIX_ROUTER_HEALTH_FAILURE_THRESHOLD',
    kind: 'integer',
    description: 'consecutive failures that eject a backend (default 3)',
  },
  {
    path: 'healthCheck.recoveryThreshold',
    flag: '--health-recovery-threshold',
    valueName: 'n',
    env: 'PREFIX_ROUTER_HEALTH_RECOVERY_THRESHOLD',
    kind: 'integer',
    description: 'consecutive successes that re-admit it (default 2)',
  },
  {
    path: 'healthCheck.path',
    flag: '--health-path',
    valueName: 'path',
    env: 'PREFIX_ROUTER_HEALTH_PATH',
    kind: 'string',
    description: 'backend health path (default /health)',
  },
  {
    path: 'limits.maxBodyBytes',
    flag: '--max-body-bytes',
    valueName: 'n',
    env: 'PREFIX_ROUTER_MAX_BODY_BYTES',
    kind: 'integer',
    description:
      "largest accepted request body (default: 24 bytes a token of the backends' max_model_len from GET /v1/models plus 1 MiB, else 16777216)",
  },
  {
    path: 'limits.headersTimeoutMs',
    flag: '--headers-timeout-ms',
    valueName: 'ms',
    env: 'PREFIX_ROUTER_HEADERS_TIMEOUT_MS',
    kind: 'integer',
    description: 'time a client has to send request headers (default 10000)',
  },
  {
    path: 'limits.bodyTimeoutMs',
    flag: '--body-timeout-ms',
    valueName: 'ms',
    env: 'PREFIX_ROUTER_BODY_TIMEOUT_MS',
    kind: 'integer',
    description: 'time a client has to send the body (default 30000)',
  },
  {
    path: 'limits.bodyIdleTimeoutMs',
    flag: '--body-idle-timeout-ms',
    valueName: 'ms',
    env: 'PREFIX_ROUTER_BODY_IDLE_TIMEOUT_MS',
    kind: 'integer',
    description: 'longest pause between two body bytes before 408, at most --body-timeout-ms (default 5000)',
  },
  {
    path: 'limits.upstreamHeadersTimeoutMs',
    flag: '--upstream-headers-timeout-ms',
    valueName: 'ms',
    env: 'PREFIX_ROUTER_UPSTREAM_HEADERS_TIMEOUT_MS',
    kind: 'integer',
    description: 'time a backend has to start its response (default 600000)',
  },
  {
    path: 'limits.upstreamBodyTimeoutMs',
    flag: '--upstream-body-timeout-ms',
    valueName: 'ms',
    env: 'PREFIX_ROUTER_UPSTREAM_BODY_TIMEOUT_MS',
    kind: 'integer',
    description: 'longest silence inside a backend response (default 300000)',
  },
  {
    path: 'limits.clientDrainTimeoutMs',
    flag: '--client-drain-timeout-ms',
    valueName: 'ms',
    env: 'PREFIX_ROUTER_CLIENT_DRAIN_TIMEOUT_MS',
    kind: 'integer',
    description:
      'a client that reads nothing of its answer for this long is cut and its upstream request aborted, 0 = never (default 300000)',
  },
  {
    path: 'limits.maxInFlight',
    flag: '--max-in-flight',
    valueName: 'n',
    env: 'PREFIX_ROUTER_MAX_IN_FLIGHT',
    kind: 'integer',
    description: 'routed requests in flight at once, more get 503 with Retry-After, 0 = no cap (default 0)',
  },
  {
    path: 'limits.maxBufferedBodyBytes',
    flag: '--max-buffered-body-bytes',
    valueName: 'n',
    env: 'PREFIX_ROUTER_MAX_BUFFERED_BODY_BYTES',
    kind: 'integer',
    description:
      'request body bytes held at once across requests, more get 503 with Retry-After; 0 = a quarter of the memory the process may use (default 0)',
  },
  {
    path: 'limits.maxInFlightPerClient',
    flag: '--max-in-flight-per-client',
    valueName: 'n',
    env: 'PREFIX_ROUTER_MAX_IN_FLIGHT_PER_CLIENT',
    kind: 'integer',
    description:
      'routed requests in flight at once per client (API key, else address), more get 429 with Retry-After, 0 = no cap (default 0)',
  },
  {
    path: 'limits.poolWaitTimeoutMs',
    flag: '--pool-wait-timeout-ms',
    valueName: 'ms',
    env: 'PREFIX_ROUTER_POOL_WAIT_TIMEOUT_MS',
    kind: 'integer',
    description:
      'longest a routed request waits for a free connection to its backend (all --max-connections-per-backend in use), then 503 with Retry-After, 0 = no bound (default 10000)',
  },
  {
    path: 'maxConnectionsPerBackend',
    flag: '--max-connections-per-backend',
    valueName: 'n',
    env: 'PREFIX_ROUTER_MAX_CONNECTIONS_PER_BACKEND',
    kind: 'integer',
    description: 'connection pool size per backend (default 1024)',
  },
  {
    path: 'shutdownGraceMs',
    flag: '--shutdown-grace-ms',
    valueName: 'ms',
    env: 'PREFIX_ROUTER_SHUTDOWN_GRACE_MS',
    kind: 'integer',
    description: 'on SIGTERM/SIGINT, time in-flight requests get to finish (default 25000)',
  },
  {
    path: 'publishStateMs',
    flag: '--publish-state-ms',
    valueName: 'ms',
    env: 'PREFIX_ROUTER_PUBLISH_STATE_MS',
    kind: 'integer',
    description:
      "publish this router's load and the routing blocks it was sent at GET /router/v1/instance-state, batching changes for this many ms, for routers in front of it (--observe-instances); 0 = off (default 0)",
  },
  {
    path: 'publishStateBlockChars',
    flag: '--publish-state-block-chars',
    valueName: 'chars',
    env: 'PREFIX_ROUTER_PUBLISH_STATE_BLOCK_CHARS',
    kind: 'integer',
    description:
      "characters per routing block in the published state; must equal the observers' cache-aware blockChars (default 256)",
  },
  {
    path: 'publishStateBlocks',
    flag: '--publish-state-blocks',
    valueName: 'mode',
    env: 'PREFIX_ROUTER_PUBLISH_STATE_BLOCKS',
    kind: 'string',
    description: 'off: publish load only, no routing blocks (default on)',
  },
  {
    path: 'learnPrefillSpeeds',
    flag: '--learn-prefill-speeds',
    valueName: 'mode',
    env: 'PREFIX_ROUTER_LEARN_PREFILL_SPEEDS',
    kind: 'string',
    description:
      "on: learn each backend's prefill speed from the TTFTs observed (per-instance EWMA of ms per prefill token) so cache-aware gives slower backends of a mixed fleet proportionally less prefill (default off)",
  },
  {
    path: 'observeInstances',
    flag: '--observe-instances',
    valueName: 'mode',
    env: 'PREFIX_ROUTER_OBSERVE_INSTANCES',
    kind: 'string',
    description:
      "on: follow every backend's published state (backends run with --publish-state-ms), so router replicas see the whole load and cache of each instance (default off)",
  },
  {
    path: 'apiKeyFile',
    flag: '--api-key-file',
    valueName: 'file',
    env: 'PREFIX_ROUTER_API_KEY_FILE',
    kind: 'string',
    description:
      'file of API keys clients must send (Authorization: Bearer KEY or x-prefix-router-api-key), one per line for rotation (a line KEY priority=N gives the requests of that key priority class N), re-read on change and SIGHUP; /ping and /health stay open (default: no authentication)',
  },
  {
    path: 'upstreamApiKeyFile',
    flag: '--upstream-api-key-file',
    valueName: 'file',
    env: 'PREFIX_ROUTER_UPSTREAM_API_KEY_FILE',
    kind: 'string',
    description:
      'file whose first key is sent to every backend as Authorization: Bearer KEY on every path (vLLM --api-key) (default: none)',
  },
  {
    path: 'stateHashKeyFile',
    flag: '--state-hash-key-file',
    valueName: 'file',
    env: 'PREFIX_ROUTER_STATE_HASH_KEY_FILE',
    kind: 'string',
    description:
      'file holding the secret (first line, at least 32 characters) that routing block hashes are keyed with (HMAC-SHA256, 64 bits), read at start; every router that publishes or observes instance state must hold the same one (default: a random secret per process)',
  },
  {
    path: 'openContainerPaths',
    flag: '--open-container-paths',
    valueName: 'mode',
    env: 'PREFIX_ROUTER_OPEN_CONTAINER_PATHS',
    kind: 'string',
    description:
      'on: POST /invocations needs no key, for a SageMaker container whose only client is SageMaker (the container sets it in sagemaker mode) (default off)',
  },
  {
    path: 'sharedEngineCache',
    flag: '--shared-engine-cache',
    valueName: 'mode',
    env: 'PREFIX_ROUTER_SHARED_ENGINE_CACHE',
    kind: 'string',
    description:
      "on: API keys share the engines' prefix cache and the routing index (a system prompt common to several keys is cached once, and every key can tell whether another's prompt is cached); off: each key's requests are salted with its identity (vLLM cache_salt) (default off)",
  },
  {
    path: 'flowControl',
    flag: '--flow-control',
    valueName: 'mode',
    env: 'PREFIX_ROUTER_FLOW_CONTROL',
    kind: 'string',
    description: `on: requests with a priority above 0 (body, ${'x-prefix-router-priority'} header or API key) wait at the router while the chosen engine has more than --flow-control-bound prefill tokens queued; off: route them at once (default ${FLOW_CONTROL_DEFAULTS.mode})`,
  },
  {
    path: 'flowControlBound',
    flag: '--flow-control-bound',
    valueName: 'tokens',
    env: 'PREFIX_ROUTER_FLOW_CONTROL_BOUND',
    kind: 'integer',
    description: `predicted prefill tokens queued on the chosen engine above which lower classes wait (default ${FLOW_CONTROL_DEFAULTS.queuedPrefillBoundTokens})`,
  },
  {
    path: 'flowControlMaxWaiting',
    flag: '--flow-control-max-waiting',
    valueName: 'n',
    env: 'PREFIX_ROUTER_FLOW_CONTROL_MAX_WAITING',
    kind: 'integer',
    description: `requests that may wait at the router under flow control, all classes together; one more is answered 429 flow_control_full with Retry-After (default ${FLOW_CONTROL_DEFAULTS.maxWaiting})`,
  },
  {
    path: 'adminPort',
    flag: '--admin-port',
    valueName: 'port',
    env: 'PREFIX_ROUTER_ADMIN_PORT',
    kind: 'integer',
    description:
      'serve /metrics and /router/v1/instance-state only on this port (0 = any free port), not on the main one (default: on the main port)',
  },
  {
    path: 'adminHost',
    flag: '--admin-host',
    valueName: 'host',
    env: 'PREFIX_ROUTER_ADMIN_HOST',
    kind: 'string',
    description: 'address of the admin listener (default 127.0.0.1)',
  },
  {
    path: 'adminApiKeyFile',
    flag: '--admin-api-key-file',
    valueName: 'file',
    env: 'PREFIX_ROUTER_ADMIN_API_KEY_FILE',
    kind: 'string',
    description: 'keys the admin listener requires, same format as --api-key-file (default: none)',
  },
  {
    path: 'routingHeaders',
    flag: '--routing-headers',
    valueName: 'mode',
    env: 'PREFIX_ROUTER_ROUTING_HEADERS',
    kind: 'string',
    description:
      "x-prefix-router-* headers on 2xx answers: off, instance (the backend's opaque name) or all (also decision, decision time, predicted cached tokens; benchmarks read them) (default off)",
  },
  {
    path: 'allowedHosts',
    flag: '--allowed-hosts',
    valueName: 'hosts',
    env: 'PREFIX_ROUTER_ALLOWED_HOSTS',
    kind: 'list',
    description:
      'answer only requests whose Host header names one of these (comma-separated; .example.com matches every name below it; any port), others get 421; /ping and /health exempt; against DNS rebinding (default: any Host)',
  },
  {
    path: 'kvEvents',
    flag: '--kv-events',
    valueName: 'backend=endpoint',
    env: 'PREFIX_ROUTER_KV_EVENTS',
    kind: 'list',
    description:
      "BACKEND_URL=ZMQ_ENDPOINT: follow that backend's vLLM KV cache events (--kv-events-config publisher zmq), so cache-aware predicts its hits from what the engine holds; repeatable (env: comma-separated) (default: none)",
  },
  {
    path: 'kvEventsReplay',
    flag: '--kv-events-replay',
    valueName: 'backend=endpoint',
    env: 'PREFIX_ROUTER_KV_EVENTS_REPLAY',
    kind: 'list',
    description:
      "BACKEND_URL=ZMQ_ENDPOINT: that --kv-events backend's replay socket (vLLM replay_endpoint), where batches its stream missed are fetched; repeatable (env: comma-separated) (default: none)",
  },
  {
    path: 'tokenizer',
    flag: '--tokenizer',
    valueName: 'file',
    env: 'PREFIX_ROUTER_TOKENIZER',
    kind: 'string',
    description:
      "with --kv-events: the model's tokenizer.json (tokenizer_config.json beside it gives the chat template), or emulator for prefix-router emulate engines (default: none)",
  },
  {
    path: 'logLevel',
    flag: '--log-level',
    valueName: 'level',
    env: 'PREFIX_ROUTER_LOG_LEVEL',
    kind: 'string',
    description: 'fatal, error, warn, info, debug, trace or silent (default info)',
  },
];

/**
 * One flag and variable per policy option, derived from the registry: `--prefix-length` /
 * PREFIX_ROUTER_PREFIX_LENGTH → `policy.prefixLength`. An option name shared by several policies is one flag.
 */
export function policyOptionSpecs(): CliOptionSpec[] {
  const byName = new Map<string, { option: PolicyOptionSchema; policies: string[] }>();
  for (const definition of POLICY_DEFINITIONS as readonly PolicyDefinition[]) {
    for (const option of definition.options) {
      const entry = byName.get(option.name);
      if (entry) entry.policies.push(definition.name);
      else byName.set(option.name, { option, policies: [definition.name] });
    }
  }
  return [...byName.values()].map(({ option, policies }) => ({
    path: `policy.${option.name}`,
    flag: `--${kebabCase(option.name)}`,
    valueName: option.valueName ?? (option.type === 'string' ? 'value' : 'n'),
    env: `PREFIX_ROUTER_${screamingSnakeCase(option.name)}`,
    kind: option.type,
    description: `${policies.join(', ')}: ${option.doc}, ${optionRange(option)} (default ${option.default})`,
  }));
}

/** Commander's property name for a flag: '--prefix-length' → 'prefixLength'. */
export function flagKey(flag: string): string {
  return flag.replace(/^--/, '').replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
}

export interface ConfigSources {
  /** Parsed flags keyed by flagKey(); `backend` may be an array; `config` is the file path. */
  readonly flags: Readonly<Record<string, unknown>>;
  readonly env: Readonly<Record<string, string | undefined>>;
}

type Origin = 'flag' | 'env' | 'file';

export interface LoadedOptions {
  readonly options: RouterOptions;
  /** Where each top-level-or-nested option path came from. */
  readonly origins: ReadonlyMap<string, Origin>;
  /** Labels of options set inside a policy spec string (`--policy cache-aware?blockChars=128`). */
  readonly specLabels?: ReadonlyMap<string, string>;
  readonly configFile?: string;
}

export function loadRouterOptions(sources: ConfigSources, validation: RouterValidation = {}): LoadedOptions {
  const origins = new Map<string, Origin>();
  const specLabels = new Map<string, string>();
  const configFile = stringValue(sources.flags.config) ?? nonEmpty(sources.env[CONFIG_FILE_ENV]);
  // Without file access (cdk synth) the config file's settings are left to the start of the router.
  const options: Record<string, unknown> =
    configFile === undefined || validation.readFiles === false ? {} : readConfigFile(configFile, origins);
  for (const spec of CLI_OPTIONS) {
    const fromFlag = sources.flags[flagKey(spec.flag)];
    const fromEnv = nonEmpty(sources.env[spec.env]);
    let raw: unknown;
    let origin: Origin;
    if (fromFlag !== undefined && !(Array.isArray(fromFlag) && fromFlag.length === 0)) {
      raw = fromFlag;
      origin = 'flag';
    } else if (fromEnv !== undefined) {
      raw = fromEnv;
      origin = 'env';
    } else {
      continue;
    }
    if (spec.kind === 'policy') {
      applyPolicySpec(options, String(raw), origin === 'flag' ? spec.flag : spec.env, origin, origins, specLabels);
      continue;
    }
    setPath(options, spec.path, convert(spec, raw));
    origins.set(spec.path, origin);
  }
  // --prefix-length / --concurrency-threshold alone imply the default policy, which they belong to.
  const policy = options.policy as Record<string, unknown> | undefined;
  if (policy !== undefined && typeof policy === 'object' && policy !== null && policy.name === undefined) {
    policy.name = policyOwning(Object.keys(policy)) ?? ROUTER_DEFAULTS.policy.name;
  }
  return { options: options as unknown as RouterOptions, origins, specLabels, configFile };
}

/** `name?option=value&…` from --policy or PREFIX_ROUTER_POLICY: sets policy.name and each option, typed by the schema. */
function applyPolicySpec(
  options: Record<string, unknown>,
  text: string,
  label: string,
  origin: Origin,
  origins: Map<string, Origin>,
  specLabels: Map<string, string>,
): void {
  const [name, query = ''] = text.trim().split('?', 2);
  // A policy named here replaces one from the config file, options and all.
  options.policy = { name };
  origins.set('policy.name', origin);
  const definition = policyDefinition(name);
  for (const pair of query.split('&').filter((p) => p !== '')) {
    const eq = pair.indexOf('=');
    const key = eq < 0 ? pair : pair.slice(0, eq);
    const raw = eq < 0 ? '' : decodeURIComponent(pair.slice(eq + 1));
    const option = definition?.options.find((o) => o.name === key);
    setPath(options, `policy.${key}`, option === undefined ? raw : optionValueFromText(option, raw));
    origins.set(`policy.${key}`, origin);
    specLabels.set(`policy.${key}`, `${label} option ${key}`);
  }
}

/** The one policy that has every one of these options, when exactly one has (so `--block-chars 128` alone means cache-aware). */
function policyOwning(keys: readonly string[]): string | undefined {
  const owners = (POLICY_DEFINITIONS as readonly PolicyDefinition[]).filter((d) =>
    keys.every((k) => d.options.some((o) => o.name === k)),
  );
  if (owners.some((d) => d.name === ROUTER_DEFAULTS.policy.name)) return ROUTER_DEFAULTS.policy.name;
  return owners.length === 1 ? owners[0].name : undefined;
}

/** Loads, merges and validates; throws RouterConfigError whose lines name flags, variables or file keys. */
export function loadRouterConfig(sources: ConfigSources, validation: RouterValidation = {}): RouterConfig {
  const loaded = loadRouterOptions(sources, validation);
  return resolveRouterConfig(loaded.options, (problem) => labelFor(problem, loaded), validation);
}

function labelFor(problem: OptionProblem, loaded: LoadedOptions): string {
  const basePath = problem.option.replace(/\[\d+\]$/, '');
  const spec = CLI_OPTIONS.find((s) => s.path === basePath);
  const origin = loaded.origins.get(basePath);
  const inSpec = loaded.specLabels?.get(basePath);
  if (inSpec !== undefined) return inSpec;
  if (origin === 'flag' && spec) return spec.flag;
  if (origin === 'env' && spec) return spec.env;
  if (origin === 'file') return `${problem.option} in ${loaded.configFile}`;
  if (spec) return `${spec.flag} (or ${spec.env})`;
  return problem.option;
}

function readConfigFile(path: string, origins: Map<string, Origin>): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new RouterConfigError([
      `${CONFIG_FILE_FLAG} ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)})`,
    ]);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new RouterConfigError([`${CONFIG_FILE_FLAG} ${path} is not valid JSON (${(err as Error).message})`]);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new RouterConfigError([`${CONFIG_FILE_FLAG} ${path} must contain a JSON object`]);
  }
  const options = value as Record<string, unknown>;
  // `"policy": "name"` or `"policy": "name?option=value"`: the spec string form.
  if (typeof options.policy === 'string') options.policy = { ...readPolicySpec(options.policy).config };
  recordOrigins(options, '', origins);
  return options;
}

function recordOrigins(value: Record<string, unknown>, prefix: string, origins: Map<string, Origin>): void {
  for (const [key, v] of Object.entries(value)) {
    const path = `${prefix}${key}`;
    origins.set(path, 'file');
    if (typeof v === 'object' && v !== null && !Array.isArray(v))
      recordOrigins(v as Record<string, unknown>, `${path}.`, origins);
  }
}

function convert(spec: CliOptionSpec, raw: unknown): unknown {
  if (spec.kind === 'list') {
    const items = Array.isArray(raw) ? raw : [raw];
    return items.flatMap((item) => String(item).split(/[\s,]+/)).filter((s) => s.length > 0);
  }
  const text = String(raw).trim();
  // Text that is not a decimal number stays text, so the range check reports it with the value received.
  if (spec.kind === 'integer') return parseDecimalInteger(text) ?? text;
  if (spec.kind === 'number') return parseDecimalNumber(text) ?? text;
  return text;
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let node = target;
  for (const key of keys.slice(0, -1)) {
    const next = node[key];
    if (typeof next !== 'object' || next === null || Array.isArray(next)) node[key] = {};
    node = node[key] as Record<string, unknown>;
  }
  node[keys[keys.length - 1]] = value;
}

function stringValue(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
