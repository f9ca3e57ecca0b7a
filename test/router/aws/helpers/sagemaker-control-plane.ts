import { SAGEMAKER_NAME } from '../../../../router/src/aws/sagemaker-names';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type {
  CreateEndpointConfigCommandInput,
  DeploymentConfig,
  DescribeEndpointConfigCommandOutput,
} from '@aws-sdk/client-sagemaker';

/**
 * A stateful SageMaker control plane on 127.0.0.1 for tests: an HTTP server speaking the SageMaker JSON protocol
 * (awsJson1_1: `POST /`, `X-Amz-Target: SageMaker.<Operation>`, errors as `{"__type", "message"}`), reached by the
 * real `@aws-sdk/client-sagemaker` through `AWS_ENDPOINT_URL_SAGEMAKER` or the client's `endpoint` option.
 *
 * Time is virtual: one DescribeEndpoint is one step of the endpoint's state machine, so a deployment takes a fixed
 * number of polls however fast the tool polls, and a schedule of faults replays identically.
 *
 * Which documented behaviour each part encodes (SageMaker API reference, https://docs.aws.amazon.com/sagemaker/latest/APIReference/):
 * - API_DescribeEndpoint.html, EndpointStatus: OutOfService, Creating, Updating, SystemUpdating, RollingBack,
 *   InService, Deleting, Failed ("DeleteEndpoint is the only operation that can be performed on a failed
 *   endpoint"), UpdateRollbackFailed ("both the rolling deployment and auto-rollback failed; in service with a
 *   mix of the old and new endpoint configurations"); PendingDeploymentSummary is returned "only when the
 *   endpoint is creating or updating with a new endpoint configuration" (API_PendingDeploymentSummary.html).
 * - API_UpdateEndpoint.html: "you cannot update an endpoint with the current EndpointConfig" while an update runs:
 *   the service answers ValidationException "Cannot update in-progress endpoint"; SystemUpdating "cannot be updated
 *   or deleted or re-scaled until it has completed"; RetainAllVariantProperties keeps instance count and weight.
 * - API_RollingUpdatePolicy.html: MaximumBatchSize "must be between 5% to 50% of the variant's total instance
 *   count", WaitIntervalInSeconds 0–3600, MaximumExecutionTimeoutInSeconds 600–28,800; API_CapacitySize.html:
 *   INSTANCE_COUNT | CAPACITY_PERCENT, Value ≥ 1; API_BlueGreenUpdatePolicy.html: MaximumExecutionTimeoutInSeconds
 *   600–28,800. Rolling deployments need a single production variant (deployment-guardrails-rolling.html).
 * - API_DeleteEndpointConfig.html: deleting a configuration an endpoint uses is allowed by the API ("you must not
 *   delete an EndpointConfig in use by an endpoint that is live or while the UpdateEndpoint or CreateEndpoint
 *   operations are being performed"); here it is refused and recorded in `violations`, since the tool must never.
 * - API_CreateEndpointConfig.html: names `^[a-zA-Z0-9](-*[a-zA-Z0-9]){0,62}`, an existing name is refused;
 *   API_ProductionVariantRoutingConfig / API_PrefixAwareRoutingConfig (DESIGN.md): PrefixLength 1024–65536,
 *   ConcurrencyThreshold 1–1024.
 * - Application Auto Scaling changes CurrentInstanceCount while the endpoint serves (`autoscale` events): Updating
 *   ("UpdateEndpoint or UpdateEndpointWeightsAndCapacities is executing"), or RollingBack when the capacity change
 *   fails ("fails to scale up or down … rolling back to its previous configuration"), per API_DescribeEndpoint.
 * - Common errors (CommonErrors.html): ThrottlingException (400), InternalFailure / ServiceUnavailable (5xx),
 *   ExpiredTokenException (400) for expired session credentials; ResourceLimitExceeded (API_UpdateEndpoint errors).
 * - Inference components (API_CreateInferenceComponent.html, API_DescribeInferenceComponent.html,
 *   API_ListInferenceComponents.html, API_DeleteInferenceComponent.html): a component is created against an
 *   existing endpoint and one of its production variants, whose configuration names no model (the variant gives
 *   instances; each component its model, or an adapter on a BaseInferenceComponentName:
 *   https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-adapt.html); names follow
 *   `^[a-zA-Z0-9]([\-a-zA-Z0-9]*[a-zA-Z0-9])?$`, at most 63 characters, unique; InferenceComponentStatus is
 *   Creating → InService (or Failed), Deleting → gone, one step per DescribeInferenceComponent of it; RuntimeConfig
 *   reports DesiredCopyCount / CurrentCopyCount; ListInferenceComponents filters by EndpointNameEquals,
 *   VariantNameEquals and StatusEquals and pages with MaxResults (1–100) and NextToken.
 * - Shadow endpoints (`ab --shadow`, issue 29): any endpoint other than the live one that CreateEndpoint makes
 *   (API_CreateEndpoint.html: "the endpoint name must be unique within an AWS Region in your AWS account"; the
 *   configuration must exist; SageMaker "sets the endpoint status to Creating. After it creates the endpoint, it
 *   sets the status to InService"; ResourceLimitExceeded is one of its errors). An endpoint SageMaker cannot find
 *   instances for "fails to reach a running state" with an Insufficient Capacity error (AWS ML blog,
 *   "Capacity-aware inference: automatic instance fallback for SageMaker AI endpoints"): Creating → Failed with a
 *   FailureReason naming capacity (`insufficientCapacityAt`). DeleteEndpoint → Deleting → gone, one step per
 *   DescribeEndpoint of it. Every component is created against an existing endpoint and production variant
 *   (API_CreateInferenceComponent.html: "The name of an existing endpoint", "an existing production variant"), an
 *   adapter against an existing base component on the same endpoint ("Before you can create an adapter inference
 *   component, you must have an existing inference component that contains the foundation model",
 *   API_InferenceComponentSpecification.html); Describe returns the specification in its summary form (Container
 *   with DeployedImage.SpecifiedImage, API_InferenceComponentContainerSpecificationSummary.html). A component may
 *   end Failed with a FailureReason (API_DescribeInferenceComponent.html InferenceComponentStatus: InService |
 *   Creating | Updating | Failed | Deleting; `failingComponents`). Nothing here refuses deleting a base before its
 *   adapters or an endpoint before its components: no API page states either rule, so the fake does not invent it.
 * - Container credentials (AWS_CONTAINER_CREDENTIALS_FULL_URI, SDK reference "Container credential provider"):
 *   `GET /credentials` serves AccessKeyId/SecretAccessKey/Token/Expiration; a key the fake expired is refused with
 *   ExpiredTokenException, and the endpoint then serves a fresh key, so only a tool that re-resolves recovers.
 */
