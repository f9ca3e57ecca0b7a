import { Token } from 'aws-cdk-lib';
import { MODEL_MOUNT_PATH, ModelSourceConfig } from '../model-source';
import { EngineEnvConvention, VllmEngineOptions } from '../vllm-engine-options';
import { loadEngineArgs } from './router-settings';
import { ProblemCollector, show } from './validation';

/** Flags that have a first-class option and so may not be set through `extraArgs`. */
const RESERVED_FLAGS: Readonly<Record<string, string>> = {
  model: 'model',
  port: 'the container contract (port 8080)',
  host: 'the container contract',
  revision: 'model revision option',
  'tensor-parallel-size': 'engine.tensorParallelSize',
  'max-model-len': 'engine.maxModelLen',
  'gpu-memory-utilization': 'engine.gpuMemoryUtilization',
  'max-num-seqs': 'engine.maxNumSeqs',
  'enable-prefix-caching': 'engine.enablePrefixCaching',
  'no-enable-prefix-caching': 'engine.enablePrefixCaching',
  'served-model-name': 'engine.servedModelName',
};

/** vLLM flag names: lower-case words joined by single dashes. */
const FLAG_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;

/** SageMaker limits container environment keys and values to 1024 characters and the map to 100 entries. */
export const MAX_ENV_VALUE_LENGTH = 1024;
export const MAX_ENV_ENTRIES = 100;

/** `max-num-batched-tokens` → `MAX_NUM_BATCHED_TOKENS`. */
export function envSuffixForFlag(flag: string): string {
  return flag.toUpperCase().replace(/-/g, '_');
}

/** The product of the parallelism flags in `extraArgs` other than tensor parallelism (data × pipeline). */
export function extraParallelism(options: VllmEngineOptions): number {
  let product = 1;
  for (const flag of ['data-parallel-size', 'pipeline-parallel-size']) {
    const value = options.extraArgs?.[flag];
    if (typeof value === 'number' && Number.isInteger(value) && value > 0) product *= value;
  }
  return product;
}

/** Checks engine options that do not depend on the instance or routing. */
export function validateEngineOptions(
  options: VllmEngineOptions,
  convention: EngineEnvConvention,
  problems: ProblemCollector,
): void {
  problems.integerAtLeast('engine.tensorParallelSize', options.tensorParallelSize, 1);
  problems.integerAtLeast('engine.maxModelLen', options.maxModelLen, 1);
  problems.integerAtLeast('engine.maxNumSeqs', options.maxNumSeqs, 1);
  validateSchedulerOptions(options, problems);
  const util = options.gpuMemoryUtilization;
  if (util !== undefined && !Token.isUnresolved(util) && !(util > 0 && util <= 1)) {
    problems.add(`engine.gpuMemoryUtilization must be greater than 0 and at most 1 (got ${util})`);
  }
  const served = options.servedModelName;
  if (served !== undefined && !Token.isUnresolved(served) && served.trim() === '') {
    problems.add("engine.servedModelName must not be empty (got '')");
  }
  for (const [flag, value] of Object.entries(options.extraArgs ?? {})) {
    const name = `engine.extraArgs['${flag}']`;
    if (!FLAG_NAME.test(flag)) {
      problems.add(
        `${name}: flag names must be lower-case words joined by '-', without leading dashes (got ${show(flag)})`,
      );
      continue;
    }
    const reserved = RESERVED_FLAGS[flag];
    if (reserved) {
      problems.add(`${name} is set by ${reserved}; set it there instead (got ${show(value)})`);
      continue;
    }
    if (typeof value === 'number' && !Token.isUnresolved(value) && !Number.isFinite(value)) {
      problems.add(`${name} must be a finite number (got ${value})`);
    }
    if (value === false && convention === EngineEnvConvention.SM_VLLM) {
      problems.add(
        `${name} is false, which the vLLM DLC drops without a trace; use { 'no-${flag}': true } to turn a default-on flag off (got false)`,
      );
    }
    if (typeof value === 'string' && !Token.isUnresolved(value) && value.length > MAX_ENV_VALUE_LENGTH) {
      problems.add(`${name} must be at most ${MAX_ENV_VALUE_LENGTH} characters (got ${value.length})`);
    }
  }
}

/** Everything the environment is rendered from. */
export interface EngineEnvironmentInput {
  readonly convention: EngineEnvConvention;
  readonly model: ModelSourceConfig;
  readonly options: VllmEngineOptions;
  /** Resolved tensor parallel size (the option or the instance's GPU count). */
  readonly tensorParallelSize: number;
}

