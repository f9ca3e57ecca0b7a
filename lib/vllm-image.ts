import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  Annotations,
  Aws,
  aws_ecr as ecr,
  aws_ecr_assets as ecrAssets,
  aws_iam as iam,
  CfnMapping,
  Duration,
  IgnoreMode,
  Stack,
  Token,
} from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { dlcAccountFor, DLC_ACCOUNT_BY_REGION } from './private/dlc-accounts';
import { grantScoped } from './private/grants';
import {
  AMI_AL2023_GPU_4_1,
  AMI_AL2_GPU_2,
  AMI_AL2_GPU_2_1,
  AMI_AL2_GPU_3_1,
  amiForCudaMajor,
  cudaMajorOfAmi,
  cudaMajorOfCuTag,
  cudaMajorOfDlcTag,
} from './private/host-ami';
import { ECR_AUTH_ACTIONS, ECR_PULL_ACTIONS } from './private/iam-actions';
import { PrefixAwareLlmValidationError } from './private/errors';
import { ProblemCollector, show } from './private/validation';
import { findSidecarBuildContext, ROUTER_SIDECAR_BUILD_EXCLUDES } from './private/router-sidecar-context';
import { loadRouterSettings } from './private/router-settings';
import { RouterSidecarMode, RouterSidecarImageOptions } from './router-sidecar-image';

/** Same ids as `PrefixAwareLlmWarnings.HOST_AMI_UNKNOWN`, `.ROUTER_SETTINGS_UNCHECKED`, `.ROUTER_SETTING_DOUBTFUL` (kept here to avoid an import cycle). */
const HOST_AMI_UNKNOWN_WARNING = '@cdk-prefix-aware-llm/hostAmiUnknown';
const ROUTER_SETTINGS_UNCHECKED_WARNING = '@cdk-prefix-aware-llm/routerSettingsUnchecked';
const ROUTER_SETTING_DOUBTFUL_WARNING = '@cdk-prefix-aware-llm/routerSettingDoubtful';

/**
 * A Docker image reference: [registry[:port]/]name[:tag][@sha256:digest], lower-case name components
 * (https://docs.docker.com/reference/cli/docker/image/tag/#description).
 */
const IMAGE_REFERENCE =
  /^[a-z0-9]+(?:[._-][a-z0-9]+)*(?::\d+)?(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[a-f0-9]{64})?$/;
import { EngineEnvConvention } from './vllm-engine-options';

/** SageMaker host AMIs (`ProductionVariant.InferenceAmiVersion`) the images here need. */
export class InferenceAmiVersion {
  /**
   * Amazon Linux 2023, NVIDIA driver 580, CUDA 13.0: required by CUDA 13 images (vLLM DLC v2.x, LMI `-cu130`); the
   * driver also runs CUDA 12 images.
   */
  public static readonly AL2023_GPU_4_1 = AMI_AL2023_GPU_4_1;
  /** Amazon Linux 2, NVIDIA driver 550, CUDA 12.4 (vLLM DLC v1.x, LMI `-cu12x`). */
  public static readonly AL2_GPU_3_1 = AMI_AL2_GPU_3_1;
  /** Amazon Linux 2, NVIDIA driver 535, CUDA 12.2. */
  public static readonly AL2_GPU_2_1 = AMI_AL2_GPU_2_1;
  /** Amazon Linux 2, NVIDIA driver 535, CUDA 12.2. */
  public static readonly AL2_GPU_2 = AMI_AL2_GPU_2;

  private constructor() {}
}

/** Options of `VllmImage.dlc()`. */
export interface DlcImageOptions {
  /**
   * Image tag in the `vllm` repository. Tags `server-sagemaker-cuda-v2…` select `InferenceAmiVersion.AL2023_GPU_4_1`
   * and `-v1…` `AL2_GPU_3_1`; any other tag needs `inferenceAmiVersion`, or runs on SageMaker's default AMI.
   *
   * @default VllmImage.DLC_DEFAULT_TAG
   */
  readonly tag?: string;

  /**
   * Host AMI. Synth fails when it is a CUDA 12 AMI and the tag says CUDA 13 (v2.x).
   *
   * @default - derived from the tag, see `tag`
   */
  readonly inferenceAmiVersion?: string;
}

