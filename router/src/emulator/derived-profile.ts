/**
 * An engine profile for any catalogued model on any catalogued instance type, derived by a roofline instead of
 * measured: prefill is compute-bound (dense layers and attention at a fraction of the datasheet peak, plus the
 * tensor-parallel all-reduce of every token's activations over the GPUs' link), decode is bandwidth-bound (the
 * weights once per step and every sequence's KV), and the KV cache is what memory × gpu-memory-utilization leaves
 * after the weights and a reserve. The tensor parallel size is the construct's: the largest size vLLM's head rule
 * allows on the instance (model-architecture.ts, the rule lib/private/parallelism.ts applies).
 *
 * The efficiency factors are fitted on the H200 measurements only (router/profiles/measurements/, one GPU, a model
 * with Llama 3.1 8B's shapes) and then checked, not fitted, against the shipped p5 and p4d Llama 3.1 70B profiles:
 * `derivedProfileChecks()` and `npm run bench:derived-profiles` give the errors; every derived profile states them.
 */
import decodeMeasurements from '../../profiles/measurements/h200-llama-3.1-8b-shape-decode-lean.json';
import prefillMeasurements from '../../profiles/measurements/h200-llama-3.1-8b-shape-prefill-lean.json';
import { ConfigError } from '../common/config-error';
import {
  builtinProfile,
  prefillTokensPerSecond,
  validateProfile,
  type EngineProfile,
  type StepTimeCoefficients,
} from './engine-profile';
import { GPU_SPECS, INSTANCE_GPUS, instanceGpus, type GpuSpec } from './gpu-catalog';
import {
  allowedTensorParallelSizes,
  catalogedArchitecture,
  CATALOGUED_MODEL_IDS,
  type ModelArchitecture,
} from './model-architecture';
import { fitPrefill } from './prefill-fit';

/** vLLM's default `--gpu-memory-utilization`, and the construct's. */
export const DEFAULT_GPU_MEMORY_UTILIZATION = 0.9;
/** Per-GPU memory kept for activations of a step, sampler logits, CUDA graphs and NCCL buffers: the shipped profiles' assumption (~20 GB over 8 GPUs on p5, ~3 GB on one H200). */
export const ACTIVATION_RESERVE_GIB = 2.5;
/**
 * Latency of one small all-reduce (a decode step's activations), in µs. NOT measured by this project: an assumption
 * of the order third-party write-ups give for NVLink (tens of µs; two all-reduces per layer take ~25 % of a TP8
 * decode step) and twice that over PCIe, where vLLM's custom all-reduce does not run beyond two GPUs.
 */
export const ALL_REDUCE_LATENCY_US = { NVLink: 20, PCIe: 40 } as const;
const BLOCK_TOKENS = 16;
/** KV cache below one step of vLLM's smaller default token budget (2,048) is refused as not fitting. */
const MIN_KV_TOKENS = 2048;
const GIB = 2 ** 30;

/** What the roofline needs of a model: FLOPs and bytes per token, weights. */
export interface ModelCosts {
  /** Dense FLOPs of one prefill token (every layer; the output projection runs once per sequence, not priced). */
  readonly flopsPerToken: number;
  /** FLOPs of one (query, key) pair of attention over all layers. */
  readonly attentionFlopsPerPair: number;
  /** Bytes a decode step reads once: every layer's weights (all experts: a busy batch touches them all) and the output projection. */
  readonly decodeWeightBytes: number;
  /** Bytes the weights take in GPU memory. */
  readonly weightBytes: number;
}

