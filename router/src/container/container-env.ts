import { ConfigError } from '../common/config-error';
import { parseDecimalInteger } from '../common/decimal-text';
import { describeValue } from '../common/describe-value';

/**
 * The settings of `prefix-router container` that are its own (how engines are laid out, started, restarted and
 * how metrics leave the container), read from environment variables. Router settings (policy, health checks,
 * limits, ...) are not parsed here: they go through the same PREFIX_ROUTER_* path as `prefix-router serve`.
 * Every problem is collected and reported at once, each naming the variable, the allowed range and the value.
 */
export type ContainerMode = 'sagemaker' | 'multi-engine';
export const CONTAINER_MODES: readonly ContainerMode[] = ['sagemaker', 'multi-engine'];

export interface ContainerSettings {
  readonly mode: ContainerMode;
  /** Engines to run: 1 in sagemaker mode. */
  readonly engines: number;
  /** GPUs to divide among the engines; undefined = detect (CUDA_VISIBLE_DEVICES, then `nvidia-smi -L`). */
  readonly gpus: number | undefined;
  /** Port of engine 0; the others follow. 0 = free ports picked at start (tests). */
  readonly engineBasePort: number;
  /** Command template with {port}, {gpus}, {index}, {tp}; undefined = the DLC's vLLM server. */
  readonly engineCommand: string | undefined;
  /** Public port of the router: PREFIX_ROUTER_PORT, else SAGEMAKER_BIND_TO_PORT, else 8080. */
  readonly port: number;
  /** Public interface of the router: PREFIX_ROUTER_HOST, else 0.0.0.0 (all interfaces of the container). */
  readonly host: string;
  /** Time in-flight requests get on SIGTERM before the router cuts them (SageMaker kills at 30 s). */
  readonly shutdownGraceMs: number;
  /** After the router drained: time engines get after SIGTERM before SIGKILL. */
  readonly engineStopTimeoutMs: number;
  /** First restart delay after an engine exits; doubles per consecutive failure up to the maximum. */
  readonly restartBackoffMs: number;
  readonly restartBackoffMaxMs: number;
  /**
   * Exits of an engine that has not yet passed a health check after which the container gives up and exits 1 with
   * the engine's last lines, so SageMaker fails the deployment at once instead of waiting out its start-up health
   * check timeout on every instance.
   */
  readonly engineStartAttempts: number;
  /**
   * Engines publish their KV cache events (vLLM's --kv-events-config) and the router follows them
   * (PREFIX_ROUTER_ENGINE_KV_EVENTS=on): each engine then takes a second port, its replay socket's.
   */
  readonly engineKvEvents: boolean;
  /**
   * With KV events and a Hugging Face model the hub cache does not hold yet: how long the container waits, after
   * starting the engines, for the engine to download the tokenizer.json the router needs; 0 refuses such a start.
   */
  readonly tokenizerWaitMs: number;
  /** SAGEMAKER_SAFE_PORT_RANGE, when set: the ports SageMaker leaves to the container's own processes. */
  readonly safePortRange: { readonly min: number; readonly max: number } | undefined;
  readonly emf: {
    readonly enabled: boolean;
    readonly intervalMs: number;
    readonly namespace: string;
    readonly endpointName: string;
  };
}