/** Options of `VllmImage.lmi()`. */
export interface LmiImageOptions {
  /**
   * Image tag in the `djl-inference` repository. The CUDA toolkit in the tag selects the AMI: `-cu13x` (also
   * followed by a patch suffix such as `-cu130-v1.1`) selects `InferenceAmiVersion.AL2023_GPU_4_1`, `-cu12x`
   * `AL2_GPU_3_1`; a tag without one runs on SageMaker's default AMI unless `inferenceAmiVersion` is given.
   *
   * @default VllmImage.LMI_DEFAULT_TAG
   */
  readonly tag?: string;

  /**
   * Host AMI. Synth fails when it is a CUDA 12 AMI and the tag says CUDA 13.
   *
   * @default - derived from the tag, see `tag`
   */
  readonly inferenceAmiVersion?: string;
}

/** Options of `VllmImage.fromEcrRepository()`. */
export interface EcrImageOptions {
  /**
   * How the image reads engine settings. An image built `FROM` the vLLM DLC keeps `SM_VLLM`.
   *
   * @default EngineEnvConvention.SM_VLLM
   */
  readonly convention?: EngineEnvConvention;

  /**
   * CUDA major version the image was built with (the base image's CUDA): 13 for an image built `FROM` vLLM DLC v2.x
   * or LMI `-cu130`, 12 for DLC v1.x or LMI `-cu12x`. Selects the host AMI when `inferenceAmiVersion` is not given.
   * Allowed: 12 or 13.
   *
   * @default - read from the tag when it names one (`server-sagemaker-cuda-vX` or `-cuNNN`); otherwise unknown, and
   * the construct warns (`PrefixAwareLlmWarnings.HOST_AMI_UNKNOWN`) because SageMaker's default AMI cannot start a
   * CUDA 13 image
   */
  readonly cudaVersion?: number;

  /**
   * Host AMI. Synth fails when it is a CUDA 12 AMI and `cudaVersion` (or the tag) says 13.
   *
   * @default - derived from `cudaVersion`; SageMaker's default when the CUDA version is unknown
   */
  readonly inferenceAmiVersion?: string;
}

/** What an image contributes once bound. */
export interface VllmImageConfig {
  /** Full image URI, possibly with CloudFormation tokens. */
  readonly imageUri: string;
  /** Environment convention for engine settings. */
  readonly convention: EngineEnvConvention;
  /** Host AMI, when the image needs a specific one. */
  readonly inferenceAmiVersion?: string;
  /** CUDA major version of the image, when known. */
  readonly cudaMajorVersion?: number;
  /**
   * Whether the container runs the prefix-router sidecar and prints its EMF metrics (namespace `PrefixRouter`);
   * the dashboard then shows them unless `monitoring.routerSidecarMetrics` says otherwise.
   *
   * @default false
   */
  readonly routerSidecarMetrics?: boolean;
  /** Container environment the image needs besides the engine settings (the router sidecar's). */
  readonly environment?: Record<string, string>;
}

/** What the endpoint tells an image when binding it. */
/** What the sidecar's tokenizer wait leaves of SageMaker's start-up health check for its message to reach the logs. */
const TOKENIZER_WAIT_MARGIN_MS = 60_000;

export interface VllmImageBindContext {
  /** The endpoint's name, when known at synth time. */
  readonly endpointName?: string;

  /**
   * The time SageMaker gives the container to pass its first health check. The router sidecar with `kvCacheEvents`
   * waits for the tokenizer vLLM downloads at most this long less a minute (at least half of it), so the container's
   * own message, naming where it looked, reaches the logs before SageMaker ends the deployment.
   *
   * @default - the sidecar's own wait (PREFIX_ROUTER_TOKENIZER_WAIT_MS, an hour)
   */
  readonly containerStartupHealthCheckTimeout?: Duration;
}

/** The container image that runs vLLM. */
export abstract class VllmImage {
  /**
   * Pinned tag of the AWS vLLM DLC for SageMaker (Amazon Linux 2023 "server" image): v2.3 = vLLM 0.27.0,
   * CUDA 13.0. The minor tag receives AWS security patches; pass `tag` to pin differently.
   */
  public static readonly DLC_DEFAULT_TAG = 'server-sagemaker-cuda-v2.3';

  /** Pinned tag of the LMI container: DJL Serving 0.36.0, LMI 28.0.0 (vLLM 0.26.0), CUDA 13.0. */
  public static readonly LMI_DEFAULT_TAG = '0.36.0-lmi28.0.0-cu130';