/** FLOPs and bytes of one model, from its architecture. */
export function modelCosts(model: ModelArchitecture): ModelCosts {
  const { hiddenSize: h, headDim, attentionHeads, kvHeads, layers, vocabSize } = model;
  const qkvo =
    h * headDim * (2 * attentionHeads + 2 * kvHeads) +
    (model.attentionBias ? headDim * (attentionHeads + 2 * kvHeads) : 0);
  const experts = model.experts;
  const mlpStored = experts
    ? experts.count * 3 * h * experts.intermediateSize + h * experts.count
    : 3 * h * model.intermediateSize;
  const mlpActive = experts ? experts.perToken * 3 * h * experts.intermediateSize + h * experts.count : mlpStored;
  const layerStored = qkvo + mlpStored + 2 * h;
  const embedding = vocabSize * h;
  return {
    flopsPerToken: 2 * layers * (qkvo + mlpActive),
    attentionFlopsPerPair: 4 * attentionHeads * headDim * layers,
    decodeWeightBytes: (layers * layerStored + embedding) * model.bytesPerWeight,
    weightBytes: (layers * layerStored + embedding * (model.tiedEmbeddings ? 1 : 2) + h) * model.bytesPerWeight,
  };
}

/** KV bytes one GPU keeps per token: its share of the KV heads (replicated when the ranks outnumber them). */
export function kvBytesPerTokenPerGpu(model: ModelArchitecture, tensorParallelSize: number): number {
  const headsPerGpu = Math.max(1, model.kvHeads / tensorParallelSize);
  return 2 * model.layers * headsPerGpu * model.headDim * model.bytesPerWeight;
}

/** The fractions of datasheet peak an engine reaches, and its fixed cost per step, as fitted on the H200. */
export interface Efficiency {
  /** Dense layers' FLOP/s ÷ the datasheet BF16 dense peak. */
  readonly dense: number;
  /** Attention's FLOP/s ÷ the same peak. */
  readonly attention: number;
  /** Bytes/s read ÷ the datasheet memory bandwidth (KV slope of the decode rows); also applied to links. */
  readonly bandwidth: number;
  /** A decode step's time beyond reading weights and KV (kernel launches inside a CUDA graph, sampling). */
  readonly stepOverheadMs: number;
}

const H200 = GPU_SPECS['H200 141GB'];

/** Least squares of `floor + slope·x` (absolute error): the decode rows are within a few ms of each other. */
function fitLine(points: readonly { x: number; y: number }[]): { floor: number; slope: number } {
  const n = points.length;
  const mx = points.reduce((s, p) => s + p.x, 0) / n;
  const my = points.reduce((s, p) => s + p.y, 0) / n;
  const sxy = points.reduce((s, p) => s + (p.x - mx) * (p.y - my), 0);
  const sxx = points.reduce((s, p) => s + (p.x - mx) ** 2, 0);
  return { floor: my - (sxy / sxx) * mx, slope: sxy / sxx };
}

/** The efficiency factors fitted on the H200 measurement files (router/profiles/measurements/). */
export function fitEfficiency(): Efficiency {
  const model = catalogedArchitecture('meta-llama/Llama-3.1-8B')!; // the measured shapes (measurements README)
  const costs = modelCosts(model);
  const peak = H200.bf16DenseTflops * 1e12;
  const uncached = Object.entries(prefillMeasurements.uncached_ms).map(([tokens, ms]) => ({
    cachedTokens: 0,
    newTokens: Number(tokens),
    measuredMs: ms,
  }));
  const prefill = fitPrefill(uncached);
  const decode = fitLine(decodeMeasurements.rows.map((r) => ({ x: r.batch * r.context, y: r.step_ms })));
  const bandwidth = kvBytesPerTokenPerGpu(model, 1) / (H200.memoryTBps * 1e12) / (decode.slope * 1e-3);
  const weightsMs = (costs.decodeWeightBytes / (H200.memoryTBps * 1e12 * bandwidth)) * 1e3;
  return {
    dense: costs.flopsPerToken / peak / (prefill.usPerScheduledToken * 1e-6),
    attention: costs.attentionFlopsPerPair / peak / (prefill.attentionNsPerTokenPair * 1e-9),
    bandwidth,
    stepOverheadMs: decode.floor - weightsMs,
  };
}

let fitted: Efficiency | undefined;
function efficiency(): Efficiency {
  fitted ??= fitEfficiency();
  return fitted;
}

