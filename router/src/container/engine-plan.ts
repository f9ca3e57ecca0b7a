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
}

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
): EngineSpec[] {
  const problems = enginePlanProblems(settings, gpus, env, files);
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
    const argv =
      settings.engineCommand !== undefined
        ? renderCommandTemplate(settings.engineCommand, {
            port: String(port),
            gpus: gpuIds.join(','),
            index: String(index),
            tp: String(tensorParallelSize),
          })
        : defaultEngineArgv(env, port, settings.mode === 'multi-engine' ? tensorParallelSize : undefined, files);
    return {
      index,
      name: engineName(index),
      port,
      gpuIds,
      tensorParallelSize,
      argv,
      env: gpuIds.length > 0 ? { CUDA_VISIBLE_DEVICES: gpuIds.join(',') } : {},
      url: `http://127.0.0.1:${port}`,
    };
  });
}