  /** Repository of the vLLM DLC in the AWS DLC registries. */
  public static readonly DLC_REPOSITORY = 'vllm';

  /** Repository of LMI in the AWS DLC registries. */
  public static readonly LMI_REPOSITORY = 'djl-inference';

  /**
   * The AWS vLLM Deep Learning Container for SageMaker (`SM_VLLM_*` settings), pulled from the DLC registry of
   * the stack's region. For an environment-agnostic stack the registry account comes from a CloudFormation
   * mapping resolved at deploy time.
   */
  public static dlc(options: DlcImageOptions = {}): VllmImage {
    const tag = options.tag ?? VllmImage.DLC_DEFAULT_TAG;
    return new DlcRegistryImage(
      VllmImage.DLC_REPOSITORY,
      tag,
      EngineEnvConvention.SM_VLLM,
      hostOf(cudaMajorOfDlcTag(tag), options.inferenceAmiVersion, `tag ${show(tag)}`),
    );
  }

  /** AWS Large Model Inference (djl-inference) with its vLLM engine (`OPTION_*` settings). */
  public static lmi(options: LmiImageOptions = {}): VllmImage {
    const tag = options.tag ?? VllmImage.LMI_DEFAULT_TAG;
    return new DlcRegistryImage(
      VllmImage.LMI_REPOSITORY,
      tag,
      EngineEnvConvention.LMI,
      hostOf(cudaMajorOfCuTag(tag), options.inferenceAmiVersion, `tag ${show(tag)}`),
    );
  }

  /**
   * Your own image in ECR, e.g. one built `FROM` the vLLM DLC. The execution role may pull from this repository
   * only; a repository in another account must also allow the role in its repository policy. The tag is required:
   * a moving tag such as `latest` makes a redeployment pick up a different image without a template change.
   */
  public static fromEcrRepository(repository: ecr.IRepository, tag: string, options: EcrImageOptions = {}): VllmImage {
    const cuda = options.cudaVersion ?? cudaMajorOfDlcTag(tag) ?? cudaMajorOfCuTag(tag);
    const source = options.cudaVersion !== undefined ? `cudaVersion ${options.cudaVersion}` : `tag ${show(tag)}`;
    return new OwnRepositoryImage(
      repository,
      tag,
      options.convention ?? EngineEnvConvention.SM_VLLM,
      hostOf(cuda, options.inferenceAmiVersion, source),
      options.cudaVersion,
    );
  }

  /**
   * router/Dockerfile (the vLLM DLC with the `prefix-router` sidecar as entrypoint) built as a Docker image asset
   * at deploy time; see docs/container.md. The host AMI follows the base image's DLC tag as for `dlc()`.
   */
  public static withRouterSidecar(options: RouterSidecarImageOptions = {}): VllmImage {
    return new RouterSidecarImage(options, VllmImage.DLC_DEFAULT_TAG);
  }

  /** How the image reads engine settings. */
  public abstract readonly convention: EngineEnvConvention;

  /** @internal */
  public abstract _validate(scope: Construct, problems: ProblemCollector): void;

  /**
   * Engines the container runs on one instance when it splits the GPUs itself, each with tensor parallel size =
   * its equal share (the router sidecar's multi-engine mode); undefined when one engine runs with the configured
   * tensor parallel size.
   *
   * @internal
   */
  public _enginesPerInstance(): number | undefined {
    return undefined;
  }

  /** Grants the role pull rights on exactly this image's repository and returns the image URI. */
  public abstract bind(scope: Construct, grantee: iam.IGrantable, context?: VllmImageBindContext): VllmImageConfig;
}

/** What an image needs from the host: its CUDA major (when known) and the AMI it runs on. */
interface HostRequirement {
  readonly cudaMajor?: number;
  readonly inferenceAmiVersion?: string;
  /** Where the CUDA version came from, for messages: `tag 'x'` or `cudaVersion 13`. */
  readonly cudaSource: string;
}

function hostOf(cudaMajor: number | undefined, explicitAmi: string | undefined, cudaSource: string): HostRequirement {
  return { cudaMajor, inferenceAmiVersion: explicitAmi ?? amiForCudaMajor(cudaMajor), cudaSource };
}