export const ENDPOINT_NAME = 'my-llm';
export const ORIGINAL_CONFIG = 'my-llm-config-abc123';
const ACCOUNT = '111122223333';
const REGION = 'us-east-1';
const TRANSITIONAL = new Set(['Creating', 'Updating', 'SystemUpdating', 'RollingBack']);

/** The endpoint's original configuration as DescribeEndpointConfig returns it. */
export function describedConfig(
  name = ORIGINAL_CONFIG,
  variants = 1,
  instanceCount = 2,
): DescribeEndpointConfigCommandOutput {
  const variant = (i: number) => ({
    VariantName: i === 0 ? 'AllTraffic' : `Variant${i + 1}`,
    ModelName: 'my-llm-model',
    InstanceType: 'ml.g6e.2xlarge' as const,
    InitialInstanceCount: instanceCount,
    InitialVariantWeight: 1,
    ContainerStartupHealthCheckTimeoutInSeconds: 1800,
    ModelDataDownloadTimeoutInSeconds: 1800,
    InferenceAmiVersion: 'al2023-ami-sagemaker-inference-gpu-4-1' as const,
    RoutingConfig:
      i === 0
        ? {
            RoutingStrategy: 'PREFIX_AWARE' as const,
            PrefixAwareRoutingConfig: { PrefixLength: 8192, ConcurrencyThreshold: 32 },
          }
        : { RoutingStrategy: 'RANDOM' as const },
  });
  return {
    $metadata: {},
    EndpointConfigName: name,
    EndpointConfigArn: `arn:aws:sagemaker:${REGION}:${ACCOUNT}:endpoint-config/${name}`,
    CreationTime: new Date(0),
    ProductionVariants: Array.from({ length: variants }, (_, i) => variant(i)),
    MetricsConfig: { EnableEnhancedMetrics: true, MetricPublishFrequencyInSeconds: 10 },
    EnableNetworkIsolation: false,
  };
}

/** How the n-th UpdateEndpoint ends. */
export type DeploymentOutcome =
  | 'ok'
  /** The new fleet fails; SageMaker rolls back to the previous configuration (InService on it, FailureReason set). */
  | 'rollback'
  /** Rollback fails too: UpdateRollbackFailed, serving a mix of both configurations. */
  | 'rollback-failed'
  /** Ends OutOfService on the new configuration. */
  | 'out-of-service'
  /** Ends Failed (only DeleteEndpoint is possible then). */
  | 'failed';

/** A fault answered instead of the request with this sequence number (1-based, every operation counted). */
export type FaultKind =
  | 'throttle'
  | 'server-error'
  /** The socket is destroyed before an answer. */
  | 'reset'
  /** The request is carried out, then the socket is destroyed (the caller cannot tell whether it happened). */
  | 'reset-after'
  /** The caller's access key expires now; the credentials endpoint serves a fresh one from now on. */
  | 'expire-credentials'
  | 'limit-exceeded'
  /** A ValidationException (a refusal the tool cannot retry its way past on the forward path). */
  | 'validation';

export interface ControlPlaneOptions {
  readonly variants?: number;
  readonly instanceCount?: number;
  /** DescribeEndpoint polls a deployment stays Updating. Default 2. */
  readonly pollsPerUpdate?: number;
  readonly lastDeploymentConfig?: DeploymentConfig;
  /** SM_VLLM_MODEL of the endpoint's model (what the emulators serve). */
  readonly servedModel?: string;
  /** Outcome of each UpdateEndpoint in order ('ok' when absent). */
  readonly outcomes?: readonly DeploymentOutcome[];
  readonly faults?: ReadonlyMap<number, FaultKind>;
  /**
   * At the given DescribeEndpoint tick, autoscaling sets the instance count: on an InService endpoint through
   * Updating (UpdateEndpointWeightsAndCapacities is executing; no PendingDeploymentSummary, as no configuration
   * changes), during a deployment by changing the count at once.
   */
  readonly autoscale?: ReadonlyMap<number, number>;
  /** The capacity change started at this tick fails: RollingBack, then InService at the old count. */
  readonly autoscaleFailsAt?: number;
  /** At the given tick (when InService), SageMaker maintenance: SystemUpdating for 2 ticks. */
  readonly systemUpdateAt?: number;
  /** At the given tick, someone else deletes the original configuration (the API allows it). */
  readonly deleteOriginalAt?: number;
  /** CreateEndpointConfig refuses a PREFIX_AWARE setting other than the deployed one (a setting the service rejects). */
  readonly refusePrefixAware?: boolean;
  /** Expiration the credentials endpoint reports. Default one day ahead. */
  readonly credentialsExpireAt?: Date;
  /**
   * The endpoint hosts inference components: its configuration's variants name no model, and these components
   * exist on it from the start, InService.
   */
  readonly inferenceComponents?: readonly FakeComponentInput[];
  /** The n-th CreateEndpoint of a shadow (1-based) ends Failed for insufficient capacity. */
  readonly insufficientCapacityAt?: ReadonlySet<number>;
  /** Components with these names end Failed instead of InService. */
  readonly failingComponents?: ReadonlySet<string>;
  /** DeleteInferenceComponent of these names answers InternalFailure until clearFaults (a cleanup that cannot finish). */
  readonly undeletableComponents?: ReadonlySet<string>;
}

/** An endpoint other than the live one (a shadow CreateEndpoint made). */
export interface ShadowEndpointState {
  readonly name: string;
  readonly config: string;
  status: 'Creating' | 'InService' | 'Failed' | 'Deleting';
  ticksLeft: number;
  readonly instances: number;
  failureReason: string | undefined;
  /** Ends Failed when Creating ends. */
  readonly fails: boolean;
}