export const CONTAINER_ENV = {
  mode: 'PREFIX_ROUTER_MODE',
  engines: 'PREFIX_ROUTER_ENGINES',
  gpus: 'PREFIX_ROUTER_GPUS',
  engineBasePort: 'PREFIX_ROUTER_ENGINE_BASE_PORT',
  engineCommand: 'PREFIX_ROUTER_ENGINE_COMMAND',
  engineStopTimeoutMs: 'PREFIX_ROUTER_ENGINE_STOP_TIMEOUT_MS',
  restartBackoffMs: 'PREFIX_ROUTER_RESTART_BACKOFF_MS',
  restartBackoffMaxMs: 'PREFIX_ROUTER_RESTART_BACKOFF_MAX_MS',
  engineStartAttempts: 'PREFIX_ROUTER_ENGINE_START_ATTEMPTS',
  engineKvEvents: 'PREFIX_ROUTER_ENGINE_KV_EVENTS',
  tokenizerWaitMs: 'PREFIX_ROUTER_TOKENIZER_WAIT_MS',
  emf: 'PREFIX_ROUTER_EMF',
  emfIntervalMs: 'PREFIX_ROUTER_EMF_INTERVAL_MS',
  emfNamespace: 'PREFIX_ROUTER_EMF_NAMESPACE',
  emfEndpointName: 'PREFIX_ROUTER_EMF_ENDPOINT_NAME',
  /** Router settings the container sets itself or gives container defaults. */
  port: 'PREFIX_ROUTER_PORT',
  host: 'PREFIX_ROUTER_HOST',
  shutdownGraceMs: 'PREFIX_ROUTER_SHUTDOWN_GRACE_MS',
  backends: 'PREFIX_ROUTER_BACKENDS',
  kvEvents: 'PREFIX_ROUTER_KV_EVENTS',
  kvEventsReplay: 'PREFIX_ROUTER_KV_EVENTS_REPLAY',
  tokenizer: 'PREFIX_ROUTER_TOKENIZER',
  sagemakerPort: 'SAGEMAKER_BIND_TO_PORT',
  safePortRange: 'SAGEMAKER_SAFE_PORT_RANGE',
  healthTimeoutMs: 'PREFIX_ROUTER_HEALTH_TIMEOUT_MS',
} as const;

export const CONTAINER_DEFAULTS = {
  mode: 'sagemaker' as ContainerMode,
  engineBasePort: 8100,
  port: 8080,
  host: '0.0.0.0',
  /** 20 s drain + 5 s engine stop leaves SageMaker's 30 s with margin for the process to exit. */
  shutdownGraceMs: 20_000,
  engineStopTimeoutMs: 5_000,
  restartBackoffMs: 1_000,
  restartBackoffMaxMs: 30_000,
  /** vLLM's own start-up retries are none; three failed starts in a row without ever answering /health is a broken model or config, not bad luck. */
  engineStartAttempts: 3,
  /**
   * SageMaker's longest start-up health check (ContainerStartupHealthCheckTimeoutInSeconds at most 3600): an engine
   * that has not downloaded its tokenizer by then has lost the instance anyway.
   */
  tokenizerWaitMs: 3_600_000,
  /**
   * sagemaker mode's router health timeout: vLLM answers /health on the same event loop that tokenizes and streams
   * every request, so a loaded engine answers late; 10 s (the router's default is 1 s) with the default 3 checks
   * every 2 s keeps a busy engine admitted, and timeouts alone never eject it there (fail open).
   */
  sagemakerHealthTimeoutMs: 10_000,
  emfIntervalMs: 60_000,
  emfNamespace: 'PrefixRouter',
  emfEndpointName: 'local',
} as const;

export const CONTAINER_RANGES = {
  engines: { min: 1, max: 64 },
  gpus: { min: 0, max: 1024 },
  engineBasePort: { min: 1, max: 65535 },
  port: { min: 0, max: 65535 },
  engineStopTimeoutMs: { min: 100, max: 30_000 },
  restartBackoffMs: { min: 100, max: 600_000 },
  restartBackoffMaxMs: { min: 100, max: 3_600_000 },
  engineStartAttempts: { min: 1, max: 100 },
  tokenizerWaitMs: { min: 0, max: 86_400_000 },
  emfIntervalMs: { min: 100, max: 3_600_000 },
  shutdownGraceMs: { min: 0, max: 3_600_000 },
} as const;

/** SageMaker sends SIGKILL this long after SIGTERM. */
export const SAGEMAKER_STOP_DEADLINE_MS = 30_000;

/** The common ConfigError for the container's variables, under its own heading and name. */
export class ContainerConfigError extends ConfigError {
  constructor(problems: readonly string[]) {
    super(problems, 'invalid container configuration');
    this.name = 'ContainerConfigError';
  }
}

export interface ParsedContainerEnv {
  readonly settings: ContainerSettings;
  /** Legal but doubtful settings (e.g. a drain that outlasts SageMaker's 30 s). */
  readonly warnings: readonly string[];
}

type Env = Readonly<Record<string, string | undefined>>;

