import {
  DescribeEndpointCommand,
  DescribeEndpointConfigCommand,
  DescribeModelCommand,
  type DescribeEndpointConfigCommandOutput,
  type DescribeEndpointCommandOutput,
  type ProductionVariantRoutingConfig,
  type SageMakerClient,
} from '@aws-sdk/client-sagemaker';
import { withThrottlingRetry, type Clock, type RetryPolicy } from './throttling-retry';

/**
 * What the tools need to know about a live endpoint before they send or change anything, read with
 * DescribeEndpoint / DescribeEndpointConfig / DescribeModel. Each failure says which of region, credentials,
 * endpoint name or endpoint state is wrong, so nothing is sent to a half-configured target.
 */
export class AwsSetupError extends Error {
  constructor(
    readonly reason:
      'region' | 'credentials' | 'not-found' | 'not-in-service' | 'access-denied' | 'unsupported' | 'network',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = 'AwsSetupError';
  }
}

export interface VariantFacts {
  readonly name: string;
  readonly instanceType: string | undefined;
  /** Instances now (CurrentInstanceCount; the config's initial count when DescribeEndpoint has none). */
  readonly instanceCount: number;
  readonly routing: ProductionVariantRoutingConfig | undefined;
  readonly modelName: string | undefined;
}

export interface EndpointFacts {
  readonly endpointName: string;
  readonly status: string;
  readonly configName: string;
  readonly endpoint: DescribeEndpointCommandOutput;
  readonly config: DescribeEndpointConfigCommandOutput;
  readonly variants: readonly VariantFacts[];
  /** MetricsConfig.MetricPublishFrequencyInSeconds of the config; SageMaker's default is 60. */
  readonly metricPublishSeconds: number;
}

export const DEFAULT_METRIC_PUBLISH_SECONDS = 60;

/** Resolves the SDK's region and credentials now, naming what is missing (the SDK's own errors do not say which flag to set). */
export async function checkRegionAndCredentials(
  config: { region: () => Promise<string>; credentials?: unknown },
  service: string,
): Promise<string> {
  let region: string;
  try {
    region = await config.region();
  } catch (err) {
    throw new AwsSetupError(
      'region',
      `no AWS region for ${service}: pass --region or set AWS_REGION (or a region in your AWS profile)`,
      { cause: err },
    );
  }
  if (!region)
    throw new AwsSetupError(
      'region',
      `no AWS region for ${service}: pass --region or set AWS_REGION (or a region in your AWS profile)`,
    );
  try {
    const provider = config.credentials as (() => Promise<unknown>) | undefined;
    if (typeof provider === 'function') await provider();
  } catch (err) {
    throw new AwsSetupError(
      'credentials',
      `no AWS credentials for ${service}: configure the default provider chain (AWS_PROFILE, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY, SSO, or an instance role) — ${(err as Error).message}`,
      { cause: err },
    );
  }
  return region;
}

/** A SageMaker answer that the named resource does not exist (ResourceNotFound, or a ValidationException saying so). */
export function isNotFound(err: unknown): boolean {
  const e = err as { name?: string; message?: string };
  return (
    e?.name === 'ResourceNotFound' ||
    ((e?.name === 'ValidationException' || e?.name === 'ValidationError') &&
      /could not find|not found|does not exist/i.test(e.message ?? ''))
  );
}

/** Error codes of a request that never got an answer (Node's socket and DNS errors). */
const NETWORK_CODES = [
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
];

/**
 * The cause, when `err` is a request that reached no AWS service (refused, reset, unresolvable, timed out), so
 * the message names the API that was being called instead of a bare `connect ECONNREFUSED`; undefined otherwise.
 */
export function networkFailure(err: unknown): string | undefined {
  const e = err as {
    name?: string;
    code?: string;
    message?: string;
    $metadata?: { httpStatusCode?: number };
    cause?: { code?: string };
  };
  if (e === null || typeof e !== 'object' || e.$metadata?.httpStatusCode !== undefined) return undefined;
  const code = e.code ?? e.cause?.code;
  if (code !== undefined && NETWORK_CODES.includes(code))
    return String(e.message ?? code).replace(/^AWS SDK error wrapper for (Error: )?/, '');
  if (e.name === 'TimeoutError' || e.name === 'RequestTimeout') return e.message ?? e.name;
  const text = NETWORK_CODES.find((c) => (e.message ?? '').includes(c));
  return text === undefined ? undefined : String(e.message).replace(/^AWS SDK error wrapper for (Error: )?/, '');
}

