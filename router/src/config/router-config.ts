import { existsSync } from 'node:fs';
import { ConfigError } from '../common/config-error';
import { describeValue } from '../common/describe-value';
import {
  DEFAULT_POLICY_NAME,
  followsEngineKvEvents,
  formatProblem,
  integerInRangeProblem,
  policyConfigProblems,
  policyDefinition,
  POLICY_DEFINITIONS,
  type EngineStateNeed,
  type OptionProblem,
  type PolicyConfig,
  type RoutingPolicy,
} from '../policy';
import { KeyFileError, readKeyEntries, readKeyFile, readStateHashSecret } from '../common/api-keys';
import { allowedHostProblem } from '../protocol/host-allowlist';
import { checkKvEndpoint } from '../kv-events/zmq-endpoint';
import {
  FLOW_CONTROL_DEFAULTS,
  FLOW_CONTROL_RANGES,
  type FlowControlMode,
  type FlowControlSettings,
} from '../common/flow-control-settings';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
export const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];

export interface HealthCheckOptions {
  /** Milliseconds between checks of each backend; 0 turns health checking off (every backend is healthy). */
  readonly intervalMs: number;
  /** A check that has not answered within this many milliseconds failed. */
  readonly timeoutMs: number;
  /** Consecutive failed checks that eject a healthy backend. */
  readonly failureThreshold: number;
  /** Consecutive passed checks that re-admit an ejected backend. */
  readonly recoveryThreshold: number;
  /** Path requested on each backend; 200-299 passes. vLLM serves /health. */
  readonly path: string;
}

export interface LimitOptions {
  /** Largest request body accepted; larger gets 413. */
  readonly maxBodyBytes: number;
  /** A client must finish sending request headers within this time (Node closes the connection with 408). */
  readonly headersTimeoutMs: number;
  /** A client must finish sending the body within this time after its headers, else 408. */
  readonly bodyTimeoutMs: number;
  /**
   * A client that sends no body byte for this long is answered 408 and cut (at most bodyTimeoutMs): a declared
   * body that never comes holds a connection for seconds, not the whole body timeout.
   */
  readonly bodyIdleTimeoutMs: number;
  /** The backend must send response headers within this time, else 504 (non-streamed generations are slow). */
  readonly upstreamHeadersTimeoutMs: number;
  /** The backend may be silent mid-body for at most this long. */
  readonly upstreamBodyTimeoutMs: number;
  /**
   * A client that has not read what the router buffered for it (its socket full) for this long is cut and its
   * upstream request aborted, so unread streams never hold engine connections. 0 = never.
   */
  readonly clientDrainTimeoutMs: number;
  /**
   * Longest a routed request waits for a free connection to its backend (all maxConnectionsPerBackend in use);
   * then 503 overloaded with Retry-After. 0 = no bound. 10 s: a burst passes, a stuck pool does not hold
   * requests for the whole upstream headers timeout.
   */
  readonly poolWaitTimeoutMs: number;
  /** Routed requests in flight at once; more get 503 overloaded with Retry-After. 0 = no cap. */
  readonly maxInFlight: number;
  /** Routed requests in flight at once per client (its API key, else its address); more get 429. 0 = no cap. */
  readonly maxInFlightPerClient: number;
  /**
   * Bytes of request bodies held at once across requests (each is kept until its answer ends); a body that does not
   * fit gets 503 overloaded with Retry-After. 0 = a quarter of the memory the process may use (its cgroup limit,
   * else the machine's), at least maxBodyBytes.
   */
  readonly maxBufferedBodyBytes: number;
}

