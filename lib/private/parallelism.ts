import { InstanceType } from '../instance-type';
import { VllmEngineOptions } from '../vllm-engine-options';
import { extraParallelism } from './engine-environment';
import { closestCatalogType } from './closest-instance-type';
import { allowedTensorParallelSizes, headsAllowTensorParallel, ModelHeads } from './model-catalog';
import { isKnownInteger, ProblemCollector, show } from './validation';

/** What decides the tensor parallel size one engine runs with. */
export interface ParallelismInput {
  readonly instanceType: InstanceType;
  readonly engine: VllmEngineOptions;
  /** Engines per instance when the container splits the GPUs (multi-engine sidecar); undefined: one engine. */
  readonly enginesPerInstance?: number;
  readonly modelId?: string;
  readonly heads?: ModelHeads;
}

/** GPUs one engine gets: the instance's, or its equal share among the container's engines. */
function gpusPerEngine(gpus: number, enginesPerInstance: number | undefined): number | undefined {
  if (enginesPerInstance === undefined) return gpus;
  return gpus % enginesPerInstance === 0 ? gpus / enginesPerInstance : undefined;
}

/**
 * The tensor parallel size the engine runs with when `engine.tensorParallelSize` is left out: in multi-engine mode
 * the share the container gives each engine (it sets that itself, so the template says what runs); otherwise the
 * instance's GPU count or, for a catalogued model, the largest divisor of it that vLLM can shard the model over
 * (Qwen2.5-7B's 28 heads on 8 GPUs: 4), so the default starts instead of failing after the instances are paid for.
 */
export function defaultTensorParallelSize(input: ParallelismInput): number {
  const gpus = input.instanceType.gpuCount;
  if (gpus === undefined || !isKnownInteger(gpus) || gpus < 1) return 1;
  const share = gpusPerEngine(gpus, input.enginesPerInstance);
  if (share === undefined) return 1;
  if (input.enginesPerInstance !== undefined || input.heads === undefined) return share;
  return allowedTensorParallelSizes(input.heads, share).pop() ?? 1;
}

/**
 * Problems vLLM or the container would stop on once the instances run: a tensor parallel size other than the share
 * in multi-engine mode, one the model's attention or key/value heads do not divide (catalogued models only).
 */
export function validateModelParallelism(input: ParallelismInput, problems: ProblemCollector): void {
  const { instanceType, engine, enginesPerInstance, heads, modelId } = input;
  const gpus = instanceType.gpuCount;
  if (gpus === undefined || !isKnownInteger(gpus) || gpus < 1) return;
  const tp = engine.tensorParallelSize;
  if (enginesPerInstance !== undefined) {
    const share = gpusPerEngine(gpus, enginesPerInstance);
    if (share === undefined) return; // image.engines must divide the GPUs: reported by the image
    if (tp !== undefined && isKnownInteger(tp) && tp !== share) {
      problems.add(
        `engine.tensorParallelSize must be ${share} in multi-engine mode, or left out: each of the ${enginesPerInstance} engines runs on ` +
          `${share} of the ${gpus} GPUs of ${instanceType.name}, and the container gives it --tensor-parallel-size ${share} (got ${tp})`,
      );
    }
    if (heads !== undefined && !headsAllowTensorParallel(heads, share)) {
      const allowed = [];
      for (let n = 1; n <= gpus; n++) if (gpus % n === 0 && headsAllowTensorParallel(heads, gpus / n)) allowed.push(n);
      problems.add(
        `image.engines must leave each engine a tensor parallel size that ${headsText(heads, modelId)} divide: ${enginesPerInstance} ` +
          `engines on the ${gpus} GPUs of ${instanceType.name} give each ${share}, and vLLM exits at start; allowed: ${allowed.join(', ')} (got ${enginesPerInstance})`,
      );
    }
    return;
  }
  if (heads === undefined || tp === undefined || !isKnownInteger(tp) || tp < 1 || gpus % tp !== 0) return;
  if (!headsAllowTensorParallel(heads, tp)) {
    problems.add(
      `engine.tensorParallelSize must be a size ${headsText(heads, modelId)} divide, or vLLM exits at start; allowed on ` +
        `${instanceType.name}: ${allowedTensorParallelSizes(heads, gpus).join(', ')} (got ${tp})`,
    );
  }
}

/** GPUs the engines use on one instance: tensor × data × pipeline parallel, times the engines. */
export function gpusUsed(
  tensorParallelSize: number,
  engine: VllmEngineOptions,
  enginesPerInstance: number | undefined,
): number {
  return tensorParallelSize * extraParallelism(engine) * (enginesPerInstance ?? 1);
}

function headsText(heads: ModelHeads, modelId: string | undefined): string {
  return `the ${heads.attentionHeads} attention heads and ${heads.kvHeads} key/value heads of ${modelId ?? 'the model'}`;
}

/**
 * The engine's tensor × data × pipeline parallel size must fit the GPUs it is given: `gpus`, described by
 * `gpusText` (an instance's GPUs, or the accelerators a component copy reserves).
 */
export function validateParallelismFits(
  tensorParallelSize: number,
  engine: VllmEngineOptions,
  gpus: number,
  gpusText: string,
  problems: ProblemCollector,
): void {
  const used = tensorParallelSize * extraParallelism(engine);
  if (used > gpus) {
    problems.add(`engine tensor × data × pipeline parallel size must be at most ${gpusText} (got ${used})`);
  }
}

/**
 * The instance type's GPU count against the engine's tensor parallel size: a count that is no positive integer,
 * a size that must be given because the count is unknown, one that does not divide the count, or a total
 * parallelism above it.
 */
export function validateInstanceParallelism(
  instanceType: InstanceType,
  engine: VllmEngineOptions,
  problems: ProblemCollector,
): void {
  const gpus = instanceType.gpuCount;
  if (gpus !== undefined && !(isKnownInteger(gpus) && gpus >= 1)) {
    problems.add(`instanceType gpuCount of ${instanceType.name} must be an integer of at least 1 (got ${show(gpus)})`);
    return;
  }
  const tp = engine.tensorParallelSize;
  if (tp === undefined) {
    if (gpus === undefined && instanceType.isUnresolved) {
      problems.add(
        'engine.tensorParallelSize is required because the instance type is a deploy-time value, so its GPU count is unknown ' +
          '(got no tensorParallelSize)',
      );
    } else if (gpus === undefined) {
      const typo = closestCatalogType(instanceType.name);
      problems.add(
        `${typo === undefined ? '' : `instanceType ${typo} Otherwise, `}` +
          `engine.tensorParallelSize is required because the GPU count of ${instanceType.name} is unknown; ` +
          `set it, or use InstanceType.of('${instanceType.name}', { gpuCount }) (got no tensorParallelSize)`,
      );
    }
    return;
  }
  if (gpus === undefined || !isKnownInteger(tp) || tp < 1) return;
  if (gpus % tp !== 0) {
    problems.add(`engine.tensorParallelSize must divide the ${gpus} GPUs of ${instanceType.name} (got ${tp})`);
    return;
  }
  validateParallelismFits(tp, engine, gpus, `the ${gpus} GPUs of ${instanceType.name}`, problems);
}
