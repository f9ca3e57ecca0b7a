import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino, { type Logger } from 'pino';
import { startRouterWithConfig, type RunningRouter } from '../server';
import { CONFIG_FILE_ENV } from '../config';
import { loadContainerConfig, type EngineKvEventStreams } from './container-config';
import { CONTAINER_ENV, ENGINE_PORTS_WITH_KV_EVENTS, type ContainerSettings } from './container-env';
import { readDlcFiles } from './engine-command';
import { findModelTokenizer } from './model-tokenizer';
import { EmfEmitter } from './emf-emitter';
import { mergeEngineMetrics, scrapeEngine, type EngineScrape } from './engine-metrics';
import { engineKvEventSockets, enginePlanWarnings, planEngines, type EngineSpec } from './engine-plan';
import { EngineProcess, type EngineExit } from './engine-process';
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
export async function startContainer(
  env: NodeJS.ProcessEnv,
  io: ContainerIo,
  /** Told the engine processes before any starts, so a caller can kill them on every way out. */
  onEngines: (engines: readonly EngineProcess[]) => void = () => undefined,
): Promise<RunningContainer> {
  const { settings, warnings, logLevel, routerConfigFor } = loadContainerConfig(env);
  const log: Logger = pino({
    level: logLevel,
    base: { service: 'prefix-router-container' },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
  for (const warning of warnings) log.warn(warning);
  const { specs, kvEvents, socketDir } = await planContainerEngines(settings, env, log);
  const routerConfig = routerConfigFor(
    specs.map((s) => s.url),
    kvEvents,
  );

  let router: RunningRouter | undefined;
  const failFast = engineFailFast(settings, log, (index) => router?.backends[index].health);
  const engines = specs.map(
    (spec) =>
      new EngineProcess(spec, {
        baseEnv: env,
        restartBackoffMs: settings.restartBackoffMs,
        restartBackoffMaxMs: settings.restartBackoffMaxMs,
        stopTimeoutMs: settings.engineStopTimeoutMs,
        log,
        stdout: io.stdout,
        stderr: io.stderr,
        onExit: (exit) => failFast.onEngineExit(spec.index, exit),
      }),
  );
  onEngines(engines);
  const killEngines = (): void => {
    for (const engine of engines) engine.killNow();
  };
  const scrapeEngines = (): Promise<EngineScrape[]> =>
    Promise.all(specs.map((s) => scrapeEngine(s.name, s.url, ENGINE_SCRAPE_TIMEOUT_MS)));

  // The router first: /ping answers 503 from the start, until an engine passes its health check.
  const routerStarted = await startRouterWithConfig(routerConfig, {
    extraMetrics: async () => mergeEngineMetrics(await scrapeEngines()),
    healthTimeoutsKeepHealthy: settings.mode === 'sagemaker',
  });
  router = routerStarted;
  try {
    for (const engine of engines) engine.start();
  } catch (err) {
    killEngines();
    await routerStarted.close();
    throw err;
  }
  const emitter = settings.emf.enabled
    ? new EmfEmitter({
        registry: routerStarted.metricsRegistry,
        engines: specs.map((s) => ({ name: s.name, instanceId: routerStarted.backends[s.index].id })),
        scrapeEngines,
        intervalMs: settings.emf.intervalMs,
        namespace: settings.emf.namespace,
        endpointName: settings.emf.endpointName,
        write: io.stdout,
      })
    : undefined;
  emitter?.start();

  let shuttingDown: Promise<void> | undefined;
  const shutdown = (): Promise<void> => {
    shuttingDown ??= (async () => {
      const started = Date.now();
      log.info({ graceMs: routerConfig.shutdownGraceMs }, 'container stopping: draining the router');
      await routerStarted.close();
      await emitter?.stop();
      log.info({ afterMs: Date.now() - started }, 'router drained; stopping engines');
      await Promise.all(engines.map((e) => e.stop()));
      if (socketDir !== undefined) await rm(socketDir, { recursive: true, force: true });
      log.info({ afterMs: Date.now() - started }, 'container stopped');
    })();
    return shuttingDown;
  };
  return { settings, router: routerStarted, engines, shutdown, killEngines, fatal: failFast.fatal };
}

/**
 * The engines to start: GPUs detected, ports given or picked (with KV events, the engines' HTTP ports then their
 * replay ports), each engine's share; logged as the container starts.
 */
async function planContainerEngines(
  settings: ContainerSettings,
  env: NodeJS.ProcessEnv,
  log: Logger,
): Promise<{ specs: EngineSpec[]; kvEvents: EngineKvEventStreams | undefined; socketDir: string | undefined }> {
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
    if (socketDir !== undefined) await rm(socketDir, { recursive: true, force: true });
    throw err;
  }
  const kvEvents = socketDir === undefined ? undefined : engineKvEventStreams(specs, env, settings.engineCommand);
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
        : { kvEvents: { socketDir, tokenizer: kvEvents.tokenizer ?? env[CONTAINER_ENV.tokenizer] } }),
    },
    'container starting',
  );
  return { specs, kvEvents, socketDir };
}

/** The router's side of the engines' KV events: each engine's sockets, and the tokenizer planEngines found. */
function engineKvEventStreams(
  specs: readonly EngineSpec[],
  env: NodeJS.ProcessEnv,
  engineCommand: string | undefined,
): EngineKvEventStreams {
  const tokenizer = findModelTokenizer(env, engineCommand, readDlcFiles());
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
    stop(); // before the start finished: done right after it
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  container = await startContainer(env, io, (started) => (engines = started));
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