/** What startRouter takes. Only `backends` is required. */
export interface RouterOptions {
  /** Backend base URLs (http or https), e.g. http://127.0.0.1:8001. Their normalized URLs are the instance ids. */
  readonly backends: readonly string[];
  /** A policy configuration, or a ready policy object (e.g. one built by another module). @default sagemaker-prefix-aware with defaults */
  readonly policy?: PolicyConfig | RoutingPolicy;
  /** Seed of the Rng injected into random / least-outstanding-requests policies. @default 1 */
  readonly seed?: number;
  /** @default '127.0.0.1' */
  readonly host?: string;
  /** 0 picks a free port. @default 8080 (the SageMaker container port) */
  readonly port?: number;
  readonly healthCheck?: Partial<HealthCheckOptions>;
  readonly limits?: Partial<LimitOptions>;
  /** Upper bound on open connections (so concurrent requests) per backend. @default 1024 */
  readonly maxConnectionsPerBackend?: number;
  /** On close()/SIGTERM, in-flight requests get this long to finish before being cut. @default 25000 */
  readonly shutdownGraceMs?: number;
  /** @default 'info' */
  readonly logLevel?: LogLevel;
  /**
   * Publish this router's instance state — the load it counts and the routing blocks it was sent — at
   * GET /router/v1/instance-state for routers in front of it to observe, batching changes for this many ms.
   * 0 = off. @default 0
   */
  readonly publishStateMs?: number;
  /** Characters per routing block in the published state; observers using cache-aware must use the same blockChars. @default 256 */
  readonly publishStateBlockChars?: number;
  /** 'on': observe every backend's published instance state (backends that run with publishStateMs > 0). @default 'off' */
  readonly observeInstances?: 'on' | 'off';
  /** 'off': publish load only, no routing blocks (observers balance on it but learn nothing about prompts). @default 'on' */
  readonly publishStateBlocks?: 'on' | 'off';
  /**
   * 'on': learn each backend's prefill speed from the TTFTs this router observes (policy/prefill-speed.ts) and show
   * it to the policy, so cache-aware sends a slower backend of a mixed fleet proportionally less prefill. @default 'off'
   */
  readonly learnPrefillSpeeds?: 'on' | 'off';
  /**
   * File of API keys clients must present (`Authorization: Bearer KEY` or `x-prefix-router-api-key: KEY`), one
   * per line, re-read when it changes and on SIGHUP. Unset: no authentication. @default none
   */
  readonly apiKeyFile?: string;
  /** File whose first key the router sends to its engines as `Authorization: Bearer KEY` on every path (vLLM `--api-key`). @default none */
  readonly upstreamApiKeyFile?: string;
  /**
   * File holding the secret routing block hashes are keyed with (first key line, at least 32 characters; HMAC-SHA256
   * truncated to 64 bits), read at start. Every router that publishes or observes instance state must hold the
   * same one; without it a router draws a random secret, and its published state is refused by every observer.
   * @default none (a random secret per router)
   */
  readonly stateHashKeyFile?: string;
  /**
   * 'on': the SageMaker container contract paths (`POST /invocations`) answer without a key, because SageMaker's
   * front end authenticates callers (SigV4, IAM) and is the only client of a SageMaker container; the container
   * sets it in sagemaker mode. `/ping` and `/health` never need a key. @default 'off'
   */
  readonly openContainerPaths?: 'on' | 'off';
  /**
   * 'off': with apiKeyFile, each key's requests reach the engines salted with its identity (vLLM's `cache_salt`), so
   * no key reuses, or reads the cached-token count of, another key's cached prompt; and the routing hashes are
   * scoped by key. 'on': keys share the engines' cache and the routing index, so a system prompt common to several
   * keys is cached once; every key can then tell whether a prompt another key sent is cached. @default 'off'
   */
  readonly sharedEngineCache?: 'on' | 'off';
  /**
   * Flow control by priority class (core/flow-control.ts): 'on' holds requests with a priority above 0 at the router
   * while the engine chosen for them has more than flowControlBound predicted prefill tokens queued. @default 'on'
   */
  readonly flowControl?: FlowControlMode;
  /** Predicted prefill tokens queued on the chosen engine above which lower classes wait. @default 16384 */
  readonly flowControlBound?: number;
  /** Requests that may wait at the router, all classes together; one more is answered 429 flow_control_full. @default 100000 */
  readonly flowControlMaxWaiting?: number;
  /** Port of a second listener that alone serves /metrics and /router/v1/instance-state; 0 picks a free port. @default none (they are served on the main listener) */
  readonly adminPort?: number;
  /** Address of the admin listener. @default '127.0.0.1' */
  readonly adminHost?: string;
  /** File of keys the admin listener requires (same format as apiKeyFile); unset: the admin listener takes no key. @default none */
  readonly adminApiKeyFile?: string;
  /**
   * Which `x-prefix-router-*` headers 2xx answers carry: 'off' none; 'instance' the serving backend's opaque
   * name (`backend-N`); 'all' also the decision reason, decision time and predicted cached tokens (benchmarks
   * read them). Never on error answers. Anyone who reads them learns whether a prefix is cached. @default 'off'
   */
  readonly routingHeaders?: RoutingHeaderMode;
  /**
   * Host names (or IP literals) the router answers for, on both listeners; a request whose `Host` names none of
   * them gets 421 before authentication or any read of its body (DNS rebinding). `.example.com` matches the name
   * and every name below it; any port matches. `/ping` and `/health` are exempt (load balancers probe by address).
   * @default none (any Host)
   */
  readonly allowedHosts?: readonly string[];
  /**
   * Engines' KV cache event streams, `BACKEND_URL=ZMQ_ENDPOINT` each (BACKEND_URL one of `backends`, the endpoint
   * its vLLM engine publishes on, e.g. `tcp://127.0.0.1:5557`): cache-aware then predicts that engine's hits from
   * what it says it holds, and falls back to its own estimate while the engine's account is unknown. @default none
   */
  readonly kvEvents?: readonly string[];
  /**
   * Replay sockets of those engines, `BACKEND_URL=ZMQ_ENDPOINT` each (vLLM's `replay_endpoint`): batches a stream
   * missed (joining a running engine, a gap) are fetched there; without one, a gap leaves that engine unknown until
   * its cache is cleared or it restarts. @default none
   */
  readonly kvEventsReplay?: readonly string[];
  /**
   * How the router tokenizes requests as the engines do, needed with `kvEvents`: the model's `tokenizer.json` (its
   * `tokenizer_config.json` beside it gives the chat template), or `emulator` for `prefix-router emulate` engines.
   * @default none
   */
  readonly tokenizer?: string;
}

