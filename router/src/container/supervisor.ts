import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import { startRouterWithConfig, type RunningRouter } from '../server';
import { CONFIG_FILE_ENV, type RouterConfig } from '../config';
import { loadContainerConfig, type EngineKvEventStreams } from './container-config';
import {
  CONTAINER_ENV,
  ContainerConfigError,
  ENGINE_PORTS_WITH_KV_EVENTS,
  type ContainerSettings,
} from './container-env';
import { readDlcFiles } from './engine-command';
import { findModelTokenizer, hubTokenizerWhere, type HubTokenizer, type TokenizerLookup } from './model-tokenizer';
import { waitForDownloadedTokenizer } from './tokenizer-download';
import { EmfEmitter } from './emf-emitter';
import { mergeEngineMetrics, scrapeEngine, type EngineScrape } from './engine-metrics';
import { engineKvEventSockets, enginePlanWarnings, planEngines, type EngineSpec } from './engine-plan';
import { EngineProcess, type EngineExit, type EngineProcessOptions } from './engine-process';
import { freePorts } from './free-ports';
import { detectGpus } from './gpu-inventory';

/**
 * `prefix-router container`: the serving container's main process. It starts the engines (vLLM, or any
 * command) as child processes, the router in front of them on the public port, restarts engines that exit,
 * writes EMF metrics, and on SIGTERM drains the router, stops the engines and exits 0. It never leaves a child
 * behind: engines run in their own process groups, which are SIGKILLed on every way out.
 */
export interface ContainerIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

export interface RunningContainer {
  readonly settings: ContainerSettings;
  readonly router: RunningRouter;
  readonly engines: readonly EngineProcess[];
  /** Drain, stop the engines, flush metrics. Idempotent. */
  shutdown(): Promise<void>;
  /** SIGKILL every engine now (synchronous). */
  killEngines(): void;
  /**
   * Resolves (never rejects) with the reason the container must exit non-zero: an engine that never became healthy
   * exited PREFIX_ROUTER_ENGINE_START_ATTEMPTS times in a row. Stays pending otherwise.
   */
  readonly fatal: Promise<string>;
}

const ENGINE_SCRAPE_TIMEOUT_MS = 2_000;
/** How often the container looks for a tokenizer the engine downloads (a stat and a small read). */
const TOKENIZER_POLL_MS = 250;

/** startContainer's rejection when the container was told to stop (SIGTERM) before its router started. */
export class ContainerStartStopped extends Error {
  constructor() {
    super('stopped before the router started');
    this.name = 'ContainerStartStopped';
  }
}