/** An AwsSetupError for a request that reached no service, naming the API; rethrows anything else. */
export function wrapNetworkError(err: unknown, api: string): never {
  const cause = networkFailure(err);
  if (cause !== undefined) {
    throw new AwsSetupError(
      'network',
      `could not reach AWS calling ${api}: ${cause} (check the network or proxy, --region, and AWS_ENDPOINT_URL_SAGEMAKER if set)`,
      { cause: err },
    );
  }
  throw err;
}

function mapDescribeError(err: unknown, what: string, api: string): never {
  if (isNotFound(err))
    throw new AwsSetupError(
      'not-found',
      `${what} does not exist in this account and region (check the name and --region)`,
      { cause: err },
    );
  const e = err as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } };
  if (e?.name === 'AccessDeniedException' || e?.$metadata?.httpStatusCode === 403) {
    throw new AwsSetupError(
      'access-denied',
      `not allowed to read ${what}: ${e.message ?? ''} (attach the policy in docs/validate.md)`,
      { cause: err },
    );
  }
  if (
    e?.name === 'CredentialsProviderError' ||
    e?.name === 'UnrecognizedClientException' ||
    e?.name === 'InvalidClientTokenId'
  ) {
    throw new AwsSetupError('credentials', `AWS credentials were refused reading ${what}: ${e.message ?? ''}`, {
      cause: err,
    });
  }
  return wrapNetworkError(err, `${api} (${what})`);
}

/** DescribeEndpoint + DescribeEndpointConfig (throttling retried); throws AwsSetupError('not-found') for an unknown endpoint. */
export async function describeEndpointFacts(
  sagemaker: SageMakerClient,
  endpointName: string,
  clock: Clock,
  retry?: RetryPolicy,
): Promise<EndpointFacts> {
  const endpoint = await withThrottlingRetry(
    `DescribeEndpoint ${endpointName}`,
    () => sagemaker.send(new DescribeEndpointCommand({ EndpointName: endpointName })),
    clock,
    retry,
  ).catch((err: unknown) => mapDescribeError(err, `endpoint '${endpointName}'`, 'DescribeEndpoint'));
  const configName = endpoint.EndpointConfigName ?? '';
  const config = await withThrottlingRetry(
    `DescribeEndpointConfig ${configName}`,
    () => sagemaker.send(new DescribeEndpointConfigCommand({ EndpointConfigName: configName })),
    clock,
    retry,
  ).catch((err: unknown) =>
    mapDescribeError(err, `endpoint configuration '${configName}' of '${endpointName}'`, 'DescribeEndpointConfig'),
  );
  const variants: VariantFacts[] = (config.ProductionVariants ?? []).map((v) => {
    const live = endpoint.ProductionVariants?.find((p) => p.VariantName === v.VariantName);
    return {
      name: v.VariantName ?? '',
      instanceType: v.InstanceType,
      instanceCount: live?.CurrentInstanceCount ?? live?.DesiredInstanceCount ?? v.InitialInstanceCount ?? 0,
      routing: v.RoutingConfig,
      modelName: v.ModelName,
    };
  });
  return {
    endpointName,
    status: endpoint.EndpointStatus ?? 'unknown',
    configName,
    endpoint,
    config,
    variants,
    metricPublishSeconds: config.MetricsConfig?.MetricPublishFrequencyInSeconds ?? DEFAULT_METRIC_PUBLISH_SECONDS,
  };
}

export function requireInService(facts: EndpointFacts): void {
  if (facts.status !== 'InService') {
    throw new AwsSetupError(
      'not-in-service',
      `endpoint '${facts.endpointName}' is ${facts.status}, not InService${facts.endpoint.FailureReason ? ` (${facts.endpoint.FailureReason})` : ''}; wait until it is InService (aws sagemaker wait endpoint-in-service --endpoint-name ${facts.endpointName})`,
    );
  }
}