export type RoutingHeaderMode = 'off' | 'instance' | 'all';
export const ROUTING_HEADER_MODES: readonly RoutingHeaderMode[] = ['off', 'instance', 'all'];

export interface BackendTarget {
  /** The instance id: the normalized URL without a trailing slash. */
  readonly id: string;
  /** scheme://host:port */
  readonly origin: string;
  /** Path prefix ('' or '/something') prepended to every backend path. */
  readonly basePath: string;
}

export interface RouterConfig {
  readonly backends: readonly BackendTarget[];
  readonly policy: PolicyConfig | RoutingPolicy;
  readonly seed: number;
  readonly host: string;
  readonly port: number;
  readonly healthCheck: HealthCheckOptions;
  readonly limits: LimitOptions;
  readonly maxConnectionsPerBackend: number;
  readonly shutdownGraceMs: number;
  readonly logLevel: LogLevel;
  readonly publishStateMs: number;
  readonly publishStateBlockChars: number;
  readonly observeInstances: 'on' | 'off';
  readonly publishStateBlocks: 'on' | 'off';
  readonly learnPrefillSpeeds: 'on' | 'off';
  readonly apiKeyFile: string | undefined;
  readonly upstreamApiKeyFile: string | undefined;
  readonly stateHashKeyFile: string | undefined;
  /**
   * True when limits.maxBodyBytes was not configured: the router then derives it from the backends' context
   * (bodyLimitForContext of their largest max_model_len), keeping limits.maxBodyBytes when none states one.
   */
  readonly maxBodyBytesFromContext: boolean;
  readonly openContainerPaths: 'on' | 'off';
  readonly sharedEngineCache: 'on' | 'off';
  readonly flowControl: FlowControlSettings;
  readonly adminPort: number | undefined;
  readonly adminHost: string;
  readonly adminApiKeyFile: string | undefined;
  readonly routingHeaders: RoutingHeaderMode;
  readonly allowedHosts: readonly string[] | undefined;
  /** Engines' KV event streams: the backend id and its engine's publisher endpoint. */
  readonly kvEvents: readonly {
    readonly engine: string;
    readonly endpoint: string;
    readonly replayEndpoint?: string;
  }[];
  readonly tokenizer: string | undefined;
}

export const ROUTER_DEFAULTS = {
  policy: { name: DEFAULT_POLICY_NAME } as PolicyConfig,
  seed: 1,
  host: '127.0.0.1',
  port: 8080,
  healthCheck: {
    intervalMs: 2000,
    timeoutMs: 1000,
    failureThreshold: 3,
    recoveryThreshold: 2,
    path: '/health',
  } as HealthCheckOptions,
  limits: {
    maxBodyBytes: 16 * 1024 * 1024,
    headersTimeoutMs: 10_000,
    bodyTimeoutMs: 30_000,
    bodyIdleTimeoutMs: 5_000,
    upstreamHeadersTimeoutMs: 600_000,
    upstreamBodyTimeoutMs: 300_000,
    clientDrainTimeoutMs: 300_000,
    poolWaitTimeoutMs: 10_000,
    maxInFlight: 0,
    maxInFlightPerClient: 0,
    maxBufferedBodyBytes: 0,
  } as LimitOptions,
  maxConnectionsPerBackend: 1024,
  shutdownGraceMs: 25_000,
  logLevel: 'info' as LogLevel,
  publishStateMs: 0,
  publishStateBlockChars: 256,
  observeInstances: 'off' as 'on' | 'off',
  openContainerPaths: 'off' as 'on' | 'off',
  sharedEngineCache: 'off' as 'on' | 'off',
  publishStateBlocks: 'on' as 'on' | 'off',
  learnPrefillSpeeds: 'off' as 'on' | 'off',
  adminHost: '127.0.0.1',
  routingHeaders: 'off' as RoutingHeaderMode,
} as const;