/** A model on an instance type, as the construct would run it. */
export interface DeploymentShape {
  readonly model: ModelArchitecture;
  readonly instanceType: string;
  readonly gpuMemoryUtilization?: number;
}

/** A derived profile with the engine settings it assumed and what it leaves out. */
export interface DerivedProfile {
  readonly profile: EngineProfile;
  readonly instanceType: string;
  readonly gpu: GpuSpec;
  readonly gpuCount: number;
  readonly tensorParallelSize: number;
  readonly kvCapacityTokens: number;
  readonly weightGiBPerGpu: number;
}

/** Why a model cannot run on an instance type, or undefined when it can (then `derive` gives its profile). */
export function unfitReason(shape: DeploymentShape): string | undefined {
  const hardware = instanceGpus(shape.instanceType);
  if (hardware === undefined)
    return `${shape.instanceType} is not in the instance catalog (${Object.keys(INSTANCE_GPUS).join(', ')})`;
  const tp = constructTensorParallelSize(shape.model, hardware.gpuCount);
  const free = freeBytesPerGpu(shape, hardware.gpu, tp);
  const kvTokens = Math.floor(Math.max(0, free) / kvBytesPerTokenPerGpu(shape.model, tp));
  if (kvTokens >= MIN_KV_TOKENS) return undefined;
  if (free > 0)
    return `its weights leave room for ${kvTokens} tokens of KV cache at tensor parallel ${tp}, under the ${MIN_KV_TOKENS} vLLM needs for one step of the smallest default budget`;
  const weightsGiB = modelCosts(shape.model).weightBytes / GIB;
  const headsNote =
    tp < hardware.gpuCount
      ? `; its ${shape.model.attentionHeads} attention and ${shape.model.kvHeads} key/value heads allow tensor parallel ${allowedTensorParallelSizes(shape.model, hardware.gpuCount).join(', ')} of the ${hardware.gpuCount} GPUs, not all`
      : '';
  return (
    `its weights (${weightsGiB.toFixed(1)} GiB) do not fit: tensor parallel ${tp} gives ${(weightsGiB / tp).toFixed(1)} GiB per GPU, ` +
    `over ${(hardware.gpu.memoryGiB * (shape.gpuMemoryUtilization ?? DEFAULT_GPU_MEMORY_UTILIZATION)).toFixed(1)} GiB usable of a ${hardware.gpu.name} ` +
    `less ${ACTIVATION_RESERVE_GIB} GiB for activations${headsNote}`
  );
}

function constructTensorParallelSize(model: ModelArchitecture, gpus: number): number {
  return allowedTensorParallelSizes(model, gpus).pop() ?? 1;
}

function freeBytesPerGpu(shape: DeploymentShape, gpu: GpuSpec, tp: number): number {
  const utilization = shape.gpuMemoryUtilization ?? DEFAULT_GPU_MEMORY_UTILIZATION;
  return gpu.memoryGiB * GIB * utilization - modelCosts(shape.model).weightBytes / tp - ACTIVATION_RESERVE_GIB * GIB;
}

/** The catalogued instance types a model fits, fewest GPU memory first (the smallest first). */
export function typesThatFit(model: ModelArchitecture): string[] {
  const total = (type: string) => INSTANCE_GPUS[type].gpuCount * GPU_SPECS[INSTANCE_GPUS[type].gpu].memoryGiB;
  return Object.keys(INSTANCE_GPUS)
    .filter((type) => unfitReason({ model, instanceType: type }) === undefined)
    .sort((a, b) => total(a) - total(b));
}

/** The derived profile of a model on an instance type; a model that does not fit is a ConfigError naming why and the types that fit. */
export function deriveProfile(shape: DeploymentShape): DerivedProfile {
  const why = unfitReason(shape);
  if (why !== undefined) {
    const fits = typesThatFit(shape.model).slice(0, 3);
    throw new ConfigError([
      `${shape.model.id} cannot run on ${shape.instanceType}: ${why}; ` +
        (fits.length > 0 ? `the smallest types it fits: ${fits.join(', ')}` : 'no catalogued instance type fits it'),
    ]);
  }
  return buildDerived(shape, efficiency());
}