/** Reads and validates the container's variables; throws ContainerConfigError listing every problem. */
export function parseContainerEnv(env: Env): ParsedContainerEnv {
  const found: Findings = { problems: [], warnings: [] };
  const { mode, engines, gpus } = engineLayout(env, found);
  const engineKvEvents = onOff(env, CONTAINER_ENV.engineKvEvents, false, found.problems);
  const portsPerEngine = engineKvEvents ? ENGINE_PORTS_WITH_KV_EVENTS : 1;
  const { engineBasePort, safePortRange } = enginePorts(env, engines, portsPerEngine, found);
  const { port, host } = routerAddress(env, engineBasePort, (engines ?? 1) * portsPerEngine, found);
  const timings = lifecycleTimings(env, found);
  const emf = emfSettings(env, found);
  if (found.problems.length > 0) throw new ContainerConfigError(found.problems);
  return {
    settings: {
      mode,
      engines: engines ?? 1,
      gpus,
      engineBasePort,
      engineCommand: value(env, CONTAINER_ENV.engineCommand),
      port,
      host,
      ...timings,
      engineKvEvents,
      safePortRange,
      emf,
    },
    warnings: found.warnings,
  };
}

/** What parsing found wrong (problems, fatal) or doubtful (warnings), in the order the variables are read. */
interface Findings {
  readonly problems: string[];
  readonly warnings: string[];
}

/** The mode, the engines it runs (undefined when the variable is bad) and the GPUs they share. */
function engineLayout(
  env: Env,
  found: Findings,
): { mode: ContainerMode; engines: number | undefined; gpus: number | undefined } {
  const { problems } = found;
  const V = CONTAINER_ENV;
  const R = CONTAINER_RANGES;
  const modeRaw = value(env, V.mode);
  let mode: ContainerMode = CONTAINER_DEFAULTS.mode;
  if (modeRaw !== undefined) {
    if ((CONTAINER_MODES as readonly string[]).includes(modeRaw)) mode = modeRaw as ContainerMode;
    else problems.push(`${V.mode} must be one of ${CONTAINER_MODES.join(', ')} (got ${describeValue(modeRaw)})`);
  }
  let engines = integer(env, V.engines, R.engines, problems);
  if (mode === 'sagemaker') {
    if (engines !== undefined && engines !== 1) {
      problems.push(
        `${V.engines} must be 1 in sagemaker mode (SageMaker routes between instances); set ${V.mode}=multi-engine to run several engines (got ${describeValue(value(env, V.engines))})`,
      );
    }
    engines = 1;
  } else if (mode === 'multi-engine' && engines === undefined && value(env, V.engines) === undefined) {
    problems.push(
      `${V.engines} must be set in multi-engine mode: an integer between ${R.engines.min} and ${R.engines.max} (got nothing)`,
    );
  }
  const gpus = integer(env, V.gpus, R.gpus, problems);
  if (gpus !== undefined && engines !== undefined && gpus > 0 && gpus % engines !== 0) {
    problems.push(
      `${V.gpus} must be divisible by ${V.engines} so every engine gets the same number of GPUs (got ${gpus} GPUs for ${engines} engines)`,
    );
  }
  if (gpus !== undefined && engines !== undefined && gpus > 0 && gpus < engines) {
    problems.push(`${V.engines} must be at most ${V.gpus} (got ${engines} engines for ${gpus} GPUs)`);
  }
  return { mode, engines, gpus };
}

/**
 * The engines' first port: the variable, else SageMaker's SAGEMAKER_SAFE_PORT_RANGE ("XXXX-YYYY", where internal
 * ports go unless a base port is given), else the default; a given base port outside the safe range is a warning.
 */