/** Integer ranges, by option path; shared by validation, the CLI help and docs. */
export const INTEGER_RANGES: Readonly<Record<string, { readonly min: number; readonly max: number }>> = {
  seed: { min: 0, max: 4294967295 },
  port: { min: 0, max: 65535 },
  'healthCheck.intervalMs': { min: 50, max: 3_600_000 },
  'healthCheck.timeoutMs': { min: 10, max: 600_000 },
  'healthCheck.failureThreshold': { min: 1, max: 100 },
  'healthCheck.recoveryThreshold': { min: 1, max: 100 },
  'limits.maxBodyBytes': { min: 1024, max: 1024 * 1024 * 1024 },
  'limits.headersTimeoutMs': { min: 100, max: 600_000 },
  'limits.bodyTimeoutMs': { min: 100, max: 3_600_000 },
  'limits.bodyIdleTimeoutMs': { min: 100, max: 3_600_000 },
  'limits.upstreamHeadersTimeoutMs': { min: 100, max: 86_400_000 },
  'limits.upstreamBodyTimeoutMs': { min: 100, max: 86_400_000 },
  'limits.clientDrainTimeoutMs': { min: 0, max: 86_400_000 },
  'limits.poolWaitTimeoutMs': { min: 0, max: 86_400_000 },
  'limits.maxInFlight': { min: 0, max: 1_000_000 },
  'limits.maxInFlightPerClient': { min: 0, max: 1_000_000 },
  'limits.maxBufferedBodyBytes': { min: 0, max: 2 ** 40 },
  maxConnectionsPerBackend: { min: 1, max: 65536 },
  shutdownGraceMs: { min: 0, max: 3_600_000 },
  publishStateMs: { min: 0, max: 10_000 },
  publishStateBlockChars: { min: 16, max: 65_536 },
  adminPort: { min: 0, max: 65535 },
  flowControlBound: FLOW_CONTROL_RANGES.queuedPrefillBoundTokens,
  flowControlMaxWaiting: FLOW_CONTROL_RANGES.maxWaiting,
};

/**
 * Thrown when a router configuration (startRouter options, serve flags, PREFIX_ROUTER_* variables, config file)
 * is invalid: the common ConfigError, one line per problem naming the option, under a fixed heading; its own
 * name so programmatic callers of startRouter can tell it apart.
 */
export class RouterConfigError extends ConfigError {
  constructor(problems: readonly string[]) {
    super(problems, 'invalid router configuration');
    this.name = 'RouterConfigError';
  }
}

/**
 * What of the engines' own state (RoutingPolicy.engineState) serve can give a policy: none yet. The hook for engine
 * KV events (issue 39, router/src/kv-events/): once serve keeps each engine's blocks from its events and fills
 * InstanceView.engine.cachedPromptTokens, 'cached-blocks' joins this list and llm-d-precise runs live.
 */
const LIVE_ENGINE_STATE: readonly EngineStateNeed[] = [];

/** Why serve cannot run a policy that reads `need` of the engines' state, or undefined when it can. */
export function liveEngineStateRefusal(policy: string, need: EngineStateNeed | undefined): string | undefined {
  if (need === undefined || LIVE_ENGINE_STATE.includes(need)) return undefined;
  return need === 'cached-blocks-and-queue'
    ? `${policy} reads every engine's exact prefix cache and prefill queue, which only the simulator's engine models have: run it with prefix-router simulate or plan, not serve`
    : `${policy} reads each engine's cached blocks, which serve learns only from the engines' KV events, not subscribed to yet (issue 39): run it with prefix-router simulate or plan, or serve llm-d for the approximate scorer`;
}