/** A component as the fake starts with it (or CreateInferenceComponent makes it). */
export interface FakeComponentInput {
  readonly name: string;
  readonly variant?: string;
  /** The base component, for a LoRA adapter. */
  readonly base?: string;
  /** The container environment of a base component (SM_VLLM_SERVED_MODEL_NAME…). */
  readonly environment?: Readonly<Record<string, string>>;
  readonly copies?: number;
  /** The rest of the specification (ModelName, ComputeResourceRequirements, StartupParameters…), as created. */
  readonly specification?: Readonly<Record<string, unknown>>;
}

export interface ComponentState {
  readonly name: string;
  readonly endpoint: string;
  readonly variant: string;
  readonly base: string | undefined;
  readonly environment: Readonly<Record<string, string>> | undefined;
  status: 'Creating' | 'InService' | 'Updating' | 'Failed' | 'Deleting';
  ticksLeft: number;
  copies: number;
  /** The specification as CreateInferenceComponent received it (Container with Image). */
  readonly specification: Readonly<Record<string, unknown>>;
  failureReason?: string;
}

const COMPONENT_NAME = /^[a-zA-Z0-9]([-a-zA-Z0-9]*[a-zA-Z0-9])?$/;

export interface EndpointState {
  status: string;
  config: string;
  /** Every configuration the fleet runs now (two while UpdateRollbackFailed). */
  serving: string[];
  pending:
    | {
        config: string;
        ticksLeft: number;
        outcome: DeploymentOutcome;
        from: string;
        fromStatus?: string;
        fromServing?: string[];
      }
    | undefined;
  instances: number;
  failureReason: string | undefined;
  systemTicksLeft: number;
  /** An Application Auto Scaling capacity change in progress (UpdateEndpointWeightsAndCapacities). */
  scaling?: { to: number; fails: boolean };
}

export interface RequestRecord {
  readonly seq: number;
  readonly op: string;
  readonly input: Record<string, unknown>;
  /** The access key id that signed the request (SigV4 Credential scope). */
  key?: string;
  /** The error answered, when one was. */
  error?: string;
}

/** What DescribeInferenceComponent and ListInferenceComponents both answer about a component. */
function componentSummary(c: ComponentState): Record<string, unknown> {
  return {
    InferenceComponentName: c.name,
    InferenceComponentArn: `arn:aws:sagemaker:${REGION}:${ACCOUNT}:inference-component/${c.name}`,
    EndpointName: c.endpoint,
    EndpointArn: `arn:aws:sagemaker:${REGION}:${ACCOUNT}:endpoint/${c.endpoint}`,
    VariantName: c.variant,
    InferenceComponentStatus: c.status,
    CreationTime: new Date(0),
    LastModifiedTime: new Date(0),
  };
}

interface Fail {
  status: number;
  type: string;
  message: string;
}

const fail = (status: number, type: string, message: string): Fail => ({ status, type, message });

export class SageMakerControlPlane {
  readonly configs = new Map<string, DescribeEndpointConfigCommandOutput>();
  readonly requests: RequestRecord[] = [];
  /** Invariants the tool broke (deleting a configuration in use), in words. */
  readonly violations: string[] = [];
  readonly state: EndpointState;
  /** Called when a request arrives, before it is answered; may delay the answer (a signal test). */
  onRequest: ((record: RequestRecord) => Promise<void> | void) | undefined;
  ticks = 0;
  private seq = 0;
  private server: Server | undefined;
  private readonly expiredKeys = new Set<string>();
  private keyGeneration = 1;
  private updatesSeen = 0;
  private readonly faults: Map<number, FaultKind>;
  private calm = false;
  /** Inference components on the endpoint, by name. */
  readonly components = new Map<string, ComponentState>();
  /** Endpoints other than the live one, by name. */
  readonly shadowEndpoints = new Map<string, ShadowEndpointState>();
  private shadowCreates = 0;
  /** Names of the live endpoint's own resources at the start: its endpoint, configuration and components. */
  readonly liveNames: ReadonlySet<string>;

  constructor(readonly options: ControlPlaneOptions = {}) {
    const count = options.instanceCount ?? 2;
    const original = describedConfig(ORIGINAL_CONFIG, options.variants ?? 1, count);
    if (options.inferenceComponents !== undefined) {
      // The inference-component form: no model on the variant, instances scaled by ManagedInstanceScaling.
      original.ProductionVariants = original.ProductionVariants!.map(({ ModelName: _model, ...v }) => ({
        ...v,
        ManagedInstanceScaling: { Status: 'ENABLED', MinInstanceCount: 1, MaxInstanceCount: count },
      }));
      for (const c of options.inferenceComponents) {
        const specification = {
          ...(c.specification ?? {}),
          ...(c.base !== undefined ? { BaseInferenceComponentName: c.base } : {}),
          ...(c.environment !== undefined ? { Container: { Image: 'vllm', Environment: c.environment } } : {}),
        };
        this.components.set(c.name, {
          name: c.name,
          endpoint: ENDPOINT_NAME,
          variant: c.variant ?? 'AllTraffic',
          base: c.base,
          environment: c.environment,
          status: 'InService',
          ticksLeft: 0,
          copies: c.copies ?? 1,
          specification,
        });
      }
    }
    this.configs.set(ORIGINAL_CONFIG, original);
    this.state = {
      status: 'InService',
      config: ORIGINAL_CONFIG,
      serving: [ORIGINAL_CONFIG],
      pending: undefined,
      instances: count,
      failureReason: undefined,
      systemTicksLeft: 0,
    };
    this.faults = new Map(options.faults ?? []);
    this.liveNames = new Set([ENDPOINT_NAME, ORIGINAL_CONFIG, ...this.components.keys()]);
  }

  /** Every mutating request received (answered or not): Create*, Update*, Delete*. */
  mutations(): RequestRecord[] {
    return this.requests.filter((r) => /^(Create|Update|Delete)/.test(r.op));
  }

  /** Mutating requests that name one of the live endpoint's resources (endpoint, configuration, components). */
  mutationsOfLive(): RequestRecord[] {
    const named = (r: RequestRecord): unknown[] => [
      r.input.EndpointName,
      r.input.EndpointConfigName,
      r.input.InferenceComponentName,
      (r.input.Specification as { BaseInferenceComponentName?: string } | undefined)?.BaseInferenceComponentName,
    ];
    return this.mutations().filter((r) => named(r).some((n) => typeof n === 'string' && this.liveNames.has(n)));
  }

