/** How `prefix-router container` uses the instance's GPUs (docs/container.md). */
export enum RouterSidecarMode {
  /** One vLLM engine on all GPUs behind the router; SageMaker's routing picks the instance. */
  SAGEMAKER = 'sagemaker',
  /** `engines` vLLM engines on disjoint GPU sets, the router choosing among them with its policy. */
  MULTI_ENGINE = 'multi-engine',
}

/** Options of `VllmImage.withRouterSidecar()`. */
export interface RouterSidecarImageOptions {
  /** @default RouterSidecarMode.SAGEMAKER */
  readonly mode?: RouterSidecarMode;

  /**
   * Engines per instance in multi-engine mode (1-64); the instance's GPUs must divide evenly among them (checked at
   * synth when the instance type's GPU count is known, else when the container starts). Must be left out (or 1) in
   * sagemaker mode.
   *
   * @default - 1; required in multi-engine mode
   */
  readonly engines?: number;

  /**
   * The router's policy (`PREFIX_ROUTER_POLICY`), e.g. `cache-aware` or `sagemaker-prefix-aware?prefixLength=4096`.
   * Checked at synth by the router's own parser: an unknown policy, an unknown option or a value out of range fails
   * synth naming this prop and the allowed values.
   *
   * @default - `cache-aware` in multi-engine mode; the router's default in sagemaker mode (one engine: nothing to choose)
   */
  readonly policy?: string;

  /**
   * Further `PREFIX_ROUTER_*` settings for the router (any variable `prefix-router serve` or `prefix-router
   * container` reads). Checked at synth by the container's own start-up validation: an unknown variable or a value
   * it would refuse fails synth; files they name (key files, a config file) are read when the container starts.
   *
   * @default - none
   */
  readonly routerEnvironment?: Record<string, string>;

  /** Routing metrics as CloudWatch Embedded Metric Format lines in the container log. @default true */
  readonly emf?: boolean;

  /**
   * Engine truth: each vLLM engine publishes its KV cache events (vLLM's `--kv-events-config`, on a Unix socket and a
   * loopback replay port inside the container) and the router predicts each engine's prefix-cache hits from what
   * the engine says it holds instead of its own estimate (`PREFIX_ROUTER_ENGINE_KV_EVENTS`, docs/container.md).
   *
   * Needs a policy that reads the events (`cache-aware`, the multi-engine default, or `llm-d-precise`) and the
   * model's `tokenizer.json`: from a model of `ModelSource.s3()` (copied to /opt/ml/model first), from
   * `PREFIX_ROUTER_TOKENIZER` in `routerEnvironment`, or, for a Hugging Face model, the one vLLM downloads as it
   * starts: the container then starts the router once the file is in the Hugging Face cache, waiting at most the
   * endpoint's `containerStartupHealthCheckTimeout` less a minute (at least half of it; `PREFIX_ROUTER_TOKENIZER_WAIT_MS`
   * in `routerEnvironment` overrides it), so its own message reaches the logs before SageMaker's timeout.
   *
   * @default false
   */
  readonly kvCacheEvents?: boolean;

  /**
   * Image to build on (`BASE_IMAGE` of router/Dockerfile): a vLLM DLC for SageMaker or an image built from one.
   * Pulling it at build time needs a `docker login` to its registry.
   *
   * @default - the Dockerfile's default: the vLLM DLC at VllmImage.DLC_DEFAULT_TAG from the us-east-1 DLC registry
   */
  readonly baseImage?: string;

  /**
   * Image the Node.js binary and the build stage come from (`NODE_IMAGE` of router/Dockerfile): an official Node
   * image, by tag or pinned by digest (`node:24.21.0-bookworm-slim@sha256:…`), from any registry the build machine
   * reaches (a mirror in ECR, say).
   *
   * @default - the Dockerfile's default: node:24.21.0-bookworm-slim
   */
  readonly nodeImage?: string;

  /**
   * Host AMI of the instances.
   *
   * @default - derived from the base image's DLC tag as for VllmImage.dlc()
   */
  readonly inferenceAmiVersion?: string;

  /**
   * Docker build context: a directory with `router/Dockerfile` and `package.json`: a repository checkout's root
   * (the build stage compiles router/src) or a staged context with the compiled router (as the package carries).
   *
   * @default - the staged context the installed cdk-prefix-aware-llm package carries (its `sidecar/` folder); the
   * repository root when run from a checkout
   */
  readonly buildContext?: string;
}
