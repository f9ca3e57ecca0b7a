import { CONTAINER_ENV, ContainerConfigError, type ContainerSettings } from './container-env';
import {
  defaultEngineArgv,
  engineCommandProblems,
  readDlcFiles,
  renderCommandTemplate,
  resolveModel,
  SAGEMAKER_MODEL_DIR,
  type DlcFiles,
} from './engine-command';
import type { GpuInventory } from './gpu-inventory';
import { findModelTokenizer } from './model-tokenizer';
import { tcpEndpoint } from '../kv-events/zmq-endpoint';
import { vllmKvEventsConfigJson } from '../kv-events/vllm-kv-events-config';
import { join } from 'node:path';

/**
 * The fleet layout: which engine listens where, on which GPUs, started by which argv. Engine i gets the i-th
 * disjoint block of GPUs (tensor-parallel size = GPUs ÷ engines) and port base + i.
 */
export interface EngineSpec {
  readonly index: number;
  /** `engine-0`, `engine-1`, ...: the log prefix and the metrics dimension. */
  readonly name: string;
  readonly port: number;
  /** Device ids given in CUDA_VISIBLE_DEVICES; empty = the variable is left as it is. */
  readonly gpuIds: readonly string[];
  readonly tensorParallelSize: number;
  readonly argv: readonly string[];
  /** Variables added to the container's environment for this engine. */
  readonly env: Readonly<Record<string, string>>;
  /** Base URL the router uses. */
  readonly url: string;
  /** Where the engine publishes its KV cache events, with PREFIX_ROUTER_ENGINE_KV_EVENTS=on. */
  readonly kvEvents?: EngineKvEventSockets;
}

/**
 * An engine's KV event sockets: the PUB socket on `ipc://` in the container's private directory (vLLM binds only a
 * wildcard or ipc:// endpoint and connects to any other, vllm/distributed/kv_events.py `_socket_setup`; a wildcard
 * would publish prompts on every interface), the replay socket on a loopback port (vLLM always binds it).
 */
export interface EngineKvEventSockets {
  readonly endpoint: string;
  readonly replayEndpoint: string;
}

/** Engine i's sockets: `ipc://DIR/engine-i.kv` and tcp://127.0.0.1:replayPorts[i]. */
export function engineKvEventSockets(socketDir: string, replayPorts: readonly number[]): EngineKvEventSockets[] {
  return replayPorts.map((port, index) => ({
    endpoint: `ipc://${join(socketDir, `${engineName(index)}.kv`)}`,
    replayEndpoint: tcpEndpoint('127.0.0.1', port),
  }));
}

const KV_EVENTS_PLACEHOLDER = '{kv_events_config}';

export function engineName(index: number): string {
  return `engine-${index}`;
}

/** Problems with the command or GPUs that only show once the GPUs are known; empty when the plan can be made. */
export function enginePlanProblems(
  settings: ContainerSettings,
  gpus: GpuInventory,
  env: Readonly<Record<string, string | undefined>>,
  files: DlcFiles = readDlcFiles(),
): string[] {
  const problems: string[] = [];
  const count = gpus.ids.length;
  problems.push(...kvEventsPlanProblems(settings, env, files));
  if (settings.engineCommand !== undefined) {
    problems.push(...engineCommandProblems(settings.engineCommand, CONTAINER_ENV.engineCommand));
  } else {
    if (count === 0) {
      problems.push(
        `the default engine (vLLM) needs GPUs, but none were found (${gpus.note ?? `source ${gpus.source}`}); set ${CONTAINER_ENV.gpus}, or ${CONTAINER_ENV.engineCommand} for an engine without GPUs (got 0 GPUs)`,
      );
    }
    if (resolveModel(env, files) === undefined) {
      problems.push(
        `the default engine (vLLM) needs a model: set SM_VLLM_MODEL or HF_MODEL_ID, or put the model in ${SAGEMAKER_MODEL_DIR} (got none of them)`,
      );
    }
  }
  if (settings.mode === 'multi-engine' && count > 0) {
    if (count % settings.engines !== 0 || count < settings.engines) {
      problems.push(
        `${CONTAINER_ENV.engines} must divide the ${count} GPUs found (${gpus.source}) so every engine gets the same number (got ${settings.engines})`,
      );
    }
  }
  return problems;
}

