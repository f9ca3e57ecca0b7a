import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { aws_ecr_assets as ecrAssets, aws_iam as iam, IgnoreMode, Token } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { grantScoped } from './private/grants';
import { amiForCudaMajor, cudaMajorOfDlcTag } from './private/host-ami';
import { ECR_AUTH_ACTIONS, ECR_PULL_ACTIONS } from './private/iam-actions';
import { ProblemCollector, show } from './private/validation';
import { EngineEnvConvention } from './vllm-engine-options';
import type { VllmImage, VllmImageBindContext, VllmImageConfig } from './vllm-image';

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
   * Its form is checked here, its name and options against the router's registered policies when the container starts.
   *
   * @default - `cache-aware` in multi-engine mode; the router's default in sagemaker mode (one engine: nothing to choose)
   */
  readonly policy?: string;

  /** Further `PREFIX_ROUTER_*` settings for the router (any variable `prefix-router serve` accepts). @default - none */
  readonly routerEnvironment?: Record<string, string>;

  /** Routing metrics as CloudWatch Embedded Metric Format lines in the container log. @default true */
  readonly emf?: boolean;

  /**
   * Image to build on (`BASE_IMAGE` of router/Dockerfile): a vLLM DLC for SageMaker or an image built from one.
   * Pulling it at build time needs a `docker login` to its registry.
   *
   * @default - the Dockerfile's default: the vLLM DLC at VllmImage.DLC_DEFAULT_TAG from the us-east-1 DLC registry
   */
  readonly baseImage?: string;

  /**
   * Host AMI of the instances.
   *
   * @default - derived from the base image's DLC tag as for VllmImage.dlc()
   */
  readonly inferenceAmiVersion?: string;

  /**
   * Docker build context: a directory with `router/Dockerfile`, i.e. this package's root (a checkout or the
   * installed package).
   *
   * @default - the root of the installed cdk-prefix-aware-llm package
   */
  readonly buildContext?: string;
}

/** Paths left out of the build context (also in the repository's .dockerignore). `dist` too when sources are present. */
export const ROUTER_SIDECAR_BUILD_EXCLUDES: readonly string[] = [
  'node_modules',
  'cdk.out',
  '.git',
  'coverage',
  'reports',
  '.prefix-router',
  'test',
  'docs',
  'examples',
  'lib',
  '*.tsbuildinfo',
  // Files the image does not use: left out so that editing them does not change the asset hash (a rebuild).
  '.ci',
  '.github',
  '.gitignore',
  '.dockerignore',
  'README.md',
  'cdk.json',
  'jest.config.js',
  'bin/app.ts',
  'router/bench',
  'router/traces',
  'router/scripts',
];

/** Variables the sidecar props set; routerEnvironment may not set them again. */
const OWNED_VARIABLES = ['PREFIX_ROUTER_MODE', 'PREFIX_ROUTER_ENGINES', 'PREFIX_ROUTER_POLICY', 'PREFIX_ROUTER_EMF', 'PREFIX_ROUTER_EMF_ENDPOINT_NAME'];
/** Variables the container itself decides. */
const CONTAINER_VARIABLES = ['PREFIX_ROUTER_BACKENDS', 'PREFIX_ROUTER_HOST', 'PREFIX_ROUTER_PORT'];
const MAX_ROUTER_VARIABLES = 40;