export async function startContainer(
  env: NodeJS.ProcessEnv,
  io: ContainerIo,
  /** Told the engine processes before any starts, so a caller can kill them on every way out. */
  onEngines: (engines: readonly EngineProcess[]) => void = () => undefined,
  /** Aborted to stop a start that waits for the engine's tokenizer download (the engines stop, then it rejects). */
  stopStart?: AbortSignal,
): Promise<RunningContainer> {
  const { settings, warnings, logLevel, routerConfigFor } = loadContainerConfig(env);
  const log: Logger = pino({
    level: logLevel,
    base: { service: 'prefix-router-container' },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
  for (const warning of warnings) log.warn(warning);
  const { specs, kvEvents, tokenizerDownload, socketDir } = await planContainerEngines(settings, env, log);
  const routerConfigWith = (tokenizer: string | undefined): RouterConfig =>
    routerConfigFor(
      specs.map((s) => s.url),
      kvEvents === undefined ? undefined : { ...kvEvents, tokenizer: tokenizer ?? kvEvents.tokenizer },
    );
  // Every router setting is checked before an engine starts; a tokenizer still to download, once it is there.
  let routerConfig = routerConfigWith(tokenizerDownload === undefined ? undefined : 'emulator');

  let router: RunningRouter | undefined;
  // Before the router exists no engine has passed a health check: its exits count towards the fail fast.
  const failFast = engineFailFast(settings, log, (index) =>
    router === undefined ? 'pending' : router.backends[index].health,
  );
  const engines = specs.map(
    (spec) =>
      new EngineProcess(spec, {
        ...engineProcessOptions(settings, env, io, log),
        onExit: (exit) => failFast.onEngineExit(spec.index, exit),
      }),
  );
  onEngines(engines);
  const killEngines = (): void => {
    for (const engine of engines) engine.killNow();
  };
  const scrapeEngines = (): Promise<EngineScrape[]> =>
    Promise.all(specs.map((s) => scrapeEngine(s.name, s.url, ENGINE_SCRAPE_TIMEOUT_MS)));
  const startRouter = (config: RouterConfig): Promise<RunningRouter> =>
    startRouterWithConfig(config, {
      extraMetrics: async () => mergeEngineMetrics(await scrapeEngines()),
      healthTimeoutsKeepHealthy: settings.mode === 'sagemaker',
    });

  if (tokenizerDownload === undefined) {
    // The router first: /ping answers 503 from the start, until an engine passes its health check.
    router = await startRouter(routerConfig);
    try {
      for (const engine of engines) engine.start();
    } catch (err) {
      killEngines();
      await router.close();
      await removeSocketDir(socketDir);
      throw err;
    }
  } else {
    const tokenizer = await engineDownloadedTokenizer(engines, tokenizerDownload, {
      settings,
      log,
      giveUp: failFast.fatal,
      socketDir,
      ...(stopStart === undefined ? {} : { stopStart }),
    });
    try {
      routerConfig = routerConfigWith(tokenizer);
      router = await startRouter(routerConfig);
    } catch (err) {
      killEngines();
      await removeSocketDir(socketDir);
      throw err;
    }
  }
  const routerStarted = router;
  const emitter = settings.emf.enabled ? startEmf(settings, routerStarted, specs, scrapeEngines, io) : undefined;

  const shutdown = containerShutdown(log, routerConfig.shutdownGraceMs, routerStarted, emitter, engines, socketDir);
  return { settings, router: routerStarted, engines, shutdown, killEngines, fatal: failFast.fatal };
}

/** Removes the engines' KV-event sockets' directory, if there is one (every way out of a start, and shutdown). */
async function removeSocketDir(socketDir: string | undefined): Promise<void> {
  if (socketDir !== undefined) await rm(socketDir, { recursive: true, force: true });
}

/** Drain the router, flush metrics, stop the engines, remove the sockets' directory: once, however often called. */
function containerShutdown(
  log: Logger,
  graceMs: number,
  router: RunningRouter,
  emitter: EmfEmitter | undefined,
  engines: readonly EngineProcess[],
  socketDir: string | undefined,
): () => Promise<void> {
  let shuttingDown: Promise<void> | undefined;
  return () => {
    shuttingDown ??= (async () => {
      const started = Date.now();
      log.info({ graceMs }, 'container stopping: draining the router');
      await router.close();
      await emitter?.stop();
      log.info({ afterMs: Date.now() - started }, 'router drained; stopping engines');
      await Promise.all(engines.map((e) => e.stop()));
      await removeSocketDir(socketDir);
      log.info({ afterMs: Date.now() - started }, 'container stopped');
    })();
    return shuttingDown;
  };
}

/** What every engine process gets from the container's settings (its exit handler aside). */
function engineProcessOptions(
  settings: ContainerSettings,
  env: NodeJS.ProcessEnv,
  io: ContainerIo,
  log: Logger,
): Omit<EngineProcessOptions, 'onExit'> {
  return {
    baseEnv: env,
    restartBackoffMs: settings.restartBackoffMs,
    restartBackoffMaxMs: settings.restartBackoffMaxMs,
    stopTimeoutMs: settings.engineStopTimeoutMs,
    log,
    stdout: io.stdout,
    stderr: io.stderr,
  };
}

/** The EMF metrics of the router and its engines, written to stdout every interval. */
function startEmf(
  settings: ContainerSettings,
  router: RunningRouter,
  specs: readonly EngineSpec[],
  scrapeEngines: () => Promise<EngineScrape[]>,
  io: ContainerIo,
): EmfEmitter {
  const emitter = new EmfEmitter({
    registry: router.metricsRegistry,
    engines: specs.map((s) => ({ name: s.name, instanceId: router.backends[s.index].id })),
    scrapeEngines,
    intervalMs: settings.emf.intervalMs,
    namespace: settings.emf.namespace,
    endpointName: settings.emf.endpointName,
    write: io.stdout,
  });
  emitter.start();
  return emitter;
}

/**
 * The tokenizer the engines download (a Hugging Face model the hub cache did not hold at start): starts the engines,
 * then waits for the file (tokenizer-download.ts), so the router starts with the engines' tokenizer and never routes
 * by events it cannot read. Any other end stops the engines and rejects: the time is up (naming where it looked), an
 * engine gave up (fail fast), or the container was told to stop (ContainerStartStopped).
 */
async function engineDownloadedTokenizer(
  engines: readonly EngineProcess[],
  hub: HubTokenizer,
  context: {
    settings: ContainerSettings;
    log: Logger;
    giveUp: Promise<string>;
    socketDir: string | undefined;
    stopStart?: AbortSignal;
  },
): Promise<string> {
  const { settings, log, socketDir } = context;
  try {
    for (const engine of engines) engine.start();
  } catch (err) {
    for (const engine of engines) engine.killNow();
    await removeSocketDir(socketDir);
    throw err;
  }
  log.info(
    { tokenizer: hubTokenizerWhere(hub), waitMs: settings.tokenizerWaitMs },
    "waiting for the engine to download the model's tokenizer before the router starts",
  );
  const outcome = await waitForDownloadedTokenizer({
    hub,
    timeoutMs: settings.tokenizerWaitMs,
    pollMs: TOKENIZER_POLL_MS,
    giveUp: context.giveUp,
    ...(context.stopStart === undefined ? {} : { stop: context.stopStart }),
  });
  if (outcome.kind === 'found') {
    log.info({ tokenizer: outcome.path, afterMs: outcome.afterMs }, 'the engine downloaded the tokenizer');
    return outcome.path;
  }
  if (outcome.kind === 'stopped') await Promise.all(engines.map((e) => e.stop()));
  else for (const engine of engines) engine.killNow();
  await removeSocketDir(socketDir);
  if (outcome.kind === 'stopped') throw new ContainerStartStopped();
  if (outcome.kind === 'gave-up') throw new Error(outcome.reason);
  log.fatal({ tokenizer: hubTokenizerWhere(hub), waitMs: settings.tokenizerWaitMs }, outcome.problem);
  throw new ContainerConfigError([outcome.problem]);
}

/**
 * The engines to start: GPUs detected, ports given or picked (with KV events, the engines' HTTP ports then their
 * replay ports), each engine's share; logged as the container starts.
 */
async function planContainerEngines(
  settings: ContainerSettings,
  env: NodeJS.ProcessEnv,
  log: Logger,
): Promise<{
  specs: EngineSpec[];
  kvEvents: EngineKvEventStreams | undefined;
  /** The tokenizer the engines are to download, when the router must wait for it. */
  tokenizerDownload: HubTokenizer | undefined;
  socketDir: string | undefined;
}> {
  const gpus = await detectGpus(settings.gpus, env);
  const count = settings.engines * (settings.engineKvEvents ? ENGINE_PORTS_WITH_KV_EVENTS : 1);
  const allPorts =
    settings.engineBasePort === 0
      ? await freePorts(count)
      : Array.from({ length: count }, (_, i) => settings.engineBasePort + i);
  const ports = allPorts.slice(0, settings.engines);
  // The PUB sockets' directory: only this container's user may open them (events carry the prompts' token ids).
  const socketDir = settings.engineKvEvents ? await mkdtemp(join(tmpdir(), 'prefix-router-kv-')) : undefined;
  const sockets =
    socketDir === undefined ? [] : engineKvEventSockets(socketDir, allPorts.slice(settings.engines, count));
  let specs: EngineSpec[];
  try {
    specs = planEngines(settings, gpus, ports, env, readDlcFiles(), sockets);
  } catch (err) {
    await removeSocketDir(socketDir);
    throw err;
  }
  const tokenizer =
    socketDir === undefined
      ? undefined
      : findModelTokenizer(env, settings.engineCommand, readDlcFiles(), settings.tokenizerWaitMs);
  const kvEvents = tokenizer === undefined ? undefined : engineKvEventStreams(specs, tokenizer);
  const tokenizerDownload = tokenizer?.kind === 'download' ? tokenizer.hub : undefined;
  for (const warning of enginePlanWarnings(settings, gpus, env)) log.warn(warning);
  log.info(
    {
      mode: settings.mode,
      engines: specs.map((s) => ({
        engine: s.name,
        port: s.port,
        gpus: s.gpuIds.join(','),
        tensorParallelSize: s.tensorParallelSize,
      })),
      gpuSource: gpus.source,
      configFile: env[CONFIG_FILE_ENV],
      emf: settings.emf.enabled,
      ...(kvEvents === undefined
        ? {}
        : {
            kvEvents: {
              socketDir,
              tokenizer:
                tokenizerDownload === undefined
                  ? (kvEvents.tokenizer ?? env[CONTAINER_ENV.tokenizer])
                  : `downloaded by the engine: ${hubTokenizerWhere(tokenizerDownload)}`,
            },
          }),
    },
    'container starting',
  );
  return { specs, kvEvents, tokenizerDownload, socketDir };
}

/** The router's side of the engines' KV events: each engine's sockets, and the tokenizer found at start. */
function engineKvEventStreams(specs: readonly EngineSpec[], tokenizer: TokenizerLookup): EngineKvEventStreams {
  return {
    streams: specs.map((s) => ({
      url: s.url,
      endpoint: s.kvEvents!.endpoint,
      replayEndpoint: s.kvEvents!.replayEndpoint,
    })),
    tokenizer: tokenizer.kind === 'found' ? tokenizer.path : undefined,
  };
}

/**
 * Fail fast: counts the exits of each engine while it has never passed a health check (its backend is still
 * 'pending'); at PREFIX_ROUTER_ENGINE_START_ATTEMPTS `fatal` resolves with the engine's last lines.
 */
function engineFailFast(
  settings: ContainerSettings,
  log: Logger,
  healthOf: (index: number) => string | undefined,
): { readonly fatal: Promise<string>; onEngineExit(index: number, exit: EngineExit): void } {
  let declareFatal!: (reason: string) => void;
  const fatal = new Promise<string>((resolve) => (declareFatal = resolve));
  const exitsBeforeHealthy = new Map<number, number>();
  const onEngineExit = (index: number, exit: EngineExit): void => {
    if (healthOf(index) !== 'pending') return;
    const exits = (exitsBeforeHealthy.get(index) ?? 0) + 1;
    exitsBeforeHealthy.set(index, exits);
    if (exits < settings.engineStartAttempts) return;
    const how = exit.error ?? (exit.signal !== null ? `signal ${exit.signal}` : `code ${exit.code}`);
    log.fatal(
      { engine: exit.engine, attempts: exits, lastExit: how, lastLines: exit.lastLines },
      'engine exited before it ever became healthy; the container exits',
    );
    declareFatal(
      `${exit.engine} exited ${exits} times (last: ${how}) without ever passing its health check ` +
        `(${CONTAINER_ENV.engineStartAttempts}=${settings.engineStartAttempts}); its last output:\n` +
        exit.lastLines.map((l) => `  ${l}`).join('\n'),
    );
  };
  return { fatal, onEngineExit };
}

/**
 * The CLI's process wiring: SIGTERM/SIGINT drain and exit 0 (a signal during start-up stops as soon as the start
 * is done); a second signal SIGKILLs the engines and exits 130; any crash SIGKILLs them before exiting 1.
 */
export async function runContainerProcess(env: NodeJS.ProcessEnv): Promise<RunningContainer> {
  const io: ContainerIo = { stdout: (t) => process.stdout.write(t), stderr: (t) => process.stderr.write(t) };
  let container: RunningContainer | undefined;
  let engines: readonly EngineProcess[] = [];
  const killEngines = (): void => {
    for (const engine of engines) engine.killNow();
  };
  process.on('exit', killEngines);
  const crash = (err: unknown): void => {
    process.stderr.write(
      `prefix-router container: fatal error: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    killEngines();
    process.exit(1);
  };
  process.on('uncaughtException', crash);
  process.on('unhandledRejection', crash);
  let signals = 0;
  const stopStart = new AbortController();
  const stop = (): void => {
    container?.shutdown().then(
      () => process.exit(0),
      (err: unknown) => crash(err),
    );
  };
  const onSignal = (signal: NodeJS.Signals): void => {
    signals++;
    if (signals > 1) {
      process.stderr.write(`prefix-router container: second ${signal}, killing engines and exiting\n`);
      killEngines();
      process.exit(130);
    }
    // Before the start finished: a wait for the engine's tokenizer ends at once, any other start is stopped right after.
    if (container === undefined) stopStart.abort();
    stop();
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  try {
    container = await startContainer(env, io, (started) => (engines = started), stopStart.signal);
  } catch (err) {
    if (!(err instanceof ContainerStartStopped)) throw err;
    process.stderr.write(`prefix-router container: ${err.message}: engines stopped, exiting\n`);
    process.exit(0);
  }
  if (signals > 0) stop();
  const running = container;
  void running.fatal.then((reason) => {
    process.stderr.write(`prefix-router container: ${reason}\n`);
    running.shutdown().then(
      () => process.exit(1),
      (err: unknown) => crash(err),
    );
  });
  return container;
}
