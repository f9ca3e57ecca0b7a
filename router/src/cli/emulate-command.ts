import type { Command } from 'commander';
import pino from 'pino';
import { BUILTIN_PROFILE_NAMES, DEFAULT_PROFILE_NAME, type EngineProfile } from '../emulator/engine-profile';
import { startEmulatorFleet, type RunningEmulatorFleet } from '../emulator/emulator-server';
import { ConfigError } from '../common/config-error';
import { fleetFlag, integerFlag, numberFlag } from './flag-values';
import { engineArgOption, engineArgsFlag } from './engine-arg-flag';
import { fleetWithEngineArgs } from '../emulator/engine-args';
import { addModelProfileFlags, modelProfileFromFlags } from './model-profile-flags';
import { parseLoraModule, type LoraModule } from '../emulator/lora-modules';
import type { EmulatorKvEventsOptions } from '../emulator/emulator-server';
import { KV_WIRE_ENCODINGS, type KvWireEncoding } from '../kv-events/kv-event-codec';
import { DEFAULT_KV_BUFFER_STEPS } from '../kv-events/kv-event-publisher';
import { parseVllmKvEventsConfig, type VllmKvEventsConfig } from '../kv-events/vllm-kv-events-config';

/**
 * `prefix-router emulate`: N emulated vLLM instances on consecutive ports, each one engine model behind
 * vLLM's OpenAI-compatible API. Bad flags stop the start with a message naming the flag and its range.
 */
export function register(program: Command): void {
  const command = program
    .command('emulate')
    .description(
      'run emulated vLLM instances (OpenAI + SageMaker API, prefix cache, vLLM metrics) on consecutive ports',
    )
    .option(
      '--instances <fleet>',
      'instances, 1..256: N of --profile, or a mixed fleet as COUNT:PROFILE groups on consecutive ports, e.g. 5:p5-llama-3.1-70b,2:p4d-llama-3.1-70b',
      '1',
    )
    .option('--port <base>', 'port of the first instance; the others follow (0 = any free ports)', '8000')
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option(
      '--profile <name|file>',
      `calibration profile: ${BUILTIN_PROFILE_NAMES.join(', ')}, or a JSON file (default ${DEFAULT_PROFILE_NAME})`,
    )
    .option('--time-scale <x>', 'virtual seconds per wall second, (0, 1000000] (10 = ten times faster)', '1')
    .option(
      '--model <name>',
      "model name to serve (default: the profile's); with --instance-type, the model to derive the profile for",
    )
    .option(
      '--lora-modules <name=path...>',
      "LoRA adapters every instance serves beside the model (vLLM's --lora-modules): requests name one in `model`; each is cached apart",
    )
    .option('--max-loras <n>', "vLLM's --max-loras, reported in vllm:lora_requests_info, 1..1024", '1')
    .option(
      '--allow-runtime-lora-updating',
      "vLLM's VLLM_ALLOW_RUNTIME_LORA_UPDATING: serve POST /v1/load_lora_adapter and /v1/unload_lora_adapter",
    )
    .option('--server-dev-mode', "vLLM's VLLM_SERVER_DEV_MODE: serve POST /reset_prefix_cache")
    .option(
      '--kv-events <port>',
      "publish each instance's KV cache events in vLLM's ZeroMQ wire format on 127.0.0.1:PORT (instance i: PORT+i; 0 = free ports, logged)",
    )
    .option(
      '--kv-events-replay-port <port>',
      "with --kv-events: vLLM's replay (ROUTER) socket on 127.0.0.1:PORT (instance i: PORT+i; 0 = free ports)",
    )
    .option(
      '--kv-events-encoding <encoding>',
      'with --kv-events: map (current vLLM) or positional (vLLM to v0.23)',
      'map',
    )
    .option(
      '--kv-events-config <json>',
      "vLLM's own --kv-events-config (KVEventsConfig JSON: endpoint ipc://PATH, replay_endpoint, buffer_steps, topic), for one instance; instead of --kv-events",
    )
    .option('--kv-events-topic <topic>', "with --kv-events: vLLM's topic, e.g. llm-d's kv@POD@MODEL", '')
    .option(
      '--kv-events-buffer-steps <n>',
      "with --kv-events-replay-port: batches kept for replay (vLLM's buffer_steps), 1..1000000",
      String(DEFAULT_KV_BUFFER_STEPS),
    )
    .option('--seed <n>', 'seed for response ids', '0')
    .option('--log-level <level>', 'fatal, error, warn, info, debug', 'info')
    .addOption(engineArgOption())
    .action(async (flags: Record<string, string | string[] | boolean | undefined>) => {
      await emulate(flags);
    });
  addModelProfileFlags(command, false);
}