/** The policies whose decisions the engines' KV events change (RouterOptions.kvEvents). */
export const KV_EVENTS_POLICIES: readonly string[] = POLICY_DEFINITIONS.filter((d) => followsEngineKvEvents(d)).map(
  (d) => d.name,
);

/** Whether a configured policy reads the engines' KV events (a policy object: unknown, so no). */
export function policyReadsKvEvents(policy: PolicyConfig | RoutingPolicy): boolean {
  return !isRoutingPolicy(policy) && followsEngineKvEvents(policyDefinition(policy.name));
}

export function isRoutingPolicy(value: unknown): value is RoutingPolicy {
  return typeof value === 'object' && value !== null && typeof (value as RoutingPolicy).decide === 'function';
}

const TOP_LEVEL_KEYS = [
  'backends',
  'policy',
  'seed',
  'host',
  'port',
  'healthCheck',
  'limits',
  'maxConnectionsPerBackend',
  'shutdownGraceMs',
  'logLevel',
  'publishStateMs',
  'publishStateBlockChars',
  'observeInstances',
  'publishStateBlocks',
  'learnPrefillSpeeds',
  'apiKeyFile',
  'upstreamApiKeyFile',
  'stateHashKeyFile',
  'openContainerPaths',
  'sharedEngineCache',
  'flowControl',
  'flowControlBound',
  'flowControlMaxWaiting',
  'adminPort',
  'adminHost',
  'adminApiKeyFile',
  'routingHeaders',
  'allowedHosts',
  'kvEvents',
  'kvEventsReplay',
  'tokenizer',
];

/** How far validation may look beyond the options themselves. */
export interface RouterValidation {
  /**
   * Read the key files the options name (a missing or empty file is a problem). Off where those paths belong to
   * another machine, as at `cdk synth` for a container's settings: only their form is checked then.
   * @default true
   */
  readonly readFiles?: boolean;
}

/** Options that are 'on' or 'off'. */
const ON_OFF_OPTIONS = [
  'observeInstances',
  'openContainerPaths',
  'sharedEngineCache',
  'publishStateBlocks',
  'learnPrefillSpeeds',
  'flowControl',
];

/** A policy configuration's problems, and why serve cannot run it when it reads engine state serve lacks. */
function livePolicyProblems(policy: unknown): OptionProblem[] {
  const problems = policyConfigProblems(policy, 'policy.');
  if (problems.length > 0) return problems;
  const name = (policy as PolicyConfig).name;
  const refusal = liveEngineStateRefusal(name, policyDefinition(name)?.engineState);
  return refusal === undefined ? [] : [{ option: 'policy.name', rule: `is refused: ${refusal}`, got: name }];
}