/** A CUDA 13 image on an AMI whose driver stops at CUDA 12 cannot start: refuse it at synth. */
function validateHost(host: HostRequirement, problems: ProblemCollector): void {
  const ami = host.inferenceAmiVersion;
  if (host.cudaMajor === undefined || ami === undefined || Token.isUnresolved(ami)) return;
  const amiCuda = cudaMajorOfAmi(ami);
  if (amiCuda !== undefined && amiCuda < host.cudaMajor) {
    problems.add(
      `image.inferenceAmiVersion ${show(ami)} has a CUDA ${amiCuda} driver, but the image needs CUDA ${host.cudaMajor} ` +
        `(${host.cudaSource}); use ${show(amiForCudaMajor(host.cudaMajor) ?? InferenceAmiVersion.AL2023_GPU_4_1)} (got ${show(ami)})`,
    );
  }
}

const ECR_TAG = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/;

function validateTag(tag: string, problems: ProblemCollector): void {
  if (Token.isUnresolved(tag)) return;
  if (!ECR_TAG.test(tag))
    problems.add(
      `image.tag must be a valid image tag (letters, digits, '_', '.', '-'; at most 128) (got ${show(tag)})`,
    );
}

function grantPull(grantee: iam.IGrantable, repositoryArn: string): void {
  grantScoped(grantee, { actions: ECR_PULL_ACTIONS, resources: [repositoryArn] });
  grantScoped(grantee, {
    actions: ECR_AUTH_ACTIONS,
    resources: ['*'],
    wildcardReason:
      'ecr:GetAuthorizationToken accepts no resource but *; it only issues a registry login, image access is limited to one repository by the pull statement.',
  });
}

/** Id of the stack-wide region → DLC account mapping. */
const DLC_MAPPING_ID = 'PrefixAwareLlmDlcAccounts';

/** The DLC registry account for the stack: a literal when the region is known, else a mapping lookup. */
function dlcAccount(scope: Construct): string {
  const stack = Stack.of(scope);
  if (!Token.isUnresolved(stack.region)) {
    const account = dlcAccountFor(stack.region);
    if (!account)
      throw new PrefixAwareLlmValidationError(scope, [
        `image: no AWS Deep Learning Containers registry is known for region ${stack.region}`,
      ]);
    return account;
  }
  const mapping =
    (stack.node.tryFindChild(DLC_MAPPING_ID) as CfnMapping | undefined) ??
    new CfnMapping(stack, DLC_MAPPING_ID, {
      mapping: Object.fromEntries(
        Object.entries(DLC_ACCOUNT_BY_REGION).map(([region, account]) => [region, { account }]),
      ),
    });
  return mapping.findInMap(Aws.REGION, 'account');
}

class DlcRegistryImage extends VllmImage {
  constructor(
    private readonly repositoryName: string,
    public readonly tag: string,
    public readonly convention: EngineEnvConvention,
    private readonly host: HostRequirement,
  ) {
    super();
  }

  public _validate(scope: Construct, problems: ProblemCollector): void {
    validateTag(this.tag, problems);
    validateHost(this.host, problems);
    const region = Stack.of(scope).region;
    if (!Token.isUnresolved(region) && dlcAccountFor(region) === undefined) {
      problems.add(
        `image: no AWS Deep Learning Containers registry is known for region ${region}; use VllmImage.fromEcrRepository() with a copy of the image (got region ${show(region)})`,
      );
    }
  }

  public bind(scope: Construct, grantee: iam.IGrantable): VllmImageConfig {
    const stack = Stack.of(scope);
    const account = dlcAccount(scope);
    const repositoryArn = stack.formatArn({
      service: 'ecr',
      account,
      resource: 'repository',
      resourceName: this.repositoryName,
    });
    grantPull(grantee, repositoryArn);
    return {
      imageUri: `${account}.dkr.ecr.${stack.region}.${stack.urlSuffix}/${this.repositoryName}:${this.tag}`,
      convention: this.convention,
      inferenceAmiVersion: this.host.inferenceAmiVersion,
      cudaMajorVersion: this.host.cudaMajor,
    };
  }
}

class OwnRepositoryImage extends VllmImage {
  constructor(
    private readonly repository: ecr.IRepository,
    public readonly tag: string,
    public readonly convention: EngineEnvConvention,
    private readonly host: HostRequirement,
    private readonly cudaVersion: number | undefined,
  ) {
    super();
  }