export interface EmulateFlags {
  readonly instances: number;
  /** One profile per instance, in port order (`--instances` groups; every instance --profile when none names one). */
  readonly fleet: readonly EngineProfile[];
  readonly port: number;
  readonly host: string;
  readonly profile: string;
  readonly timeScale: number;
  readonly model: string | undefined;
  readonly loraModules: readonly LoraModule[];
  readonly maxLoras: number | undefined;
  readonly allowRuntimeLoraUpdating: boolean;
  /** vLLM's VLLM_SERVER_DEV_MODE (POST /reset_prefix_cache). */
  readonly serverDevMode: boolean;
  readonly seed: number;
  readonly logLevel: string;
  /** With --kv-events: the fleet's KV event ports (instance i adds i) and wire settings. */
  readonly kvEvents: EmulatorKvEventsOptions | undefined;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug'];

/** A base port for `instances` consecutive ones (0 = each a free port). */
function basePortFlag(flag: string, raw: string, instances: number): number {
  const port = integerFlag(flag, raw, 0, 65535);
  if (port > 0 && port + instances - 1 > 65535) {
    throw new ConfigError([
      `--${flag} ${port} with --instances ${instances} needs ports up to ${port + instances - 1}; the base port must be <= ${65536 - instances}`,
    ]);
  }
  return port;
}

/**
 * --kv-events and its companions. Each value is checked whether or not --kv-events is given (a bad number is named
 * as such), then the companions alone are refused: they would silently do nothing.
 */
function kvEventsFlags(
  flags: Record<string, string | undefined>,
  instances: number,
): EmulatorKvEventsOptions | undefined {
  if (flags.kvEventsConfig !== undefined) return kvEventsConfigFlag(flags, instances);
  const port = flags.kvEvents === undefined ? undefined : basePortFlag('kv-events', flags.kvEvents, instances);
  const replayPort =
    flags.kvEventsReplayPort === undefined
      ? undefined
      : basePortFlag('kv-events-replay-port', flags.kvEventsReplayPort, instances);
  const bufferSteps = integerFlag(
    'kv-events-buffer-steps',
    flags.kvEventsBufferSteps ?? String(DEFAULT_KV_BUFFER_STEPS),
    1,
    1_000_000,
  );
  const encoding = flags.kvEventsEncoding ?? 'map';
  if (!(KV_WIRE_ENCODINGS as readonly string[]).includes(encoding))
    throw new ConfigError([`--kv-events-encoding must be one of ${KV_WIRE_ENCODINGS.join(', ')}, got "${encoding}"`]);
  if (port === undefined) {
    if (replayPort !== undefined)
      throw new ConfigError(['--kv-events-replay-port needs --kv-events (the port events are published on)']);
    return undefined;
  }
  return {
    port,
    ...(replayPort === undefined ? {} : { replayPort }),
    encoding: encoding as KvWireEncoding,
    topic: flags.kvEventsTopic ?? '',
    bufferSteps,
  };
}

/**
 * --kv-events-config: vLLM's JSON for one instance, instead of the port flags (its topic and buffer steps replace
 * --kv-events-topic and --kv-events-buffer-steps).
 */
function kvEventsConfigFlag(flags: Record<string, string | undefined>, instances: number): EmulatorKvEventsOptions {
  const clashing = [
    ['kvEvents', '--kv-events'],
    ['kvEventsReplayPort', '--kv-events-replay-port'],
  ].filter(([name]) => flags[name] !== undefined);
  if (clashing.length > 0)
    throw new ConfigError([
      `--kv-events-config replaces ${clashing.map(([, flag]) => flag).join(', ')}: give one or the other`,
    ]);
  if (instances !== 1)
    throw new ConfigError([
      `--kv-events-config names one engine's sockets: use it with --instances 1 (got ${instances})`,
    ]);
  let config: VllmKvEventsConfig;
  try {
    config = parseVllmKvEventsConfig('--kv-events-config', flags.kvEventsConfig ?? '');
  } catch (err) {
    throw new ConfigError([(err as Error).message]);
  }
  const encoding = flags.kvEventsEncoding ?? 'map';
  if (!(KV_WIRE_ENCODINGS as readonly string[]).includes(encoding))
    throw new ConfigError([`--kv-events-encoding must be one of ${KV_WIRE_ENCODINGS.join(', ')}, got "${encoding}"`]);
  return {
    port: 0,
    endpoint: config.endpoint,
    ...(config.replayEndpoint === undefined ? {} : { replayEndpoint: config.replayEndpoint }),
    encoding: encoding as KvWireEncoding,
    topic: config.topic ?? '',
    bufferSteps: config.bufferSteps ?? DEFAULT_KV_BUFFER_STEPS,
  };
}

/** Validates raw flag strings; every message names the flag and the allowed range. */
export function parseEmulateFlags(rawFlags: Record<string, string | string[] | boolean | undefined>): EmulateFlags {
  const { loraModules: rawLora, allowRuntimeLoraUpdating, serverDevMode, engineArg, ...rest } = rawFlags;
  const flags = rest as Record<string, string | undefined>;
  let loraModules: LoraModule[] = [];
  try {
    loraModules = (typeof rawLora === 'string' ? [rawLora] : Array.isArray(rawLora) ? rawLora : []).map(
      parseLoraModule,
    );
  } catch (err) {
    throw new ConfigError([(err as Error).message]);
  }
  const maxLoras = flags.maxLoras === undefined ? undefined : integerFlag('max-loras', flags.maxLoras, 1, 1024);
  const choice = modelProfileFromFlags(rawFlags, DEFAULT_PROFILE_NAME, true, 'emulate');
  const profile = choice.profile.name;
  const fleet = fleetWithEngineArgs(
    fleetFlag('instances', flags.instances ?? '1', { min: 1, max: 256 }, () => choice.profile),
    engineArgsFlag({ engineArg }),
  );
  const instances = fleet.length;
  const port = basePortFlag('port', flags.port ?? '8000', instances);
  const timeScale = numberFlag('time-scale', flags.timeScale ?? '1', 0, 1_000_000, true);
  const logLevel = flags.logLevel ?? 'info';
  if (!LOG_LEVELS.includes(logLevel))
    throw new ConfigError([`--log-level must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`]);
  const model = flags.model;
  if (model !== undefined && model.trim() === '') throw new ConfigError(['--model must not be empty']);
  const host = flags.host ?? '127.0.0.1';
  if (host.trim() === '') throw new ConfigError(['--host must not be empty']);
  return {
    instances,
    fleet,
    port,
    host,
    profile,
    timeScale,
    model,
    loraModules,
    maxLoras: loraModules.length > 0 || allowRuntimeLoraUpdating === true ? maxLoras : undefined,
    allowRuntimeLoraUpdating: allowRuntimeLoraUpdating === true,
    serverDevMode: serverDevMode === true,
    seed: integerFlag('seed', flags.seed ?? '0', 0, 2 ** 31 - 1),
    logLevel,
    kvEvents: kvEventsFlags(flags, instances),
  };
}

/** Starts the fleet and closes it on SIGTERM/SIGINT. */
export async function emulate(
  rawFlags: Record<string, string | string[] | boolean | undefined>,
): Promise<RunningEmulatorFleet> {
  const flags = parseEmulateFlags(rawFlags);
  const logger = pino({
    level: flags.logLevel,
    base: { service: 'prefix-router-emulator' },
    timestamp: pino.stdTimeFunctions.isoTime,
  });
  const fleet = await startEmulatorFleet(flags.instances, {
    profiles: flags.fleet,
    port: flags.port,
    host: flags.host,
    timeScale: flags.timeScale,
    modelName: flags.model,
    loraModules: flags.loraModules,
    ...(flags.maxLoras !== undefined ? { maxLoras: flags.maxLoras } : {}),
    allowRuntimeLoraUpdating: flags.allowRuntimeLoraUpdating,
    serverDevMode: flags.serverDevMode,
    seed: flags.seed,
    logger,
    ...(flags.kvEvents === undefined ? {} : { kvEvents: flags.kvEvents }),
  });
  fleet.instances.forEach((instance, index) => {
    logger.info(
      {
        instance: index,
        url: instance.url,
        model: instance.modelName,
        adapters: instance.loraModules.map((m) => m.name),
        profile: instance.profile.name,
        timeScale: instance.timeScale,
        ...(instance.kvEvents === undefined ? {} : { kvEvents: instance.kvEvents }),
      },
      'emulated vLLM instance listening',
    );
  });
  const stop = (signal: NodeJS.Signals): void => {
    logger.info({ signal }, 'stopping emulators');
    fleet.close().then(
      () => process.exit(0),
      (err: unknown) => {
        process.stderr.write(`prefix-router emulate: error while stopping: ${String(err)}\n`);
        process.exit(1);
      },
    );
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  return fleet;
}