/** Every problem in `options`, each with the option's property path. */
export function routerOptionProblems(options: unknown, validation: RouterValidation = {}): OptionProblem[] {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    return [{ option: 'options', rule: 'must be an object', got: options }];
  }
  const o = options as Record<string, unknown>;
  const problems: OptionProblem[] = [];
  for (const key of Object.keys(o)) {
    if (!TOP_LEVEL_KEYS.includes(key) && o[key] !== undefined)
      problems.push({ option: key, rule: 'is not a router option', got: o[key] });
  }
  problems.push(...backendProblems(o.backends));
  if (o.policy !== undefined && !isRoutingPolicy(o.policy)) problems.push(...livePolicyProblems(o.policy));
  for (const path of [
    'seed',
    'port',
    'maxConnectionsPerBackend',
    'shutdownGraceMs',
    'publishStateMs',
    'publishStateBlockChars',
    'adminPort',
    'flowControlBound',
    'flowControlMaxWaiting',
  ]) {
    checkInteger(problems, path, o[path]);
  }
  if (o.host !== undefined && (typeof o.host !== 'string' || o.host.length === 0)) {
    problems.push({ option: 'host', rule: 'must be a non-empty host name or IP address', got: o.host });
  }
  for (const path of ON_OFF_OPTIONS) {
    if (o[path] !== undefined && o[path] !== 'on' && o[path] !== 'off')
      problems.push({ option: path, rule: "must be 'on' or 'off'", got: o[path] });
  }
  if (o.routingHeaders !== undefined && !(ROUTING_HEADER_MODES as readonly unknown[]).includes(o.routingHeaders)) {
    problems.push({
      option: 'routingHeaders',
      rule: `must be one of ${ROUTING_HEADER_MODES.join(', ')}`,
      got: o.routingHeaders,
    });
  }
  problems.push(...allowedHostsProblems(o.allowedHosts));
  problems.push(...kvEventsProblems(o.kvEvents, o.tokenizer, o.backends, validation.readFiles ?? true));
  problems.push(...kvEventsProblems(o.kvEventsReplay, 'emulator', o.kvEvents, false, 'kvEventsReplay'));
  if (o.adminHost !== undefined && (typeof o.adminHost !== 'string' || o.adminHost.length === 0)) {
    problems.push({ option: 'adminHost', rule: 'must be a non-empty host name or IP address', got: o.adminHost });
  }
  if (o.adminApiKeyFile !== undefined && o.adminPort === undefined) {
    problems.push({
      option: 'adminApiKeyFile',
      rule: 'needs adminPort (the admin listener it protects)',
      got: o.adminApiKeyFile,
    });
  }
  problems.push(...keyFileProblems('apiKeyFile', o.apiKeyFile, validation.readFiles ?? true, readKeyEntries));
  for (const path of ['upstreamApiKeyFile', 'adminApiKeyFile'])
    problems.push(...keyFileProblems(path, o[path], validation.readFiles ?? true));
  problems.push(
    ...keyFileProblems('stateHashKeyFile', o.stateHashKeyFile, validation.readFiles ?? true, readStateHashSecret),
  );
  if (o.logLevel !== undefined && !(LOG_LEVELS as readonly unknown[]).includes(o.logLevel)) {
    problems.push({ option: 'logLevel', rule: `must be one of ${LOG_LEVELS.join(', ')}`, got: o.logLevel });
  }
  problems.push(...groupProblems(o, 'healthCheck', Object.keys(ROUTER_DEFAULTS.healthCheck)));
  problems.push(...groupProblems(o, 'limits', Object.keys(ROUTER_DEFAULTS.limits)));
  const limits = (typeof o.limits === 'object' && o.limits !== null ? o.limits : {}) as Record<string, unknown>;
  const maxBody = typeof limits.maxBodyBytes === 'number' ? limits.maxBodyBytes : ROUTER_DEFAULTS.limits.maxBodyBytes;
  if (
    typeof limits.maxBufferedBodyBytes === 'number' &&
    limits.maxBufferedBodyBytes > 0 &&
    limits.maxBufferedBodyBytes < maxBody
  ) {
    problems.push({
      option: 'limits.maxBufferedBodyBytes',
      rule: `must be 0 (automatic) or at least limits.maxBodyBytes (${maxBody}), or no largest body could ever be read`,
      got: limits.maxBufferedBodyBytes,
    });
  }
  return problems;
}

function allowedHostsProblems(value: unknown): OptionProblem[] {
  if (value === undefined) return [];
  if (!Array.isArray(value) || value.length === 0 || !value.every((v) => typeof v === 'string')) {
    return [{ option: 'allowedHosts', rule: 'must be a non-empty list of host names', got: value }];
  }
  return value.flatMap((entry: string) => {
    const problem = allowedHostProblem(entry);
    return problem === undefined
      ? []
      : [{ option: 'allowedHosts', rule: `must list host names or IP addresses: ${problem}`, got: value }];
  });
}

/** A key file option must name a readable file holding at least one key; the message never shows its content. */
function keyFileProblems(
  path: string,
  value: unknown,
  readFiles: boolean,
  read: (file: string) => unknown = readKeyFile,
): OptionProblem[] {
  if (value === undefined) return [];
  if (typeof value !== 'string' || value.length === 0)
    return [{ option: path, rule: 'must be the path of a key file', got: value }];
  if (!readFiles) return [];
  try {
    read(value);
    return [];
  } catch (err) {
    if (!(err instanceof KeyFileError)) throw err;
    return [{ option: path, rule: `must name a readable file with one key per line: ${err.message}`, got: value }];
  }
}

function groupProblems(o: Record<string, unknown>, group: string, keys: readonly string[]): OptionProblem[] {
  const value = o[group];
  if (value === undefined) return [];
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return [{ option: group, rule: 'must be an object', got: value }];
  const g = value as Record<string, unknown>;
  const problems: OptionProblem[] = [];
  for (const key of Object.keys(g)) {
    if (!keys.includes(key) && g[key] !== undefined)
      problems.push({ option: `${group}.${key}`, rule: `is not a ${group} option`, got: g[key] });
  }
  for (const key of keys) {
    const path = `${group}.${key}`;
    if (path === 'healthCheck.path') {
      if (g.path !== undefined && (typeof g.path !== 'string' || !g.path.startsWith('/'))) {
        problems.push({ option: path, rule: "must be a path starting with '/'", got: g.path });
      }
    } else if (path === 'healthCheck.intervalMs' && g.intervalMs === 0) {
      // 0 turns health checks off.
    } else {
      checkInteger(problems, path, g[key]);
    }
  }
  if (group === 'healthCheck' && problems.some((p) => p.option === 'healthCheck.intervalMs')) {
    const i = problems.findIndex((p) => p.option === 'healthCheck.intervalMs');
    problems[i] = { ...problems[i], rule: `must be 0 (off) or an integer between 50 and 3600000` };
  }
  return problems;
}