/** The profile with given efficiency factors (`deriveProfile` uses the fitted ones). */
export function buildDerived(shape: DeploymentShape, eff: Efficiency): DerivedProfile {
  const { model, instanceType } = shape;
  const { gpuCount, gpu } = instanceGpus(instanceType)!;
  const tp = constructTensorParallelSize(model, gpuCount);
  const kvCapacityTokens = Math.floor(freeBytesPerGpu(shape, gpu, tp) / kvBytesPerTokenPerGpu(model, tp));
  const bigGpu = gpu.memoryGiB >= 70; // vLLM's defaults for the OpenAI server differ below 70 GiB (vllm/engine/arg_utils.py)
  const kvCapacityBlocks = Math.floor(kvCapacityTokens / BLOCK_TOKENS);
  const name = `derived:${model.id}@${instanceType}`;
  const profile = validateProfile(
    {
      name,
      description: `${model.id} on one ${instanceType} (${gpuCount} × ${gpu.name}), tensor parallel ${tp}: DERIVED by a roofline from the model's config.json and the GPU datasheet, efficiency fitted on an H200 (docs/emulator.md, "Derived profiles")`,
      modelName: model.id,
      blockTokens: BLOCK_TOKENS,
      kvCapacityBlocks,
      maxNumBatchedTokens: bigGpu ? 8192 : 2048,
      maxNumSeqs: bigGpu ? 1024 : 256,
      maxModelLen: Math.min(model.maxPositionEmbeddings, kvCapacityBlocks * BLOCK_TOKENS),
      defaultMaxTokens: 256,
      requestOverheadMs: 20,
      stepTime: stepCoefficients(model, gpu, tp, eff),
      notes: derivationNotes(model, gpu, tp, eff),
    },
    `derived profile ${name}`,
  );
  const weightGiBPerGpu = modelCosts(model).weightBytes / tp / GIB;
  return { profile, instanceType, gpu, gpuCount, tensorParallelSize: tp, kvCapacityTokens, weightGiBPerGpu };
}

/** The step-time coefficients of a model sharded over `tp` GPUs of one kind: the roofline itself. */
export function stepCoefficients(
  model: ModelArchitecture,
  gpu: GpuSpec,
  tp: number,
  eff: Efficiency,
): StepTimeCoefficients {
  const costs = modelCosts(model);
  const fp8 = model.bytesPerWeight === 1 && gpu.fp8DenseTflops !== undefined;
  const peak = (fp8 ? gpu.fp8DenseTflops : gpu.bf16DenseTflops) * 1e12;
  const bandwidth = gpu.memoryTBps * 1e12 * eff.bandwidth;
  // Ring all-reduce of each token's activations (2 bytes × hidden) twice per layer: each GPU sends 2(tp − 1)/tp of it.
  const allReduceBytesPerToken = (2 * model.layers * model.hiddenSize * 2 * 2 * (tp - 1)) / tp;
  const allReduceUsPerToken = (allReduceBytesPerToken / (gpu.link.gbpsPerDirection * 1e9 * eff.bandwidth)) * 1e6;
  const allReduceLatencyMs = tp === 1 ? 0 : (2 * model.layers * ALL_REDUCE_LATENCY_US[gpu.link.kind]) / 1000;
  return {
    baseMs: round(eff.stepOverheadMs + allReduceLatencyMs),
    decodeFloorMs: round((costs.decodeWeightBytes / tp / bandwidth) * 1e3),
    decodeNsPerContextToken: round((kvBytesPerTokenPerGpu(model, tp) / bandwidth) * 1e9),
    usPerScheduledToken: round((costs.flopsPerToken / (tp * peak * eff.dense)) * 1e6 + allReduceUsPerToken),
    attentionNsPerTokenPair: round((costs.attentionFlopsPerPair / (tp * peak * eff.attention)) * 1e9),
  };
}