  public _validate(scope: Construct, problems: ProblemCollector): void {
    validateTag(this.tag, problems);
    const cuda = this.cudaVersion;
    if (cuda !== undefined && !Token.isUnresolved(cuda) && cuda !== 12 && cuda !== 13) {
      problems.add(`image.cudaVersion must be 12 or 13 (got ${show(cuda)})`);
      return;
    }
    validateHost(this.host, problems);
    if (this.host.cudaMajor === undefined && this.host.inferenceAmiVersion === undefined) {
      Annotations.of(scope).addWarningV2(
        HOST_AMI_UNKNOWN_WARNING,
        `The CUDA version of image ${show(this.tag)} is unknown, so it runs on SageMaker's default host AMI, whose driver cannot ` +
          'start CUDA 13 images (vLLM DLC v2.x, LMI -cu130). Pass VllmImage.fromEcrRepository(repo, tag, { cudaVersion }) or inferenceAmiVersion.',
      );
    }
  }

  public bind(_scope: Construct, grantee: iam.IGrantable): VllmImageConfig {
    grantPull(grantee, this.repository.repositoryArn);
    return {
      imageUri: this.repository.repositoryUriForTag(this.tag),
      convention: this.convention,
      inferenceAmiVersion: this.host.inferenceAmiVersion,
      cudaMajorVersion: this.host.cudaMajor,
    };
  }
}

/** Which prop sets each variable the props own, for messages. */
const PROP_OF_VARIABLE: Readonly<Record<string, string>> = {
  PREFIX_ROUTER_MODE: 'image.mode',
  PREFIX_ROUTER_ENGINES: 'image.engines',
  PREFIX_ROUTER_POLICY: 'image.policy',
  PREFIX_ROUTER_EMF: 'image.emf',
  PREFIX_ROUTER_ENGINE_KV_EVENTS: 'image.kvCacheEvents',
};

/** A router message that starts with the variable it is about, led by the prop that set it: `image.policy (PREFIX_ROUTER_POLICY) must ...`. */
function propNamed(message: string): string {
  const variable = /^PREFIX_ROUTER_[A-Z0-9_]+/.exec(message)?.[0];
  if (variable === undefined) return `image: ${message}`;
  return `${PROP_OF_VARIABLE[variable] ?? `image.routerEnvironment['${variable}']`} (${variable})${message.slice(variable.length)}`;
}

/** Variables the sidecar props set; routerEnvironment may not set them again. */
const OWNED_VARIABLES = [
  'PREFIX_ROUTER_MODE',
  'PREFIX_ROUTER_ENGINES',
  'PREFIX_ROUTER_POLICY',
  'PREFIX_ROUTER_EMF',
  'PREFIX_ROUTER_EMF_ENDPOINT_NAME',
  'PREFIX_ROUTER_ENGINE_KV_EVENTS',
];
/** Variables the container itself decides. */
const CONTAINER_VARIABLES = [
  'PREFIX_ROUTER_BACKENDS',
  'PREFIX_ROUTER_HOST',
  'PREFIX_ROUTER_PORT',
  'PREFIX_ROUTER_KV_EVENTS',
  'PREFIX_ROUTER_KV_EVENTS_REPLAY',
];
const MAX_ROUTER_VARIABLES = 40;

/**
 * router/Dockerfile built as a DockerImageAsset at deploy time (synth needs no Docker engine): the vLLM DLC with
 * `prefix-router container` as its entrypoint. Engine settings keep the DLC's SM_VLLM_* convention.
 */
class RouterSidecarImage extends VllmImage {
  public readonly convention = EngineEnvConvention.SM_VLLM;

  constructor(
    private readonly options: RouterSidecarImageOptions,
    private readonly defaultDlcTag: string,
  ) {
    super();
  }