  /** Resources that exist now and are not the live endpoint's own. */
  extraResources(): string[] {
    return [
      ...[...this.components.keys()].filter((n) => !this.liveNames.has(n)),
      ...[...this.shadowEndpoints.keys()],
      ...this.copies(),
    ];
  }

  /**
   * The operator has fixed the cause (a test finishing by hand after the tool gave up): no more faults, scheduled
   * events (autoscaling, maintenance, deletions) or failing deployments.
   */
  clearFaults(): void {
    this.faults.clear();
    this.calm = true;
  }

  get url(): string {
    const address = this.server?.address() as AddressInfo | null;
    if (!address) throw new Error('control plane not started');
    return `http://127.0.0.1:${address.port}`;
  }

  get credentialsUrl(): string {
    return `${this.url}/credentials`;
  }

  /** The access key the credentials endpoint serves now. */
  get accessKeyId(): string {
    return `ASIAFAKE${String(this.keyGeneration).padStart(8, '0')}`;
  }

  async start(): Promise<this> {
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return this;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** Configurations whose name contains `-ab` (the copies a run creates). */
  copies(): string[] {
    return [...this.configs.keys()].filter((n) => n !== ORIGINAL_CONFIG);
  }

  updates(): RequestRecord[] {
    return this.requests.filter((r) => r.op === 'UpdateEndpoint' && r.error === undefined);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    if (req.method === 'GET' && req.url === '/credentials') {
      const expiration = this.options.credentialsExpireAt ?? new Date(Date.now() + 24 * 3600_000);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          AccessKeyId: this.accessKeyId,
          SecretAccessKey: 'fake-secret',
          Token: `token-${this.keyGeneration}`,
          Expiration: expiration.toISOString(),
        }),
      );
      return;
    }
    const target = String(req.headers['x-amz-target'] ?? '');
    const op = target.startsWith('SageMaker.') ? target.slice('SageMaker.'.length) : target;
    let input: Record<string, unknown> = {};
    try {
      input = chunks.length > 0 ? (JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>) : {};
    } catch {
      this.send(res, fail(400, 'SerializationException', 'body is not JSON'));
      return;
    }
    const record: RequestRecord = { seq: ++this.seq, op, input };
    this.requests.push(record);
    await this.onRequest?.(record);
    const key = /Credential=([^/]+)\//.exec(String(req.headers.authorization ?? ''))?.[1];
    record.key = key;
    const fault = this.faults.get(record.seq);
    if (fault === 'expire-credentials' && key !== undefined) {
      this.expiredKeys.add(key);
      this.keyGeneration++;
    }
    if (key !== undefined && this.expiredKeys.has(key))
      return this.answer(
        res,
        record,
        fail(400, 'ExpiredTokenException', 'The security token included in the request is expired'),
      );
    if (fault === 'throttle') return this.answer(res, record, fail(400, 'ThrottlingException', 'Rate exceeded'));
    if (fault === 'server-error')
      return this.answer(
        res,
        record,
        fail(500, 'InternalFailure', 'We encountered an internal error. Please try again.'),
      );
    if (fault === 'validation')
      return this.answer(
        res,
        record,
        fail(400, 'ValidationException', 'The request was refused (an injected ValidationException).'),
      );
    if (fault === 'limit-exceeded' && op === 'CreateEndpoint') {
      return this.answer(
        res,
        record,
        fail(
          400,
          'ResourceLimitExceeded',
          'The account-level service limit for ml.g6e.2xlarge for endpoint usage is 3 Instances',
        ),
      );
    }
    if (fault === 'limit-exceeded' && op === 'UpdateEndpoint') {
      return this.answer(
        res,
        record,
        fail(
          400,
          'ResourceLimitExceeded',
          'The account-level service limit for ml.g6e.2xlarge for endpoint usage is 3 Instances',
        ),
      );
    }
    if (fault === 'reset') {
      record.error = 'socket reset';
      req.socket.destroy();
      return;
    }
    let result: Record<string, unknown> | Fail;
    try {
      result = this.dispatch(op, input);
    } catch (err) {
      result = fail(500, 'InternalFailure', (err as Error).message);
    }
    if (fault === 'reset-after') {
      record.error = 'socket reset after the request took effect';
      req.socket.destroy();
      return;
    }
    this.answer(res, record, result);
  }

  private answer(res: ServerResponse, record: RequestRecord, result: Record<string, unknown> | Fail): void {
    if (isFail(result)) record.error = result.type;
    this.send(res, result);
  }

  private send(res: ServerResponse, result: Record<string, unknown> | Fail): void {
    const body = isFail(result) ? { __type: result.type, message: result.message } : result;
    res.writeHead(isFail(result) ? result.status : 200, {
      'content-type': 'application/x-amz-json-1.1',
      'x-amzn-requestid': `req-${this.seq}`,
    });
    // awsJson1_1 timestamps are epoch seconds (JSON.stringify would call Date.toJSON before a replacer sees the value).
    res.end(
      JSON.stringify(body, function (this: Record<string, unknown>, key: string, v: unknown) {
        const raw = this[key];
        return raw instanceof Date ? raw.getTime() / 1000 : v;
      }),
    );
  }

  private dispatch(op: string, input: Record<string, unknown>): Record<string, unknown> | Fail {
    switch (op) {
      case 'DescribeEndpoint':
        if (input.EndpointName !== ENDPOINT_NAME) return this.describeShadow(String(input.EndpointName));
        return this.describeEndpoint(String(input.EndpointName));
      case 'DescribeEndpointConfig': {
        const c = this.configs.get(String(input.EndpointConfigName));
        return c === undefined
          ? fail(
              400,
              'ValidationException',
              `Could not find endpoint configuration "${String(input.EndpointConfigName)}".`,
            )
          : stripMetadata(c);
      }
      case 'DescribeModel':
        return {
          ModelName: input.ModelName,
          ModelArn: `arn:aws:sagemaker:${REGION}:${ACCOUNT}:model/${String(input.ModelName)}`,
          CreationTime: new Date(0),
          PrimaryContainer: {
            Image: 'vllm',
            Environment: { SM_VLLM_MODEL: this.options.servedModel ?? 'tiny-emulated-model' },
          },
        };
      case 'CreateEndpointConfig':
        return this.createConfig(input as unknown as CreateEndpointConfigCommandInput);
      case 'DeleteEndpointConfig':
        return this.deleteConfig(String(input.EndpointConfigName));
      case 'ListEndpointConfigs': {
        const contains = input.NameContains === undefined ? '' : String(input.NameContains);
        return {
          EndpointConfigs: [...this.configs.values()]
            .filter((c) => c.EndpointConfigName!.includes(contains))
            .map((c) => ({
              EndpointConfigName: c.EndpointConfigName,
              EndpointConfigArn: c.EndpointConfigArn,
              CreationTime: c.CreationTime,
            })),
        };
      }
      case 'UpdateEndpoint':
        return this.updateEndpoint(input);
      case 'CreateInferenceComponent':
        return this.createComponent(input);
      case 'DescribeInferenceComponent':
        return this.describeComponent(String(input.InferenceComponentName));
      case 'ListInferenceComponents':
        return this.listComponents(input);
      case 'DeleteInferenceComponent': {
        const c = this.components.get(String(input.InferenceComponentName));
        if (c !== undefined && !this.calm && this.options.undeletableComponents?.has(c.name))
          return fail(500, 'InternalFailure', 'We encountered an internal error. Please try again.');
        if (c === undefined)
          return fail(
            400,
            'ValidationException',
            `Could not find inference component "${String(input.InferenceComponentName)}".`,
          );
        if (c.status === 'Creating' || c.status === 'Updating')
          return fail(400, 'ValidationException', `Cannot delete inference component while it is ${c.status}.`);
        c.status = 'Deleting';
        c.ticksLeft = 1;
        return {};
      }
      case 'DeleteEndpoint':
        if (input.EndpointName !== ENDPOINT_NAME) return this.deleteShadow(String(input.EndpointName));
        if (this.state.status === 'Gone' || input.EndpointName !== ENDPOINT_NAME)
          return fail(400, 'ValidationException', `Could not find endpoint "${String(input.EndpointName)}".`);
        if (TRANSITIONAL.has(this.state.status))
          return fail(400, 'ValidationException', `Cannot delete endpoint while it is ${this.state.status}.`);
        Object.assign(this.state, {
          status: 'Deleting',
          pending: undefined,
          serving: [],
          failureReason: undefined,
          systemTicksLeft: 0,
        });
        return {};
      case 'CreateEndpoint': {
        if (input.EndpointName !== ENDPOINT_NAME) return this.createShadow(input);
        if (this.state.status !== 'Gone')
          return fail(
            400,
            'ValidationException',
            `Cannot create already existing endpoint "${String(input.EndpointName)}".`,
          );
        const config = this.configs.get(String(input.EndpointConfigName));
        if (config === undefined)
          return fail(
            400,
            'ValidationException',
            `Could not find endpoint configuration "${String(input.EndpointConfigName)}".`,
          );
        Object.assign(this.state, {
          status: 'Creating',
          config: input.EndpointConfigName,
          serving: [],
          instances: config.ProductionVariants?.[0]?.InitialInstanceCount ?? 1,
        });
        this.state.pending = {
          config: String(input.EndpointConfigName),
          ticksLeft: this.options.pollsPerUpdate ?? 2,
          outcome: 'ok',
          from: String(input.EndpointConfigName),
        };
        return { EndpointArn: `arn:aws:sagemaker:${REGION}:${ACCOUNT}:endpoint/${ENDPOINT_NAME}` };
      }
      default:
        return fail(400, 'UnknownOperationException', `the fake does not implement ${op}`);
    }
  }

  /** One tick of virtual time: deployments, maintenance and autoscaling move on. */
  private tick(): void {
    this.ticks++;
    const s = this.state;
    if (this.calm) return this.advanceDeployment();
    if (s.scaling !== undefined) return this.advanceScaling();
    const scaled = this.options.autoscale?.get(this.ticks);
    if (scaled !== undefined && s.status === 'InService' && s.pending === undefined && s.systemTicksLeft === 0) {
      s.scaling = { to: scaled, fails: this.options.autoscaleFailsAt === this.ticks };
      s.status = 'Updating';
      return;
    }
    if (scaled !== undefined && s.pending !== undefined) s.instances = scaled;
    if (this.options.deleteOriginalAt === this.ticks) this.configs.delete(ORIGINAL_CONFIG);
    if (s.systemTicksLeft > 0) {
      if (--s.systemTicksLeft === 0) s.status = 'InService';
      return;
    }
    if (this.options.systemUpdateAt === this.ticks && s.status === 'InService' && s.pending === undefined) {
      s.status = 'SystemUpdating';
      s.systemTicksLeft = 2;
      return;
    }
    this.advanceDeployment();
  }

  private advanceScaling(): void {
    const s = this.state;
    const sc = s.scaling!;
    if (s.status === 'Updating' && sc.fails && !this.calm) {
      s.status = 'RollingBack';
      return;
    }
    if (s.status === 'Updating') s.instances = sc.to;
    s.status = 'InService';
    s.scaling = undefined;
  }

  private advanceDeployment(): void {
    const s = this.state;
    if (s.scaling !== undefined) return this.advanceScaling();
    if (s.systemTicksLeft > 0 && --s.systemTicksLeft === 0) s.status = 'InService';
    const p = s.pending;
    if (p === undefined) return;
    if (p.ticksLeft-- > 0) return;
    s.pending = undefined;
    switch (p.outcome) {
      case 'ok':
        s.status = 'InService';
        s.config = p.config;
        s.serving = [p.config];
        s.failureReason = undefined;
        break;
      case 'rollback':
        // Back to the fleet as it was before this update (a mixed fleet stays mixed, an out-of-service one out of service).
        s.status =
          p.fromStatus === 'UpdateRollbackFailed' || p.fromStatus === 'OutOfService' ? p.fromStatus : 'InService';
        s.serving = p.fromServing ?? s.serving;
        s.failureReason = 'The new fleet failed its health checks; the deployment was rolled back.';
        break;
      case 'rollback-failed':
        s.status = 'UpdateRollbackFailed';
        s.config = p.config;
        s.serving = [...new Set([p.from, p.config])];
        s.failureReason = 'Both the rolling deployment and its auto-rollback failed.';
        break;
      case 'out-of-service':
        s.status = 'OutOfService';
        s.config = p.config;
        s.serving = [p.config];
        s.failureReason = 'The endpoint is out of service.';
        break;
      case 'failed':
        s.status = 'Failed';
        s.config = p.config;
        s.serving = [p.config];
        s.failureReason = 'The endpoint failed to update.';
        break;
    }
  }

  private describeEndpoint(name: string): Record<string, unknown> | Fail {
    if (name !== ENDPOINT_NAME || this.state.status === 'Gone')
      return fail(400, 'ValidationException', `Could not find endpoint "${name}".`);
    this.tick();
    if (this.state.status === 'Deleting') {
      // DeleteEndpoint takes one tick; then the endpoint no longer exists.
      this.state.status = 'Gone';
      return fail(400, 'ValidationException', `Could not find endpoint "${name}".`);
    }
    const s = this.state;
    const current = this.configs.get(s.config) ?? describedConfig(s.config, this.options.variants ?? 1);
    return {
      EndpointName: ENDPOINT_NAME,
      EndpointArn: `arn:aws:sagemaker:${REGION}:${ACCOUNT}:endpoint/${ENDPOINT_NAME}`,
      EndpointConfigName: s.config,
      EndpointStatus: s.status,
      FailureReason: s.failureReason,
      CreationTime: new Date(0),
      LastModifiedTime: new Date(0),
      LastDeploymentConfig: this.options.lastDeploymentConfig,
      ProductionVariants: (current.ProductionVariants ?? []).map((v) => ({
        VariantName: v.VariantName,
        CurrentInstanceCount: s.instances,
        DesiredInstanceCount: s.instances,
        CurrentWeight: 1,
        DesiredWeight: 1,
      })),
      PendingDeploymentSummary:
        s.pending === undefined
          ? undefined
          : {
              EndpointConfigName: s.pending.config,
              StartTime: new Date(0),
              ProductionVariants: [{ VariantName: 'AllTraffic', CurrentInstanceCount: s.instances }],
            },
    };
  }

  private createConfig(input: CreateEndpointConfigCommandInput): Record<string, unknown> | Fail {
    const name = input.EndpointConfigName ?? '';
    if (!SAGEMAKER_NAME.test(name))
      return fail(
        400,
        'ValidationException',
        `1 validation error detected: Value '${name}' at 'endpointConfigName' failed to satisfy constraint`,
      );
    if (this.configs.has(name))
      return fail(
        400,
        'ValidationException',
        `Cannot create already existing endpoint configuration "arn:aws:sagemaker:${REGION}:${ACCOUNT}:endpoint-config/${name}".`,
      );
    for (const v of input.ProductionVariants ?? []) {
      const r = v.RoutingConfig;
      if (r?.RoutingStrategy === 'PREFIX_AWARE') {
        const p = r.PrefixAwareRoutingConfig;
        const deployed = describedConfig().ProductionVariants![0].RoutingConfig!.PrefixAwareRoutingConfig!;
        if (
          this.options.refusePrefixAware &&
          (p?.PrefixLength !== deployed.PrefixLength || p?.ConcurrencyThreshold !== deployed.ConcurrencyThreshold)
        ) {
          return fail(
            400,
            'ValidationException',
            `PrefixAwareRoutingConfig PrefixLength ${p?.PrefixLength} is not supported for this endpoint.`,
          );
        }
        const ok = p !== undefined && inRange(p.PrefixLength, 1024, 65536) && inRange(p.ConcurrencyThreshold, 1, 1024);
        if (!ok)
          return fail(
            400,
            'ValidationException',
            'PrefixAwareRoutingConfig requires PrefixLength 1024-65536 and ConcurrencyThreshold 1-1024.',
          );
      }
    }
    const arn = `arn:aws:sagemaker:${REGION}:${ACCOUNT}:endpoint-config/${name}`;
    this.configs.set(name, {
      $metadata: {},
      ...input,
      EndpointConfigArn: arn,
      CreationTime: new Date(1000),
    });
    return { EndpointConfigArn: arn };
  }

  private inUse(name: string): boolean {
    const s = this.state;
    if ([...this.shadowEndpoints.values()].some((e) => e.config === name)) return true;
    return s.serving.includes(name) || s.config === name || s.pending?.config === name;
  }

  private deleteConfig(name: string): Record<string, unknown> | Fail {
    if (!this.configs.has(name))
      return fail(400, 'ValidationException', `Could not find endpoint configuration "${name}".`);
    if (this.inUse(name)) {
      this.violations.push(
        `DeleteEndpointConfig ${name} while the endpoint used it (status ${this.state.status}, on ${this.state.serving.join(' + ')}${this.state.pending ? `, deploying ${this.state.pending.config}` : ''})`,
      );
      return fail(
        400,
        'ValidationException',
        `endpoint configuration "${name}" is in use by endpoint "${ENDPOINT_NAME}" (refused by the test fake: the tool must never delete it)`,
      );
    }
    this.configs.delete(name);
    return {};
  }

  private updateEndpoint(input: Record<string, unknown>): Record<string, unknown> | Fail {
    const s = this.state;
    if (input.EndpointName !== ENDPOINT_NAME)
      return fail(400, 'ValidationException', `Could not find endpoint "${String(input.EndpointName)}".`);
    if (s.status === 'Failed')
      return fail(
        400,
        'ValidationException',
        'Cannot update a failed endpoint; DeleteEndpoint is the only operation allowed.',
      );
    if (s.status === 'SystemUpdating')
      return fail(
        400,
        'ValidationException',
        'Cannot update endpoint while it is undergoing system maintenance (SystemUpdating).',
      );
    if (!['InService', 'UpdateRollbackFailed', 'OutOfService'].includes(s.status))
      return fail(400, 'ValidationException', 'Cannot update in-progress endpoint');
    const configName = String(input.EndpointConfigName);
    const config = this.configs.get(configName);
    if (config === undefined)
      return fail(400, 'ValidationException', `Could not find endpoint configuration "${configName}".`);
    const problem = this.deploymentProblem(input.DeploymentConfig as DeploymentConfig | undefined, config);
    if (problem !== undefined) return fail(400, 'ValidationException', problem);
    const outcome = this.calm ? 'ok' : (this.options.outcomes?.[this.updatesSeen] ?? 'ok');
    this.updatesSeen++;
    s.pending = {
      config: configName,
      ticksLeft: this.options.pollsPerUpdate ?? 2,
      outcome,
      from: s.config,
      fromStatus: s.status,
      fromServing: [...s.serving],
    };
    s.status = 'Updating';
    s.failureReason = undefined;
    if (input.RetainAllVariantProperties !== true)
      s.instances = config.ProductionVariants?.[0]?.InitialInstanceCount ?? s.instances;
    return { EndpointArn: `arn:aws:sagemaker:${REGION}:${ACCOUNT}:endpoint/${ENDPOINT_NAME}` };
  }

  /** The configuration of an endpoint that exists and is InService, or why a component cannot be created on it. */
  private endpointForComponent(name: string): DescribeEndpointConfigCommandOutput | Fail {
    const shadow = this.shadowEndpoints.get(name);
    if (name === ENDPOINT_NAME && this.state.status !== 'Gone') {
      if (this.state.status !== 'InService')
        return fail(
          400,
          'ValidationException',
          `Endpoint "${name}" is ${this.state.status}; inference components are created on an endpoint that is InService.`,
        );
      return this.configs.get(this.state.config) ?? describedConfig(this.state.config);
    }
    if (shadow === undefined) return fail(400, 'ValidationException', `Could not find endpoint "${name}".`);
    if (shadow.status !== 'InService')
      return fail(
        400,
        'ValidationException',
        `Endpoint "${name}" is ${shadow.status}; inference components are created on an endpoint that is InService.`,
      );
    return (
      this.configs.get(shadow.config) ??
      fail(400, 'ValidationException', `Could not find endpoint configuration "${shadow.config}".`)
    );
  }

  private createComponent(input: Record<string, unknown>): Record<string, unknown> | Fail {
    const name = String(input.InferenceComponentName ?? '');
    if (name.length > 63 || !COMPONENT_NAME.test(name))
      return fail(
        400,
        'ValidationException',
        `1 validation error detected: Value '${name}' at 'inferenceComponentName' failed to satisfy constraint`,
      );
    if (this.components.has(name))
      return fail(400, 'ValidationException', `Cannot create already existing inference component "${name}".`);
    const endpointName = String(input.EndpointName);
    const config = this.endpointForComponent(endpointName);
    if (isFail(config)) return config;
    const variantName = String(input.VariantName ?? '');
    const variant = config.ProductionVariants?.find((v) => v.VariantName === variantName);
    if (variant === undefined)
      return fail(400, 'ValidationException', `Could not find variant "${variantName}" on endpoint "${endpointName}".`);
    if (variant.ModelName !== undefined)
      return fail(
        400,
        'ValidationException',
        `Variant "${variantName}" hosts model "${variant.ModelName}"; inference components need a variant whose configuration names no model.`,
      );
    const spec = (input.Specification ?? {}) as {
      BaseInferenceComponentName?: string;
      Container?: { Environment?: Record<string, string> };
    };
    if (spec.BaseInferenceComponentName !== undefined) {
      const base = this.components.get(spec.BaseInferenceComponentName);
      if (base === undefined || base.endpoint !== endpointName)
        return fail(
          400,
          'ValidationException',
          `Could not find base inference component "${spec.BaseInferenceComponentName}".`,
        );
    }
    const copies = Number(
      (input.RuntimeConfig as { CopyCount?: number } | undefined)?.CopyCount ??
        (spec.BaseInferenceComponentName !== undefined ? 0 : 1),
    );
    this.components.set(name, {
      name,
      endpoint: endpointName,
      variant: variantName,
      base: spec.BaseInferenceComponentName,
      environment: spec.Container?.Environment,
      status: 'Creating',
      ticksLeft: this.options.pollsPerUpdate ?? 2,
      copies,
      specification: spec,
    });
    return { InferenceComponentArn: `arn:aws:sagemaker:${REGION}:${ACCOUNT}:inference-component/${name}` };
  }

  private describeComponent(name: string): Record<string, unknown> | Fail {
    const c = this.components.get(name);
    if (c === undefined) return fail(400, 'ValidationException', `Could not find inference component "${name}".`);
    if (c.ticksLeft > 0 && --c.ticksLeft === 0) {
      if (c.status === 'Deleting') {
        this.components.delete(name);
        return fail(400, 'ValidationException', `Could not find inference component "${name}".`);
      }
      if (this.options.failingComponents?.has(name) && !this.calm) {
        c.status = 'Failed';
        c.failureReason = 'The model container failed its health check.';
      } else c.status = 'InService';
    }
    const { Container, ...spec } = c.specification as {
      Container?: { Image?: string; ArtifactUrl?: string; Environment?: Record<string, string> };
    };
    return {
      ...componentSummary(c),
      ...(c.failureReason !== undefined ? { FailureReason: c.failureReason } : {}),
      Specification: {
        ...spec,
        ...(Container !== undefined
          ? {
              Container: {
                ...(Container.Image !== undefined
                  ? { DeployedImage: { SpecifiedImage: Container.Image, ResolvedImage: `${Container.Image}@sha256:0` } }
                  : {}),
                ...(Container.ArtifactUrl !== undefined ? { ArtifactUrl: Container.ArtifactUrl } : {}),
                ...(Container.Environment !== undefined ? { Environment: Container.Environment } : {}),
              },
            }
          : {}),
      },
      RuntimeConfig: { DesiredCopyCount: c.copies, CurrentCopyCount: c.status === 'InService' ? c.copies : 0 },
    };
  }

  private createShadow(input: Record<string, unknown>): Record<string, unknown> | Fail {
    const name = String(input.EndpointName ?? '');
    if (!SAGEMAKER_NAME.test(name))
      return fail(
        400,
        'ValidationException',
        `1 validation error detected: Value '${name}' at 'endpointName' failed to satisfy constraint`,
      );
    if (this.shadowEndpoints.has(name))
      return fail(
        400,
        'ValidationException',
        `Cannot create already existing endpoint "arn:aws:sagemaker:${REGION}:${ACCOUNT}:endpoint/${name}".`,
      );
    const configName = String(input.EndpointConfigName);
    const config = this.configs.get(configName);
    if (config === undefined)
      return fail(400, 'ValidationException', `Could not find endpoint configuration "${configName}".`);
    this.shadowCreates++;
    const fails = !this.calm && (this.options.insufficientCapacityAt?.has(this.shadowCreates) ?? false);
    const instances = (config.ProductionVariants ?? []).reduce((n, v) => n + (v.InitialInstanceCount ?? 0), 0);
    this.shadowEndpoints.set(name, {
      name,
      config: configName,
      status: 'Creating',
      ticksLeft: this.options.pollsPerUpdate ?? 2,
      instances,
      failureReason: undefined,
      fails,
    });
    return { EndpointArn: `arn:aws:sagemaker:${REGION}:${ACCOUNT}:endpoint/${name}` };
  }

  private describeShadow(name: string): Record<string, unknown> | Fail {
    const e = this.shadowEndpoints.get(name);
    if (e === undefined) return fail(400, 'ValidationException', `Could not find endpoint "${name}".`);
    if (e.ticksLeft > 0 && --e.ticksLeft === 0) {
      if (e.status === 'Deleting') {
        this.shadowEndpoints.delete(name);
        return fail(400, 'ValidationException', `Could not find endpoint "${name}".`);
      }
      if (e.fails) {
        e.status = 'Failed';
        e.failureReason =
          'Insufficient capacity to provision ml.g6e.2xlarge instances for the endpoint (InsufficientCapacity).';
      } else e.status = 'InService';
    }
    const config = this.configs.get(e.config);
    return {
      EndpointName: name,
      EndpointArn: `arn:aws:sagemaker:${REGION}:${ACCOUNT}:endpoint/${name}`,
      EndpointConfigName: e.config,
      EndpointStatus: e.status,
      FailureReason: e.failureReason,
      CreationTime: new Date(0),
      LastModifiedTime: new Date(0),
      ProductionVariants: (config?.ProductionVariants ?? []).map((v) => ({
        VariantName: v.VariantName,
        CurrentInstanceCount: e.status === 'InService' ? v.InitialInstanceCount : 0,
        DesiredInstanceCount: v.InitialInstanceCount,
      })),
    };
  }

  private deleteShadow(name: string): Record<string, unknown> | Fail {
    const e = this.shadowEndpoints.get(name);
    if (e === undefined) return fail(400, 'ValidationException', `Could not find endpoint "${name}".`);
    if (e.status === 'Creating')
      return fail(400, 'ValidationException', `Cannot delete endpoint while it is ${e.status}.`);
    e.status = 'Deleting';
    e.ticksLeft = 1;
    return {};
  }

  private listComponents(input: Record<string, unknown>): Record<string, unknown> | Fail {
    const max = input.MaxResults === undefined ? 10 : Number(input.MaxResults);
    if (!inRange(max, 1, 100)) return fail(400, 'ValidationException', 'MaxResults must be between 1 and 100.');
    const start = input.NextToken === undefined ? 0 : Number(input.NextToken);
    const all = [...this.components.values()].filter(
      (c) =>
        (input.EndpointNameEquals === undefined || c.endpoint === input.EndpointNameEquals) &&
        (input.VariantNameEquals === undefined || c.variant === input.VariantNameEquals) &&
        (input.StatusEquals === undefined || c.status === input.StatusEquals),
    );
    const page = all.slice(start, start + max);
    return {
      InferenceComponents: page.map(componentSummary),
      ...(start + max < all.length ? { NextToken: String(start + max) } : {}),
    };
  }

  /** The documented limits of a DeploymentConfig against the fleet as it is now. */
  private deploymentProblem(
    dc: DeploymentConfig | undefined,
    config: DescribeEndpointConfigCommandOutput,
  ): string | undefined {
    if (dc === undefined) return undefined;
    const rolling = dc.RollingUpdatePolicy;
    if (rolling !== undefined) {
      if ((config.ProductionVariants ?? []).length > 1)
        return 'Rolling deployment is not supported for endpoints with more than one production variant.';
      const n = this.state.instances;
      const batch = rolling.MaximumBatchSize;
      if (batch === undefined) return 'RollingUpdatePolicy.MaximumBatchSize is required.';
      if (!inRange(batch.Value, 1, Infinity)) return 'CapacitySize.Value must be at least 1.';
      const fraction = batch.Type === 'CAPACITY_PERCENT' ? batch.Value! / 100 : batch.Value! / n;
      if (fraction < 0.05 || fraction > 0.5) {
        return `MaximumBatchSize ${batch.Type} ${batch.Value} must be between 5% and 50% of the variant's total instance count (${n}).`;
      }
      if (!inRange(rolling.WaitIntervalInSeconds, 0, 3600)) return 'WaitIntervalInSeconds must be 0-3600.';
      if (
        rolling.MaximumExecutionTimeoutInSeconds !== undefined &&
        !inRange(rolling.MaximumExecutionTimeoutInSeconds, 600, 28_800)
      )
        return 'MaximumExecutionTimeoutInSeconds must be 600-28800.';
    }
    const bg = dc.BlueGreenUpdatePolicy;
    if (
      bg?.MaximumExecutionTimeoutInSeconds !== undefined &&
      !inRange(bg.MaximumExecutionTimeoutInSeconds, 600, 28_800)
    )
      return 'MaximumExecutionTimeoutInSeconds must be 600-28800.';
    return undefined;
  }

  /**
   * True when the endpoint is where it began: InService on the original configuration, nothing pending, no copy
   * left. SageMaker's own maintenance (SystemUpdating, which "does not change any customer-specified values") on
   * the original configuration counts as where it began, and so does autoscaling's capacity change.
   */
  restored(): boolean {
    const s = this.state;
    // Autoscaling's own capacity change (Updating / RollingBack without a configuration change) is the endpoint's own.
    const own =
      (s.status === 'SystemUpdating' && s.systemTicksLeft > 0) ||
      ((s.status === 'Updating' || s.status === 'RollingBack') && s.scaling !== undefined);
    return (
      (s.status === 'InService' || own) &&
      s.config === ORIGINAL_CONFIG &&
      s.pending === undefined &&
      s.serving.length === 1 &&
      this.copies().length === 0 &&
      this.configs.has(ORIGINAL_CONFIG)
    );
  }
}

function isFail(x: unknown): x is Fail {
  return typeof x === 'object' && x !== null && 'type' in x && 'status' in x && 'message' in x;
}

function inRange(v: number | undefined, min: number, max: number): boolean {
  return typeof v === 'number' && Number.isInteger(v) && v >= min && v <= max;
}

function stripMetadata(c: DescribeEndpointConfigCommandOutput): Record<string, unknown> {
  const { $metadata: _m, ...rest } = c;
  return rest;
}
