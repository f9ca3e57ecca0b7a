/**
 * vLLM engine settings. The construct renders them in the image's environment convention
 * (`SM_VLLM_*` for the AWS vLLM DLC, `OPTION_*` for LMI); only the settings you give are rendered, so vLLM's own
 * defaults apply to everything else.
 */
export interface VllmEngineOptions {
  /**
   * GPUs one model replica is sharded over. Must divide the GPUs of the instance type.
   *
   * @default - every GPU of the instance type (8 on ml.p5.48xlarge)
   */
  readonly tensorParallelSize?: number;

  /**
   * Longest prompt + completion, in tokens. Allowed: an integer ≥ 1 (vLLM refuses values above the model's
   * context length at start-up).
   *
   * @default - the model's context length
   */
  readonly maxModelLen?: number;

  /**
   * Fraction of each GPU's memory vLLM may use for weights, activations and KV cache. Allowed: > 0 and ≤ 1.
   *
   * @default - vLLM's default (0.9)
   */
  readonly gpuMemoryUtilization?: number;

  /**
   * Most sequences vLLM runs in one batch. Allowed: an integer ≥ 1.
   *
   * @default - vLLM's default for the GPU
   */
  readonly maxNumSeqs?: number;

  /**
   * vLLM `--max-num-batched-tokens`: the token budget of one engine step. Allowed: an integer between 1 and
   * 10,000,000, at least `maxNumSeqs` when both are set (vLLM refuses less). The same ranges as the emulator's
   * `--engine-arg`, checked at synth by the router's own module (router/src/emulator/engine-args.ts).
   *
   * @default - vLLM's default for the GPU (8,192 on H100-class GPUs for online serving)
   */
  readonly maxNumBatchedTokens?: number;

  /**
   * vLLM `--long-prefill-token-threshold`: the most tokens one request computes in a step, so a long prefill leaves
   * room in each step for others. Allowed: an integer between 0 (no cap) and `maxModelLen`.
   *
   * @default - vLLM's default (0, no cap)
   */
  readonly longPrefillTokenThreshold?: number;

  /**
   * vLLM `--scheduling-policy`: `fcfs` (arrival order) or `priority` (the request body's `priority`, lower sooner,
   * ties by arrival; vLLM refuses a non-zero `priority` under `fcfs`). The router forwards `priority` untouched.
   *
   * @default - vLLM's default (fcfs)
   */
  readonly schedulingPolicy?: string;

  /**
   * vLLM automatic prefix caching: what prefix-aware routing is for. Turning it off under `PREFIX_AWARE` is
   * allowed but warned about.
   *
   * @default true
   */
  readonly enablePrefixCaching?: boolean;

  /**
   * The model name clients send in the OpenAI `model` field.
   *
   * @default - vLLM's default: the Hugging Face id, or `/opt/ml/model` for S3 models
   */
  readonly servedModelName?: string;

  /**
   * Further vLLM engine flags, keyed by the flag name without dashes in front, e.g.
   * `{ 'max-num-batched-tokens': 8192, 'enable-chunked-prefill': true }`. Rendered as `SM_VLLM_MAX_NUM_BATCHED_TOKENS`
   * (DLC) or `OPTION_MAX_NUM_BATCHED_TOKENS` (LMI). Flags that have an option above are refused here. The DLC drops
   * a flag whose value is `false`, so `false` is refused for DLC images: use the `no-` form
   * (`{ 'no-enable-chunked-prefill': true }`) to turn a default-on flag off.
   *
   * @default - none
   */
  readonly extraArgs?: { readonly [flag: string]: string | number | boolean };
}

/** How an image expects its engine settings in the environment. */
export enum EngineEnvConvention {
  /**
   * AWS vLLM DLC for SageMaker: `SM_VLLM_FOO_BAR=x` becomes `--foo-bar x`, `true` a bare flag, `false` no flag.
   * The model comes from `SM_VLLM_MODEL`.
   */
  SM_VLLM = 'SM_VLLM',
  /**
   * Large Model Inference (djl-inference) with its vLLM async engine: `OPTION_FOO_BAR=x` passed to vLLM's
   * engine arguments; the model comes from `HF_MODEL_ID`.
   */
  LMI = 'LMI',
}