function round(value: number): number {
  return Number(value.toPrecision(4));
}

function derivationNotes(model: ModelArchitecture, gpu: GpuSpec, tp: number, eff: Efficiency): Record<string, string> {
  const pct = (v: number) => `${(v * 100).toFixed(1)} %`;
  return {
    model: `${model.source}${model.verified ? '' : ' (catalog figures not re-verified against the file)'}`,
    gpu: gpu.source,
    tensorParallelSize: `${tp}: the largest size the model's heads allow on the instance, as the construct chooses`,
    efficiency: `fitted on the H200 measurements: dense layers ${pct(eff.dense)} and attention ${pct(eff.attention)} of datasheet BF16 peak, ${pct(eff.bandwidth)} of memory bandwidth (also assumed for the ${gpu.link.kind} link), ${eff.stepOverheadMs.toFixed(2)} ms per step beyond memory traffic`,
    allReduce:
      tp === 1
        ? 'none: one GPU'
        : `two per layer; per token of prefill over the ${gpu.link.kind} link, ${ALL_REDUCE_LATENCY_US[gpu.link.kind]} µs each at decode (an assumption, not measured)`,
    kvCapacityBlocks: `${gpu.memoryGiB} GiB × gpu-memory-utilization − weights ÷ ${tp} − ${ACTIVATION_RESERVE_GIB} GiB reserve, ÷ KV bytes per token per GPU`,
    errorBand: derivedErrorBand(),
  };
}

/** The derived profile of a catalogued model id (or a parsed config.json) on an instance type. */
export function deriveFor(
  model: string | ModelArchitecture,
  instanceType: string,
  gpuMemoryUtilization?: number,
): DerivedProfile {
  const architecture = typeof model === 'string' ? catalogedArchitecture(model) : model;
  if (architecture === undefined)
    throw new ConfigError([
      `--model ${model as string} is not in the model catalog: pass its config.json with --model-config FILE, or one of ${CATALOGUED_MODEL_IDS.join(', ')} (an -Instruct fine-tune of one is found too)`,
    ]);
  return deriveProfile({ model: architecture, instanceType, gpuMemoryUtilization });
}

/**
 * How far derived profiles (derived-profile.ts) are from what they can be held against: the H200 measurements
 * their efficiency factors were fitted on, and the shipped Llama 3.1 70B profiles of p5 and p4d, which they were
 * not fitted on. Compared on prefill tokens/s (full 8,192-token steps of uncached prompt) and decode step time
 * (64 sequences of 8,500 tokens, the point the p5 profile's decode was calibrated at; for the H200, every measured
 * decode row). `npm run bench:derived-profiles` prints the table into docs/emulator.md.
 */
/** The decode point the shipped p5 profile was calibrated at: 64 sequences of 8,500 tokens of context. */
export const DECODE_CHECK = { batch: 64, contextTokens: 8500 } as const;
/** The target: derived within ±15 % of each reference. */
export const DERIVED_TARGET = 0.15;

export interface DerivedCheck {
  readonly reference: string;
  readonly metric: 'prefill tokens/s' | 'decode step ms';
  readonly referenceValue: number;
  readonly derivedValue: number;
  /** derived ÷ reference − 1. */
  readonly error: number;
}

function decodeStepMs(s: StepTimeCoefficients, batch: number, context: number): number {
  return s.baseMs + s.decodeFloorMs + s.decodeNsPerContextToken * 1e-6 * batch * context;
}

function check(reference: string, metric: DerivedCheck['metric'], referenceValue: number, derivedValue: number) {
  return { reference, metric, referenceValue, derivedValue, error: derivedValue / referenceValue - 1 };
}