function text(value: string | number | boolean): string {
  return typeof value === 'string' ? value : String(value);
}

/** The container environment for one image convention. Keys are sorted, so templates diff cleanly. */
export function renderEngineEnvironment(input: EngineEnvironmentInput): Record<string, string> {
  const env = input.convention === EngineEnvConvention.LMI ? renderLmi(input) : renderDlc(input);
  return Object.fromEntries(Object.entries(env).sort(([a], [b]) => a.localeCompare(b)));
}

function renderDlc({ model, options, tensorParallelSize }: EngineEnvironmentInput): Record<string, string> {
  const env: Record<string, string> = {};
  const put = (flag: string, value: string | number | boolean | undefined) => {
    if (value !== undefined) env[`SM_VLLM_${envSuffixForFlag(flag)}`] = text(value);
  };
  put('model', model.huggingFaceModelId ?? MODEL_MOUNT_PATH);
  put('revision', model.huggingFaceRevision);
  put('tensor-parallel-size', tensorParallelSize);
  put('max-model-len', options.maxModelLen);
  put('gpu-memory-utilization', options.gpuMemoryUtilization);
  put('max-num-seqs', options.maxNumSeqs);
  put('max-num-batched-tokens', options.maxNumBatchedTokens);
  put('long-prefill-token-threshold', options.longPrefillTokenThreshold);
  put('scheduling-policy', options.schedulingPolicy);
  put('served-model-name', options.servedModelName);
  // The DLC renders `true` as a bare flag and drops `false`; vLLM turns prefix caching on by default, so turning
  // it off needs the negative flag.
  if (options.enablePrefixCaching ?? true) put('enable-prefix-caching', true);
  else put('no-enable-prefix-caching', true);
  for (const [flag, value] of Object.entries(options.extraArgs ?? {})) put(flag, value);
  if (model.huggingFaceToken !== undefined) env.HF_TOKEN = model.huggingFaceToken;
  return env;
}

function renderLmi({ model, options, tensorParallelSize }: EngineEnvironmentInput): Record<string, string> {
  const env: Record<string, string> = {
    // Since LMI 17, vLLM runs in async mode by default (vLLM's OpenAI modules behind /invocations), so the older
    // recipe (OPTION_ASYNC_MODE, OPTION_ROLLING_BATCH=disable, OPTION_ENTRYPOINT) is not set. Fail fast so SageMaker
    // sees a failed start instead of a container that answers /ping without a model.
    SERVING_FAIL_FAST: 'true',
    HF_MODEL_ID: model.huggingFaceModelId ?? MODEL_MOUNT_PATH,
  };
  const put = (name: string, value: string | number | boolean | undefined) => {
    if (value !== undefined) env[`OPTION_${name}`] = text(value);
  };
  if (model.huggingFaceRevision !== undefined) env.HF_REVISION = model.huggingFaceRevision;
  put('TENSOR_PARALLEL_DEGREE', tensorParallelSize);
  put('MAX_MODEL_LEN', options.maxModelLen);
  put('GPU_MEMORY_UTILIZATION', options.gpuMemoryUtilization);
  put('MAX_ROLLING_BATCH_SIZE', options.maxNumSeqs);
  put(envSuffixForFlag('max-num-batched-tokens'), options.maxNumBatchedTokens);
  put(envSuffixForFlag('long-prefill-token-threshold'), options.longPrefillTokenThreshold);
  put(envSuffixForFlag('scheduling-policy'), options.schedulingPolicy);
  put('SERVED_MODEL_NAME', options.servedModelName);
  put('ENABLE_PREFIX_CACHING', options.enablePrefixCaching ?? true);
  for (const [flag, value] of Object.entries(options.extraArgs ?? {})) put(envSuffixForFlag(flag), value);
  if (model.huggingFaceToken !== undefined) env.HF_TOKEN = model.huggingFaceToken;
  return env;
}

/**
 * What a base model needs so SageMaker can load LoRA adapter inference components into it at run time, in the vLLM
 * DLC's convention (aws/model-hosting-container-standards, docs/sagemaker/05_lora_adapter_management.md):
 * `SM_VLLM_ENABLE_LORA`, `SM_VLLM_MAX_LORAS` (adapters in one batch; the adapter count unless `extraArgs['max-loras']`
 * sets it) and `VLLM_ALLOW_RUNTIME_LORA_UPDATING`, without which vLLM refuses adapters loaded after start-up.
 */