function enginePorts(
  env: Env,
  engines: number | undefined,
  portsPerEngine: number,
  found: Findings,
): { engineBasePort: number; safePortRange: { min: number; max: number } | undefined } {
  const V = CONTAINER_ENV;
  const R = CONTAINER_RANGES;
  const basePortRaw = value(env, V.engineBasePort);
  const portCount = (engines ?? 1) * portsPerEngine;
  const what = portsPerEngine === 1 ? 'engines' : `engines (with ${V.engineKvEvents}=on, ${portsPerEngine} each)`;
  let engineBasePort: number = CONTAINER_DEFAULTS.engineBasePort;
  if (basePortRaw !== undefined) {
    const n = parseDecimalInteger(basePortRaw);
    if (n === 0) engineBasePort = 0;
    else if (n === undefined || n < R.engineBasePort.min || n > R.engineBasePort.max - (portCount - 1)) {
      found.problems.push(
        `${V.engineBasePort} must be 0 (free ports) or an integer between 1 and ${R.engineBasePort.max - (portCount - 1)} so ${portCount} consecutive ports fit (got ${describeValue(basePortRaw)})`,
      );
    } else engineBasePort = n;
  }
  const safeRaw = value(env, V.safePortRange);
  const safePortRange = safeRaw === undefined ? undefined : safePortRangeOf(safeRaw, found);
  if (safePortRange !== undefined && basePortRaw === undefined) {
    if (safePortRange.max - safePortRange.min + 1 < portCount) {
      found.problems.push(
        portsPerEngine === 1
          ? `${V.safePortRange} must hold a port for each of the ${portCount} engines (got ${describeValue(safeRaw)})`
          : `${V.safePortRange} must hold the ${portCount} ports of the ${engines ?? 1} ${what} (got ${describeValue(safeRaw)})`,
      );
    } else engineBasePort = safePortRange.min;
  } else if (
    safePortRange !== undefined &&
    engineBasePort > 0 &&
    (engineBasePort < safePortRange.min || engineBasePort + portCount - 1 > safePortRange.max)
  ) {
    found.warnings.push(
      `${V.engineBasePort}=${engineBasePort} puts the engines outside ${V.safePortRange} (${safeRaw}), which SageMaker keeps free for the container's own processes`,
    );
  }
  return { engineBasePort, safePortRange };
}

function safePortRangeOf(raw: string, found: Findings): { min: number; max: number } | undefined {
  const m = /^(\d{1,5})-(\d{1,5})$/.exec(raw);
  const lo = m ? Number(m[1]) : NaN;
  const hi = m ? Number(m[2]) : NaN;
  if (m && lo >= 1 && hi <= 65535 && lo <= hi) return { min: lo, max: hi };
  found.problems.push(
    `${CONTAINER_ENV.safePortRange} must be two ports LOW-HIGH with 1 <= LOW <= HIGH <= 65535 (got ${describeValue(raw)})`,
  );
  return undefined;
}

/**
 * The router's public port and interface; the port must not be one of the engines' `enginePortCount` ports, and
 * the backends (and their KV event streams) are the engines.
 */
function routerAddress(
  env: Env,
  engineBasePort: number,
  enginePortCount: number,
  found: Findings,
): { port: number; host: string } {
  const V = CONTAINER_ENV;
  const routerPort = integer(env, V.port, CONTAINER_RANGES.port, found.problems);
  const sagemakerPort = integer(env, V.sagemakerPort, { min: 1, max: 65535 }, found.problems);
  const port = routerPort ?? sagemakerPort ?? CONTAINER_DEFAULTS.port;
  if (engineBasePort > 0 && port >= engineBasePort && port < engineBasePort + enginePortCount) {
    found.problems.push(
      `${V.engineBasePort} must leave the router's port ${port} free: engines would use ${engineBasePort}-${engineBasePort + enginePortCount - 1} (got ${engineBasePort})`,
    );
  }
  if (value(env, V.backends) !== undefined) {
    found.problems.push(
      `${V.backends} must not be set in the container: the backends are the engines it starts (got ${describeValue(value(env, V.backends))})`,
    );
  }
  for (const name of [V.kvEvents, V.kvEventsReplay]) {
    if (value(env, name) !== undefined)
      found.problems.push(
        `${name} must not be set in the container: set ${V.engineKvEvents}=on and it follows the engines it starts (got ${describeValue(value(env, name))})`,
      );
  }
  return { port, host: value(env, V.host) ?? CONTAINER_DEFAULTS.host };
}

/** Drain, engine stop, start attempts, restart back-off and the tokenizer download wait; a drain and stop that reach SageMaker's deadline warn. */
function lifecycleTimings(
  env: Env,
  found: Findings,
): Pick<
  ContainerSettings,
  | 'shutdownGraceMs'
  | 'engineStopTimeoutMs'
  | 'restartBackoffMs'
  | 'restartBackoffMaxMs'
  | 'engineStartAttempts'
  | 'tokenizerWaitMs'