function checkInteger(problems: OptionProblem[], path: string, value: unknown): void {
  if (value === undefined) return;
  const problem = integerInRangeProblem(path, value, INTEGER_RANGES[path]);
  if (problem) problems.push(problem);
}

function backendProblems(backends: unknown): OptionProblem[] {
  if (!Array.isArray(backends) || backends.length === 0) {
    return [{ option: 'backends', rule: 'must list at least one backend URL (http://host:port)', got: backends }];
  }
  const problems: OptionProblem[] = [];
  const seen = new Set<string>();
  backends.forEach((b, i) => {
    const target = typeof b === 'string' ? parseBackendUrl(b) : undefined;
    if (target === undefined) {
      problems.push({
        option: `backends[${i}]`,
        rule: 'must be an http:// or https:// URL without query or fragment',
        got: b,
      });
    } else if (seen.has(target.id)) {
      problems.push({ option: `backends[${i}]`, rule: 'is listed twice', got: b });
    } else {
      seen.add(target.id);
    }
  });
  return problems;
}

export function parseBackendUrl(value: string): BackendTarget | undefined {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.search || url.hash || url.username || url.password)
    return undefined;
  const basePath = url.pathname.replace(/\/+$/, '');
  return { id: `${url.origin}${basePath}`, origin: url.origin, basePath };
}

/**
 * Applies defaults and validates. Throws RouterConfigError naming each bad option by `label(path)` (property
 * paths by default; the CLI passes flag/env names).
 */
export function resolveRouterConfig(
  options: RouterOptions,
  label: (problem: OptionProblem) => string = (p) => p.option,
  validation: RouterValidation = {},
): RouterConfig {
  const problems = routerOptionProblems(options, validation);
  if (problems.length > 0) throw new RouterConfigError(problems.map((p) => formatProblem(p, label(p))));
  const d = ROUTER_DEFAULTS;
  return {
    backends: options.backends.map((b) => parseBackendUrl(b) as BackendTarget),
    policy: options.policy ?? d.policy,
    seed: options.seed ?? d.seed,
    host: options.host ?? d.host,
    port: options.port ?? d.port,
    healthCheck: { ...d.healthCheck, ...stripUndefined(options.healthCheck) },
    limits: { ...d.limits, ...stripUndefined(options.limits) },
    maxConnectionsPerBackend: options.maxConnectionsPerBackend ?? d.maxConnectionsPerBackend,
    shutdownGraceMs: options.shutdownGraceMs ?? d.shutdownGraceMs,
    logLevel: options.logLevel ?? d.logLevel,
    publishStateMs: options.publishStateMs ?? d.publishStateMs,
    publishStateBlockChars: options.publishStateBlockChars ?? d.publishStateBlockChars,
    observeInstances: options.observeInstances ?? d.observeInstances,
    publishStateBlocks: options.publishStateBlocks ?? d.publishStateBlocks,
    learnPrefillSpeeds: options.learnPrefillSpeeds ?? d.learnPrefillSpeeds,
    apiKeyFile: options.apiKeyFile,
    upstreamApiKeyFile: options.upstreamApiKeyFile,
    stateHashKeyFile: options.stateHashKeyFile,
    maxBodyBytesFromContext: options.limits?.maxBodyBytes === undefined,
    openContainerPaths: options.openContainerPaths ?? d.openContainerPaths,
    sharedEngineCache: options.sharedEngineCache ?? d.sharedEngineCache,
    flowControl: {
      ...FLOW_CONTROL_DEFAULTS,
      mode: options.flowControl ?? FLOW_CONTROL_DEFAULTS.mode,
      queuedPrefillBoundTokens: options.flowControlBound ?? FLOW_CONTROL_DEFAULTS.queuedPrefillBoundTokens,
      maxWaiting: options.flowControlMaxWaiting ?? FLOW_CONTROL_DEFAULTS.maxWaiting,
    },
    adminPort: options.adminPort,
    adminHost: options.adminHost ?? d.adminHost,
    adminApiKeyFile: options.adminApiKeyFile,
    routingHeaders: options.routingHeaders ?? d.routingHeaders,
    allowedHosts: options.allowedHosts,
    kvEvents: (options.kvEvents ?? []).map(kvEventStreamOf).map((stream) => {
      const replay = (options.kvEventsReplay ?? []).map(kvEventStreamOf).find((r) => r.engine === stream.engine);
      return replay === undefined ? stream : { ...stream, replayEndpoint: replay.endpoint };
    }),
    tokenizer: options.tokenizer,
  };
}