/** Environment variables naming the served model, in the order the images read them (DLC, then LMI / TGI). */
const MODEL_ENV = ['SM_VLLM_SERVED_MODEL_NAME', 'SM_VLLM_MODEL', 'OPTION_MODEL_ID', 'HF_MODEL_ID'];

/** The model name vLLM serves, from the variant's SageMaker model environment; undefined when none is set. */
export async function servedModelName(
  sagemaker: SageMakerClient,
  modelName: string,
  clock: Clock,
  retry?: RetryPolicy,
): Promise<string | undefined> {
  const model = await withThrottlingRetry(
    `DescribeModel ${modelName}`,
    () => sagemaker.send(new DescribeModelCommand({ ModelName: modelName })),
    clock,
    retry,
  ).catch((err: unknown) => mapDescribeError(err, `model '${modelName}'`, 'DescribeModel'));
  return servedModelFromEnvironment(model.PrimaryContainer?.Environment ?? model.Containers?.[0]?.Environment ?? {});
}

/** The model name a container serves, from its environment (MODEL_ENV in order); undefined when none is set. */
export function servedModelFromEnvironment(env: Readonly<Record<string, string>>): string | undefined {
  for (const key of MODEL_ENV) if (env[key]) return env[key];
  return undefined;
}

/** A routing config as the report names it, e.g. `PREFIX_AWARE(prefixLength=8192,concurrencyThreshold=32)`. */
export function routingLabel(routing: ProductionVariantRoutingConfig | undefined): string {
  // Without a RoutingConfig SageMaker routes at random (AWS ML blog, "Minimize real-time inference latency…").
  if (routing?.RoutingStrategy === undefined) return 'RANDOM (default)';
  const p = routing.PrefixAwareRoutingConfig;
  if (routing.RoutingStrategy === 'PREFIX_AWARE' && p !== undefined) {
    return `PREFIX_AWARE(prefixLength=${p.PrefixLength},concurrencyThreshold=${p.ConcurrencyThreshold})`;
  }
  return routing.RoutingStrategy;
}

/**
 * GPUs per instance of SageMaker's GPU instance types (SageMaker pricing / EC2 accelerated-computing instance
 * pages). CloudWatch's GPUUtilization and GPUMemoryUtilization for an instance are the sum over its GPUs, 0–100 ×
 * GPUs (SageMaker's "Monitor with CloudWatch" metrics page), so a report divides by this to show a percentage.
 */
const GPUS_BY_INSTANCE_TYPE: Readonly<Record<string, number>> = {
  'ml.g5.xlarge': 1,
  'ml.g5.2xlarge': 1,
  'ml.g5.4xlarge': 1,
  'ml.g5.8xlarge': 1,
  'ml.g5.16xlarge': 1,
  'ml.g5.12xlarge': 4,
  'ml.g5.24xlarge': 4,
  'ml.g5.48xlarge': 8,
  'ml.g6.xlarge': 1,
  'ml.g6.2xlarge': 1,
  'ml.g6.4xlarge': 1,
  'ml.g6.8xlarge': 1,
  'ml.g6.16xlarge': 1,
  'ml.g6.12xlarge': 4,
  'ml.g6.24xlarge': 4,
  'ml.g6.48xlarge': 8,
  'ml.g6e.xlarge': 1,
  'ml.g6e.2xlarge': 1,
  'ml.g6e.4xlarge': 1,
  'ml.g6e.8xlarge': 1,
  'ml.g6e.16xlarge': 1,
  'ml.g6e.12xlarge': 4,
  'ml.g6e.24xlarge': 4,
  'ml.g6e.48xlarge': 8,
  'ml.p4d.24xlarge': 8,
  'ml.p4de.24xlarge': 8,
  'ml.p5.48xlarge': 8,
  'ml.p5e.48xlarge': 8,
  'ml.p5en.48xlarge': 8,
};

export function gpusPerInstance(instanceType: string | undefined): number | undefined {
  return instanceType === undefined ? undefined : GPUS_BY_INSTANCE_TYPE[instanceType];
}