export function renderLoraEnvironment(options: VllmEngineOptions, adapterCount: number): Record<string, string> {
  if (adapterCount < 1) return {};
  const env: Record<string, string> = { VLLM_ALLOW_RUNTIME_LORA_UPDATING: 'True' };
  if (options.extraArgs?.['enable-lora'] === undefined) env[`SM_VLLM_${envSuffixForFlag('enable-lora')}`] = 'true';
  if (options.extraArgs?.['max-loras'] === undefined)
    env[`SM_VLLM_${envSuffixForFlag('max-loras')}`] = String(adapterCount);
  return env;
}

/** What decides how many environment variables the container gets, known before anything is bound. */
export interface EnvironmentCountInput {
  readonly convention: EngineEnvConvention;
  readonly model: { readonly downloadsAtStartup: boolean; readonly resolvesSecretIntoEnvironment: boolean };
  readonly engine: VllmEngineOptions;
  /** Count LoRA's settings as if adapters follow (a base inference component). */
  readonly withLoraAdapters: boolean;
}

/**
 * SageMaker's limit on container environment variables, checked at synth: the environment is rendered once with
 * placeholders for what binding fills in (the model id, the token).
 */
export function validateEnvironmentCount(input: EnvironmentCountInput, problems: ProblemCollector): void {
  const { model, engine } = input;
  const envCount = Object.keys({
    ...renderEngineEnvironment({
      convention: input.convention,
      model: model.downloadsAtStartup
        ? {
            huggingFaceModelId: 'placeholder',
            huggingFaceToken: model.resolvesSecretIntoEnvironment ? 'placeholder' : undefined,
          }
        : {},
      options: engine,
      tensorParallelSize: 1,
    }),
    ...(input.withLoraAdapters ? renderLoraEnvironment(engine, 1) : {}),
  }).length;
  if (envCount > MAX_ENV_ENTRIES) {
    problems.add(
      `engine settings must render at most ${MAX_ENV_ENTRIES} container environment variables (got ${envCount})`,
    );
  }
}

/** The construct's option for each engine argument the router's model follows (engine-args.ts flag names); maxNumSeqs keeps its own check above. */
const SCHEDULER_OPTIONS: readonly (readonly [string, keyof VllmEngineOptions])[] = [
  ['max-num-batched-tokens', 'maxNumBatchedTokens'],
  ['long-prefill-token-threshold', 'longPrefillTokenThreshold'],
  ['scheduling-policy', 'schedulingPolicy'],
];

/**
 * The scheduler options against the ranges and relations `--engine-arg` uses (one home: the router's
 * engine-args module, loaded at synth as the router settings are); nothing is checked here when this installation
 * carries no router (as for the other router checks, see router-settings.ts).
 */
function validateSchedulerOptions(options: VllmEngineOptions, problems: ProblemCollector): void {
  const engineArgs = loadEngineArgs();
  if (engineArgs === undefined) return;
  const given: Record<string, number | string> = {};
  for (const [flag, option] of SCHEDULER_OPTIONS) {
    // Stacks written before the option existed set it in extraArgs: both are checked the same way, one at a time.
    const extra = options.extraArgs?.[flag];
    if (options[option] !== undefined && extra !== undefined) {
      problems.add(`engine.${option} and engine.extraArgs['${flag}'] are both set; keep one (got ${show(extra)})`);
      continue;
    }
    const name = extra !== undefined ? `engine.extraArgs['${flag}']` : `engine.${option}`;
    const value = options[option] ?? extra;
    // A non-finite number is already refused by the extraArgs check.
    if (value === undefined || Token.isUnresolved(value) || (typeof value === 'number' && !Number.isFinite(value)))
      continue;
    const spec = engineArgs.ENGINE_ARGS.find((s) => s.flag === flag);
    const problem = spec === undefined ? undefined : engineArgs.engineArgValueProblem(spec, value);
    if (problem !== undefined) problems.add(`${name} ${problem}`);
    else given[option] = value as number | string;
  }
  const relation = engineArgs.schedulerRelationProblems(
    'engine',
    {
      maxNumBatchedTokens: (given.maxNumBatchedTokens as number | undefined) ?? Infinity,
      maxNumSeqs:
        Number.isInteger(options.maxNumSeqs) && !Token.isUnresolved(options.maxNumSeqs) ? options.maxNumSeqs! : 1,
      longPrefillTokenThreshold: given.longPrefillTokenThreshold as number | undefined,
    },
    typeof options.maxModelLen === 'number' && !Token.isUnresolved(options.maxModelLen)
      ? options.maxModelLen
      : undefined,
  );
  for (const problem of relation) problems.add(problem.replace(/^engine /, 'engine: '));
}