/** `BACKEND_URL=ZMQ_ENDPOINT` as the backend id and the endpoint (a backend URL has no `=`: no query allowed). */
function kvEventStreamOf(entry: string): { engine: string; endpoint: string } {
  const eq = entry.indexOf('=');
  return { engine: parseBackendUrl(entry.slice(0, eq))?.id ?? '', endpoint: entry.slice(eq + 1) };
}

/**
 * Problems of a `BACKEND_URL=ZMQ_ENDPOINT` list (`kvEvents`, or `kvEventsReplay` whose backends are those of
 * `kvEvents`) and of the tokenizer `kvEvents` needs.
 */
function kvEventsProblems(
  value: unknown,
  tokenizer: unknown,
  backends: unknown,
  readFiles: boolean,
  name = 'kvEvents',
): OptionProblem[] {
  const problems: OptionProblem[] = [];
  const entries = value === undefined ? [] : value;
  if (!Array.isArray(entries))
    return [{ option: name, rule: 'must be a list of BACKEND_URL=ZMQ_ENDPOINT', got: value }];
  const known = new Set(
    (Array.isArray(backends) ? backends : []).map((b) =>
      typeof b !== 'string' ? undefined : name === 'kvEvents' ? parseBackendUrl(b)?.id : kvEventStreamOf(b).engine,
    ),
  );
  const seen = new Set<string>();
  entries.forEach((entry: unknown, i) => {
    const option = `${name}[${i}]`;
    if (typeof entry !== 'string' || entry.indexOf('=') < 1) {
      problems.push({ option, rule: 'must be BACKEND_URL=ZMQ_ENDPOINT', got: entry });
      return;
    }
    const { engine, endpoint } = kvEventStreamOf(entry);
    if (!known.has(engine) || engine === '')
      problems.push({
        option,
        rule: `must name one of the ${name === 'kvEvents' ? 'backends' : 'kvEvents backends'} (BACKEND_URL=ZMQ_ENDPOINT)`,
        got: entry,
      });
    else if (seen.has(engine)) problems.push({ option, rule: 'names a backend listed before', got: entry });
    const endpointProblem = kvEndpointProblem(endpoint);
    if (endpointProblem !== undefined) problems.push({ option, rule: endpointProblem, got: entry });
    seen.add(engine);
  });
  if (name !== 'kvEvents') return problems;
  return [...problems, ...tokenizerProblems(tokenizer, entries.length > 0, readFiles)];
}

/** The endpoint rule (kv-events/zmq-endpoint.ts: tcp on loopback, or ipc), as a problem's rule, or undefined. */
function kvEndpointProblem(endpoint: string): string | undefined {
  try {
    checkKvEndpoint('its endpoint', endpoint);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

function tokenizerProblems(tokenizer: unknown, withEvents: boolean, readFiles: boolean): OptionProblem[] {
  if (tokenizer === undefined)
    return withEvents
      ? [
          {
            option: 'tokenizer',
            rule: "is needed with --kv-events (kvEvents): a tokenizer.json file, or 'emulator'",
            got: tokenizer,
          },
        ]
      : [];
  if (typeof tokenizer !== 'string' || tokenizer.length === 0)
    return [{ option: 'tokenizer', rule: "must be a tokenizer.json file or 'emulator'", got: tokenizer }];
  if (!withEvents) return [{ option: 'tokenizer', rule: 'is used only with --kv-events (kvEvents)', got: tokenizer }];
  if (tokenizer !== 'emulator' && readFiles && !existsSync(tokenizer))
    return [{ option: 'tokenizer', rule: "must be a readable tokenizer.json file or 'emulator'", got: tokenizer }];
  return [];
}

function stripUndefined<T extends object>(value: T | undefined): Partial<T> {
  if (value === undefined) return {};
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

export { describeValue };