/** The directory above `from` that holds router/Dockerfile (lib/ in a checkout, dist/lib/ in the package). */
export function findPackageRoot(from: string = __dirname): string | undefined {
  let dir = from;
  for (;;) {
    if (existsSync(join(dir, 'router', 'Dockerfile')) && existsSync(join(dir, 'package.json'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/**
 * router/Dockerfile built as a DockerImageAsset at deploy time (synth needs no Docker engine): the vLLM DLC with
 * `prefix-router container` as its entrypoint. Engine settings keep the DLC's SM_VLLM_* convention.
 */
export class RouterSidecarImage implements VllmImage {
  public readonly convention = EngineEnvConvention.SM_VLLM;

  constructor(
    private readonly options: RouterSidecarImageOptions,
    private readonly defaultDlcTag: string,
  ) {}

  public _validate(scope: Construct, problems: ProblemCollector): void {
    const o = this.options;
    const mode = o.mode ?? RouterSidecarMode.SAGEMAKER;
    if (!Object.values(RouterSidecarMode).includes(mode)) {
      problems.add(`image.mode must be one of ${Object.values(RouterSidecarMode).join(', ')} (got ${show(mode)})`);
    }
    if (mode === RouterSidecarMode.MULTI_ENGINE && o.engines === undefined) {
      problems.add('image.engines must be set in multi-engine mode: an integer between 1 and 64 (got undefined)');
    }
    if (mode === RouterSidecarMode.SAGEMAKER && o.engines !== undefined && !Token.isUnresolved(o.engines) && o.engines !== 1) {
      problems.add(`image.engines must be 1 or left out in sagemaker mode; use RouterSidecarMode.MULTI_ENGINE for several engines (got ${show(o.engines)})`);
    } else {
      problems.integerInRange('image.engines', o.engines, 1, 64);
    }
    // The endpoint validating this image knows its instance type: engines must share its GPUs evenly.
    const instanceType = (scope as { readonly instanceType?: { readonly name?: string; readonly gpuCount?: number } }).instanceType;
    const gpus = instanceType?.gpuCount;
    if (mode === RouterSidecarMode.MULTI_ENGINE && gpus !== undefined && o.engines !== undefined && !Token.isUnresolved(o.engines)
      && Number.isInteger(o.engines) && o.engines >= 1 && gpus % o.engines !== 0) {
      problems.add(`image.engines must divide the ${gpus} GPUs of ${instanceType?.name} so every engine gets the same number (got ${o.engines})`);
    }
    if (o.policy !== undefined && !Token.isUnresolved(o.policy) && !/^[a-z][a-z0-9-]{0,63}(\?[A-Za-z0-9=&.,_-]{1,900})?$/.test(o.policy)) {
      problems.add(`image.policy must be a policy name (lower-case letters, digits and '-', at most 64), optionally with options as in 'cache-aware?blockChars=256' (got ${show(o.policy)})`);
    }
    const extra = Object.entries(o.routerEnvironment ?? {});
    if (extra.length > MAX_ROUTER_VARIABLES) problems.add(`image.routerEnvironment must have at most ${MAX_ROUTER_VARIABLES} variables (got ${extra.length})`);
    for (const [name, value] of extra) {
      if (!/^PREFIX_ROUTER_[A-Z0-9_]+$/.test(name)) {
        problems.add(`image.routerEnvironment keys must be PREFIX_ROUTER_* variables (got ${show(name)})`);
      } else if (OWNED_VARIABLES.includes(name)) {
        problems.add(`image.routerEnvironment must not set ${name}: it comes from the mode, engines, policy and emf options (got ${show(value)})`);
      } else if (CONTAINER_VARIABLES.includes(name)) {
        problems.add(`image.routerEnvironment must not set ${name}: the container sets it (got ${show(value)})`);
      } else if (!Token.isUnresolved(value) && value.length > 1024) {
        problems.add(`image.routerEnvironment['${name}'] must be at most 1024 characters (got ${value.length})`);
      }
    }
    if (o.baseImage !== undefined && !Token.isUnresolved(o.baseImage) && !/^[a-z0-9.-]+(:\d+)?\/[a-z0-9._/-]+(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}|@sha256:[a-f0-9]{64})$/.test(o.baseImage)) {
      problems.add(`image.baseImage must be a registry image reference with a tag or digest, like 763104351884.dkr.ecr.us-east-1.amazonaws.com/vllm:${this.defaultDlcTag} (got ${show(o.baseImage)})`);
    }
    if (o.baseImage !== undefined && Token.isUnresolved(o.baseImage)) {
      problems.add('image.baseImage must be known at synth time: Docker build arguments cannot hold deploy-time values (got a token)');
    }
    const context = o.buildContext ?? findPackageRoot();
    if (context === undefined || !existsSync(join(context, 'router', 'Dockerfile'))) {
      problems.add(`image.buildContext must be a directory containing router/Dockerfile (got ${show(context ?? 'nothing found above ' + __dirname)})`);
    }
  }

  public bind(scope: Construct, grantee: iam.IGrantable, context: VllmImageBindContext = {}): VllmImageConfig {
    const o = this.options;
    const directory = o.buildContext ?? findPackageRoot();
    if (directory === undefined) throw new Error(`image.buildContext: no directory with router/Dockerfile above ${__dirname}`);
    const fromSources = existsSync(join(directory, 'router', 'src'));
    const asset =
      (scope.node.tryFindChild('RouterSidecarImage') as ecrAssets.DockerImageAsset | undefined) ??
      new ecrAssets.DockerImageAsset(scope, 'RouterSidecarImage', {
        directory,
        file: 'router/Dockerfile',
        platform: ecrAssets.Platform.LINUX_AMD64,
        buildArgs: o.baseImage !== undefined ? { BASE_IMAGE: o.baseImage } : undefined,
        // A checkout compiles its sources in the build stage; the npm package ships dist/ and no sources.
        exclude: fromSources ? [...ROUTER_SIDECAR_BUILD_EXCLUDES, 'dist'] : [...ROUTER_SIDECAR_BUILD_EXCLUDES],
        ignoreMode: IgnoreMode.GLOB,
      });
    grantScoped(grantee, { actions: ECR_PULL_ACTIONS, resources: [asset.repository.repositoryArn] });
    grantScoped(grantee, {
      actions: ECR_AUTH_ACTIONS,
      resources: ['*'],
      wildcardReason: 'ecr:GetAuthorizationToken accepts no resource but *; it only issues a registry login, image access is limited to one repository by the pull statement.',
    });
    const environment: Record<string, string> = {
      PREFIX_ROUTER_MODE: o.mode ?? RouterSidecarMode.SAGEMAKER,
      PREFIX_ROUTER_EMF: (o.emf ?? true) ? 'on' : 'off',
      ...(o.engines !== undefined && { PREFIX_ROUTER_ENGINES: String(o.engines) }),
      ...(o.policy !== undefined && { PREFIX_ROUTER_POLICY: o.policy }),
      ...(context.endpointName !== undefined && { PREFIX_ROUTER_EMF_ENDPOINT_NAME: context.endpointName }),
      ...o.routerEnvironment,
    };
    // The host AMI follows the base image's CUDA, as for VllmImage.dlc().
    const cudaMajor = cudaMajorOfDlcTag(dlcTagOf(o.baseImage) ?? this.defaultDlcTag);
    return {
      imageUri: asset.imageUri,
      convention: this.convention,
      inferenceAmiVersion: o.inferenceAmiVersion ?? amiForCudaMajor(cudaMajor),
      cudaMajorVersion: cudaMajor,
      routerSidecarMetrics: o.emf ?? true,
      environment,
    };
  }
}

/** The tag of a `.../vllm:TAG` image reference, undefined for digests and other repositories. */
function dlcTagOf(image: string | undefined): string | undefined {
  if (image === undefined) return undefined;
  const match = /\/vllm:([A-Za-z0-9_][A-Za-z0-9_.-]*)$/.exec(image);
  return match?.[1];
}