/** Every check: H200 measurements (fitted on), shipped p5 and p4d 70B profiles (not fitted on). */
export function derivedProfileChecks(): DerivedCheck[] {
  const eff = efficiency();
  const llama8b = catalogedArchitecture('meta-llama/Llama-3.1-8B')!;
  const h200 = stepCoefficients(llama8b, GPU_SPECS['H200 141GB'], 1, eff);
  const tokens = 8192;
  const measuredMs = (prefillMeasurements.uncached_ms as Record<string, number>)[String(tokens)];
  const derivedMs =
    h200.baseMs +
    h200.usPerScheduledToken * 1e-3 * tokens +
    h200.attentionNsPerTokenPair * 1e-6 * tokens * (tokens / 2);
  const checks: DerivedCheck[] = [
    check('H200 measurements (fitted)', 'prefill tokens/s', (tokens / measuredMs) * 1e3, (tokens / derivedMs) * 1e3),
  ];
  const worstDecode = decodeMeasurements.rows
    .map((r) =>
      check('H200 measurements (fitted)', 'decode step ms', r.step_ms, decodeStepMs(h200, r.batch, r.context)),
    )
    .reduce((a, b) => (Math.abs(b.error) > Math.abs(a.error) ? b : a));
  checks.push(worstDecode);
  const llama70b = catalogedArchitecture('meta-llama/Llama-3.1-70B-Instruct')!;
  // How each shipped profile was made (its notes): a p4d check is against an estimate, not against hardware.
  for (const [profileName, instanceType, madeFrom] of [
    ['p5-llama-3.1-70b', 'ml.p5.48xlarge', 'calibrated on published figures'],
    ['p4d-llama-3.1-70b', 'ml.p4d.24xlarge', 'itself an estimate: p5 scaled by datasheet ratios, never measured'],
  ] as const) {
    const shipped = builtinProfile(profileName);
    const { gpu, gpuCount } = instanceGpus(instanceType)!;
    const derived = stepCoefficients(llama70b, gpu, allowedTensorParallelSizes(llama70b, gpuCount).pop()!, eff);
    const label = `${profileName} (shipped, ${madeFrom}; not fitted on)`;
    checks.push(
      check(
        label,
        'prefill tokens/s',
        prefillTokensPerSecond(shipped),
        prefillTokensPerSecond({ ...shipped, stepTime: derived }),
      ),
    );
    const { batch, contextTokens } = DECODE_CHECK;
    checks.push(
      check(
        label,
        'decode step ms',
        decodeStepMs(shipped.stepTime, batch, contextTokens),
        decodeStepMs(derived, batch, contextTokens),
      ),
    );
  }
  return checks;
}

/** The checks as a markdown table, with whether each meets the ±15 % target. */
export function renderDerivedChecks(checks: readonly DerivedCheck[]): string {
  const fmt = (v: number) => (v >= 100 ? Math.round(v).toLocaleString('en-US') : v.toFixed(2));
  const rows = checks.map(
    (c) =>
      `| ${c.reference} | ${c.metric} | ${fmt(c.referenceValue)} | ${fmt(c.derivedValue)} | ${c.error >= 0 ? '+' : '−'}${Math.abs(c.error * 100).toFixed(1)} % | ${Math.abs(c.error) <= DERIVED_TARGET ? 'within ±15 %' : '**outside ±15 %**'} |`,
  );
  return [
    '| reference | metric | reference | derived | error | target |',
    '| --- | --- | ---: | ---: | ---: | --- |',
    ...rows,
  ].join('\n');
}

let band: string | undefined;
/** Stated beside every derived profile: the errors of the checks (docs/emulator.md, "Derived profiles"). */
export function derivedErrorBand(): string {
  if (band !== undefined) return band;
  const text = (metric: DerivedCheck['metric']) =>
    derivedProfileChecks()
      .filter((c) => c.metric === metric)
      .map((c) => `${c.error >= 0 ? '+' : '−'}${Math.abs(c.error * 100).toFixed(1)} % vs ${c.reference.split(' ')[0]}`)
      .join(', ');
  band =
    `prefill tokens/s ${text('prefill tokens/s')}; decode step time ${text('decode step ms')} ` +
    '(target ±15 %; the H200 rows were fitted on, the p5/p4d profiles were not; other models and GPUs are unvalidated)';
  return band;
}