> {
  const { problems } = found;
  const V = CONTAINER_ENV;
  const R = CONTAINER_RANGES;
  const D = CONTAINER_DEFAULTS;
  // The router validates PREFIX_ROUTER_SHUTDOWN_GRACE_MS itself; here only its container default and the deadline.
  const shutdownGraceMs = parseDecimalInteger(value(env, V.shutdownGraceMs) ?? '') ?? D.shutdownGraceMs;
  const engineStopTimeoutMs =
    integer(env, V.engineStopTimeoutMs, R.engineStopTimeoutMs, problems) ?? D.engineStopTimeoutMs;
  if (shutdownGraceMs + engineStopTimeoutMs >= SAGEMAKER_STOP_DEADLINE_MS) {
    found.warnings.push(
      `${V.shutdownGraceMs} (${shutdownGraceMs}) + ${V.engineStopTimeoutMs} (${engineStopTimeoutMs}) reach SageMaker's ${SAGEMAKER_STOP_DEADLINE_MS} ms stop deadline: on SageMaker, engines may be killed before they stop cleanly`,
    );
  }
  const engineStartAttempts =
    integer(env, V.engineStartAttempts, R.engineStartAttempts, problems) ?? D.engineStartAttempts;
  const restartBackoffMs = integer(env, V.restartBackoffMs, R.restartBackoffMs, problems) ?? D.restartBackoffMs;
  const restartBackoffMaxMs =
    integer(env, V.restartBackoffMaxMs, R.restartBackoffMaxMs, problems) ??
    Math.max(D.restartBackoffMaxMs, restartBackoffMs);
  if (restartBackoffMaxMs < restartBackoffMs) {
    problems.push(
      `${V.restartBackoffMaxMs} must be at least ${V.restartBackoffMs} (${restartBackoffMs}) (got ${restartBackoffMaxMs})`,
    );
  }
  const tokenizerWaitMs = integer(env, V.tokenizerWaitMs, R.tokenizerWaitMs, problems) ?? D.tokenizerWaitMs;
  return {
    shutdownGraceMs,
    engineStopTimeoutMs,
    restartBackoffMs,
    restartBackoffMaxMs,
    engineStartAttempts,
    tokenizerWaitMs,
  };
}

/** Ports each engine takes with KV events on: its HTTP port and its replay socket's (the PUB socket is ipc://). */
export const ENGINE_PORTS_WITH_KV_EVENTS = 2;

/** An on/off variable; `fallback` when unset. */
function onOff(env: Env, name: string, fallback: boolean, problems: string[]): boolean {
  const raw = value(env, name);
  if (raw === undefined) return fallback;
  if (raw === 'on' || raw === 'off') return raw === 'on';
  problems.push(`${name} must be on or off (got ${describeValue(raw)})`);
  return fallback;
}

/** The EMF metrics: on or off, how often, under which namespace and EndpointName dimension. */
function emfSettings(env: Env, found: Findings): ContainerSettings['emf'] {
  const { problems } = found;
  const V = CONTAINER_ENV;
  const enabled = onOff(env, V.emf, true, problems);
  const intervalMs =
    integer(env, V.emfIntervalMs, CONTAINER_RANGES.emfIntervalMs, problems) ?? CONTAINER_DEFAULTS.emfIntervalMs;
  const namespace = value(env, V.emfNamespace) ?? CONTAINER_DEFAULTS.emfNamespace;
  if (!/^[A-Za-z0-9 ._\-/#:]{1,255}$/.test(namespace) || namespace.startsWith('AWS/')) {
    problems.push(
      `${V.emfNamespace} must be 1-255 characters of letters, digits, spaces and . - _ / # :, not starting with AWS/ (got ${describeValue(namespace)})`,
    );
  }
  const endpointName = value(env, V.emfEndpointName) ?? CONTAINER_DEFAULTS.emfEndpointName;
  if (endpointName.length > 1024)
    problems.push(`${V.emfEndpointName} must be at most 1024 characters (got ${endpointName.length} characters)`);
  return { enabled, intervalMs, namespace, endpointName };
}

function value(env: Env, name: string): string | undefined {
  const raw = env[name];
  return raw === undefined || raw.trim() === '' ? undefined : raw.trim();
}

function integer(
  env: Env,
  name: string,
  range: { readonly min: number; readonly max: number },
  problems: string[],
): number | undefined {
  const raw = value(env, name);
  if (raw === undefined) return undefined;
  const n = parseDecimalInteger(raw);
  if (n === undefined || n < range.min || n > range.max) {
    problems.push(`${name} must be an integer between ${range.min} and ${range.max} (got ${describeValue(raw)})`);
    return undefined;
  }
  return n;
}