/** What stops the engines' KV events: the command's placeholder, a KV events config of the user's, no tokenizer. */
function kvEventsPlanProblems(
  settings: ContainerSettings,
  env: Readonly<Record<string, string | undefined>>,
  files: DlcFiles,
): string[] {
  const V = CONTAINER_ENV;
  const template = settings.engineCommand;
  const usesPlaceholder = template?.includes(KV_EVENTS_PLACEHOLDER) === true;
  if (!settings.engineKvEvents)
    return usesPlaceholder
      ? [`${V.engineCommand} uses ${KV_EVENTS_PLACEHOLDER}, which is given only with ${V.engineKvEvents}=on (got off)`]
      : [];
  const problems: string[] = [];
  if (template !== undefined && !usesPlaceholder)
    problems.push(
      `${V.engineCommand} must pass ${KV_EVENTS_PLACEHOLDER} to the engine (its --kv-events-config JSON) with ${V.engineKvEvents}=on (got ${JSON.stringify(template)})`,
    );
  if (template === undefined && (env.SM_VLLM_KV_EVENTS_CONFIG ?? '').trim() !== '')
    problems.push(
      `SM_VLLM_KV_EVENTS_CONFIG must not be set with ${V.engineKvEvents}=on: the container gives each engine its own sockets (got ${JSON.stringify(env.SM_VLLM_KV_EVENTS_CONFIG)})`,
    );
  const tokenizer = findModelTokenizer(env, template, files, settings.tokenizerWaitMs);
  if (tokenizer.kind === 'missing') problems.push(tokenizer.problem);
  return problems;
}

/**
 * Legal but doubtful: in multi-engine mode each engine's tensor-parallel size is its share of the GPUs, so an
 * SM_VLLM_TENSOR_PARALLEL_SIZE other than that share is replaced, and said so. The construct renders the share
 * (lib/private/parallelism.ts), so its templates say what runs.
 */
export function enginePlanWarnings(
  settings: ContainerSettings,
  gpus: GpuInventory,
  env: Readonly<Record<string, string | undefined>>,
): string[] {
  const raw = (env.SM_VLLM_TENSOR_PARALLEL_SIZE ?? '').trim();
  if (settings.mode !== 'multi-engine' || raw === '' || gpus.ids.length === 0) return [];
  const share = gpus.ids.length / settings.engines;
  if (Number(raw) === share) return [];
  return [
    `SM_VLLM_TENSOR_PARALLEL_SIZE=${raw} is replaced in multi-engine mode: each of the ${settings.engines} engines gets ${share} of the ${gpus.ids.length} GPUs and --tensor-parallel-size ${share}`,
  ];
}

/** Builds every engine's spec; throws ContainerConfigError when enginePlanProblems finds any. */
export function planEngines(
  settings: ContainerSettings,
  gpus: GpuInventory,
  ports: readonly number[],
  env: Readonly<Record<string, string | undefined>>,
  files: DlcFiles = readDlcFiles(),
  /** Engine i's KV event sockets, with PREFIX_ROUTER_ENGINE_KV_EVENTS=on (one per port). */
  kvEventSockets: readonly EngineKvEventSockets[] = [],
): EngineSpec[] {
  const problems = enginePlanProblems(settings, gpus, env, files);
  if (settings.engineKvEvents && kvEventSockets.length !== ports.length)
    problems.push(`KV events need sockets for each of the ${ports.length} engines (got ${kvEventSockets.length})`);
  if (problems.length > 0) throw new ContainerConfigError(problems);
  const perEngine = settings.mode === 'multi-engine' ? gpus.ids.length / settings.engines : gpus.ids.length;
  const configuredTp = Number((env.SM_VLLM_TENSOR_PARALLEL_SIZE ?? '').trim());
  return ports.map((port, index): EngineSpec => {
    const gpuIds = gpus.ids.slice(index * perEngine, (index + 1) * perEngine);
    // sagemaker mode keeps the construct's SM_VLLM_TENSOR_PARALLEL_SIZE; multi-engine splits the GPUs.
    const tensorParallelSize =
      settings.mode === 'sagemaker' && Number.isInteger(configuredTp) && configuredTp > 0
        ? configuredTp
        : Math.max(1, gpuIds.length);
    const kvEvents = settings.engineKvEvents ? kvEventSockets[index] : undefined;
    const kvEventsConfig = kvEvents === undefined ? undefined : vllmKvEventsConfigJson(kvEvents);
    const argv =
      settings.engineCommand !== undefined
        ? renderCommandTemplate(settings.engineCommand, {
            port: String(port),
            gpus: gpuIds.join(','),
            index: String(index),
            tp: String(tensorParallelSize),
            kv_events_config: kvEventsConfig ?? '',
          })
        : defaultEngineArgv(
            env,
            port,
            settings.mode === 'multi-engine' ? tensorParallelSize : undefined,
            files,
            kvEventsConfig,
          );
    return {
      index,
      name: engineName(index),
      port,
      gpuIds,
      tensorParallelSize,
      argv,
      env: gpuIds.length > 0 ? { CUDA_VISIBLE_DEVICES: gpuIds.join(',') } : {},
      url: `http://127.0.0.1:${port}`,
      ...(kvEvents === undefined ? {} : { kvEvents }),
    };
  });
}