  public _validate(scope: Construct, problems: ProblemCollector): void {
    const o = this.options;
    const mode = o.mode ?? RouterSidecarMode.SAGEMAKER;
    // The endpoint validating this image knows its instance type: engines must share its GPUs evenly.
    const instanceType = (scope as { readonly instanceType?: { readonly name?: string; readonly gpuCount?: number } })
      .instanceType;
    const gpus = instanceType?.gpuCount;
    if (
      mode === RouterSidecarMode.MULTI_ENGINE &&
      gpus !== undefined &&
      o.engines !== undefined &&
      !Token.isUnresolved(o.engines) &&
      Number.isInteger(o.engines) &&
      o.engines >= 1 &&
      gpus % o.engines !== 0
    ) {
      problems.add(
        `image.engines must divide the ${gpus} GPUs of ${instanceType?.name} so every engine gets the same number (got ${o.engines})`,
      );
    }
    const extra = Object.entries(o.routerEnvironment ?? {});
    if (extra.length > MAX_ROUTER_VARIABLES)
      problems.add(`image.routerEnvironment must have at most ${MAX_ROUTER_VARIABLES} variables (got ${extra.length})`);
    for (const [name, value] of extra) {
      if (!/^PREFIX_ROUTER_[A-Z0-9_]+$/.test(name)) {
        problems.add(`image.routerEnvironment keys must be PREFIX_ROUTER_* variables (got ${show(name)})`);
      } else if (OWNED_VARIABLES.includes(name)) {
        problems.add(
          `image.routerEnvironment must not set ${name}: it comes from the mode, engines, policy, emf and kvCacheEvents options (got ${show(value)})`,
        );
      } else if (CONTAINER_VARIABLES.includes(name)) {
        problems.add(`image.routerEnvironment must not set ${name}: the container sets it (got ${show(value)})`);
      } else if (!Token.isUnresolved(value) && value.length > 1024) {
        problems.add(`image.routerEnvironment['${name}'] must be at most 1024 characters (got ${value.length})`);
      }
    }
    this.checkWithRouter(scope, problems);
    if (
      o.baseImage !== undefined &&
      !Token.isUnresolved(o.baseImage) &&
      !/^[a-z0-9.-]+(:\d+)?\/[a-z0-9._/-]+(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}|@sha256:[a-f0-9]{64})$/.test(o.baseImage)
    ) {
      problems.add(
        `image.baseImage must be a registry image reference with a tag or digest, like 763104351884.dkr.ecr.us-east-1.amazonaws.com/vllm:${this.defaultDlcTag} (got ${show(o.baseImage)})`,
      );
    }
    if (o.baseImage !== undefined && Token.isUnresolved(o.baseImage)) {
      problems.add(
        'image.baseImage must be known at synth time: Docker build arguments cannot hold deploy-time values (got a token)',
      );
    }
    if (
      o.nodeImage !== undefined &&
      (Token.isUnresolved(o.nodeImage) || !IMAGE_REFERENCE.test(o.nodeImage) || !/[:@][^/]*$/.test(o.nodeImage))
    ) {
      problems.add(
        `image.nodeImage must be an image reference known at synth time with a tag, a digest or both, like node:24.21.0-bookworm-slim@sha256:<64 hex digits> (got ${show(o.nodeImage)})`,
      );
    }
    const context = o.buildContext ?? findSidecarBuildContext();
    if (context === undefined || !existsSync(join(context, 'router', 'Dockerfile'))) {
      problems.add(
        `image.buildContext must be a directory containing router/Dockerfile (got ${show(context ?? 'nothing found above ' + __dirname)})`,
      );
    }
  }

  public override _enginesPerInstance(): number | undefined {
    const engines = this.options.engines;
    if ((this.options.mode ?? RouterSidecarMode.SAGEMAKER) !== RouterSidecarMode.MULTI_ENGINE) return undefined;
    return engines !== undefined && !Token.isUnresolved(engines) && Number.isInteger(engines) && engines >= 1
      ? engines
      : undefined;
  }

  /** The PREFIX_ROUTER_* variables the container gets: from the props and the bind context, then routerEnvironment. */
  private routerVariables(context: VllmImageBindContext = {}): Record<string, string> {
    const o = this.options;
    const { endpointName, containerStartupHealthCheckTimeout: startup } = context;
    const startupMs =
      startup === undefined || Token.isUnresolved(startup.toSeconds()) ? undefined : startup.toMilliseconds();
    return {
      PREFIX_ROUTER_MODE: o.mode ?? RouterSidecarMode.SAGEMAKER,
      PREFIX_ROUTER_EMF: (o.emf ?? true) ? 'on' : 'off',
      ...(o.engines !== undefined && { PREFIX_ROUTER_ENGINES: String(o.engines) }),
      ...(o.policy !== undefined && { PREFIX_ROUTER_POLICY: o.policy }),
      ...(o.kvCacheEvents === true && { PREFIX_ROUTER_ENGINE_KV_EVENTS: 'on' }),
      ...(o.kvCacheEvents === true &&
        startupMs !== undefined && {
          PREFIX_ROUTER_TOKENIZER_WAIT_MS: String(Math.max(startupMs - TOKENIZER_WAIT_MARGIN_MS, startupMs / 2)),
        }),
      ...(endpointName !== undefined && { PREFIX_ROUTER_EMF_ENDPOINT_NAME: endpointName }),
      ...o.routerEnvironment,
    };
  }

  /**
   * The container's own start-up validation of these variables (lib/private/router-settings.ts): what would stop
   * the container on the instance fails synth, named by the prop that set it. Deploy-time values are left out.
   */
  private checkWithRouter(scope: Construct, problems: ProblemCollector): void {
    const router = loadRouterSettings();
    if (router === undefined) {
      Annotations.of(scope).addWarningV2(
        ROUTER_SETTINGS_UNCHECKED_WARNING,
        "The router sidecar's settings were not checked at synth: this installation of cdk-prefix-aware-llm carries no compiled router " +
          '(sidecar/dist). A bad policy or PREFIX_ROUTER_* value then stops the container only once the instances run.',
      );
      return;
    }
    // A routerEnvironment entry refused above (owned by a prop, or set by the container) is not reported twice.
    const given = this.options.routerEnvironment ?? {};
    const refused = [...OWNED_VARIABLES, ...CONTAINER_VARIABLES];
    const variables = Object.fromEntries(
      Object.entries(this.routerVariables()).filter(
        ([name, value]) => !(name in given && refused.includes(name)) && !Token.isUnresolved(value),
      ),
    );
    const check = router.checkContainerEnvironment(variables);
    for (const problem of check.problems) problems.add(propNamed(problem));
    const settable = router.CONTAINER_VARIABLES.filter(
      (name) => !OWNED_VARIABLES.includes(name) && !CONTAINER_VARIABLES.includes(name),
    );
    for (const name of check.unknownVariables) {
      problems.add(
        `image.routerEnvironment['${name}'] is not a variable the router or the container reads; allowed: ${settable.join(', ')} (got ${show(name)})`,
      );
    }
    for (const warning of check.warnings)
      Annotations.of(scope).addWarningV2(ROUTER_SETTING_DOUBTFUL_WARNING, propNamed(warning));
  }

  public bind(scope: Construct, grantee: iam.IGrantable, context: VllmImageBindContext = {}): VllmImageConfig {
    const o = this.options;
    const directory = o.buildContext ?? findSidecarBuildContext();
    if (directory === undefined)
      throw new Error(`image.buildContext: no directory with router/Dockerfile above ${__dirname}`);
    const fromSources = existsSync(join(directory, 'router', 'src'));
    const asset =
      (scope.node.tryFindChild('RouterSidecarImage') as ecrAssets.DockerImageAsset | undefined) ??
      new ecrAssets.DockerImageAsset(scope, 'RouterSidecarImage', {
        directory,
        file: 'router/Dockerfile',
        platform: ecrAssets.Platform.LINUX_AMD64,
        buildArgs:
          o.baseImage !== undefined || o.nodeImage !== undefined
            ? {
                ...(o.baseImage !== undefined ? { BASE_IMAGE: o.baseImage } : {}),
                ...(o.nodeImage !== undefined ? { NODE_IMAGE: o.nodeImage } : {}),
              }
            : undefined,
        // A checkout compiles its sources in the build stage; the npm package ships dist/ and no sources.
        exclude: fromSources ? [...ROUTER_SIDECAR_BUILD_EXCLUDES, 'dist'] : [...ROUTER_SIDECAR_BUILD_EXCLUDES],
        ignoreMode: IgnoreMode.GLOB,
      });
    grantScoped(grantee, { actions: ECR_PULL_ACTIONS, resources: [asset.repository.repositoryArn] });
    grantScoped(grantee, {
      actions: ECR_AUTH_ACTIONS,
      resources: ['*'],
      wildcardReason:
        'ecr:GetAuthorizationToken accepts no resource but *; it only issues a registry login, image access is limited to one repository by the pull statement.',
    });
    const environment = this.routerVariables(context);
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
