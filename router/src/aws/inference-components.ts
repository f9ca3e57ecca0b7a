import {
  DescribeInferenceComponentCommand,
  ListInferenceComponentsCommand,
  type DescribeInferenceComponentCommandOutput,
  type InferenceComponentSummary,
  type SageMakerClient,
} from '@aws-sdk/client-sagemaker';
import { AwsSetupError, servedModelFromEnvironment, servedModelName, type EndpointFacts } from './endpoint-facts';
import { withThrottlingRetry, type Clock, type RetryPolicy } from './throttling-retry';

/**
 * Inference components on a live endpoint, read-only. An endpoint that hosts components has an endpoint
 * configuration whose variant names no model (the variant gives instances, ManagedInstanceScaling and RoutingConfig);
 * each model, or LoRA adapter (a component whose BaseInferenceComponentName is another component,
 * https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-adapt.html), is a component created against
 * the endpoint and one production variant (API_CreateInferenceComponent.html: EndpointName, VariantName), with its
 * copies placed on that variant's instances and scaled by Application Auto Scaling on DesiredCopyCount.
 */
export async function listEndpointInferenceComponents(
  sagemaker: SageMakerClient,
  endpointName: string,
  clock: Clock,
  retry?: RetryPolicy,
): Promise<InferenceComponentSummary[]> {
  const out: InferenceComponentSummary[] = [];
  let nextToken: string | undefined;
  // Bounded: 100 pages of 100 is far beyond what one endpoint holds.
  for (let page = 0; page < 100; page++) {
    const answer = await withThrottlingRetry(
      `ListInferenceComponents ${endpointName}`,
      () =>
        sagemaker.send(
          new ListInferenceComponentsCommand({
            EndpointNameEquals: endpointName,
            MaxResults: 100,
            ...(nextToken !== undefined ? { NextToken: nextToken } : {}),
          }),
        ),
      clock,
      retry,
    );
    out.push(...(answer.InferenceComponents ?? []));
    nextToken = answer.NextToken;
    if (nextToken === undefined || nextToken === '') break;
  }
  return out;
}

/** True when the endpoint's configuration is the inference-component form: a variant that names no model. */
export function hostsInferenceComponents(facts: EndpointFacts): boolean {
  return facts.variants.some((v) => v.modelName === undefined);
}

/**
 * The A/B switch's refusal for an endpoint that hosts inference components, decided from reads alone, before any
 * CreateEndpointConfig or UpdateEndpoint. Why: the switch changes routing by deploying a copy of the configuration
 * with UpdateEndpoint, which "deploys the EndpointConfig … to a new fleet of instances … and then deletes the old
 * instances" (API_UpdateEndpoint.html), and restores the original the same way. Its invariant, "the endpoint ends
 * where it began", is checked on the endpoint's configuration, status and instance counts; the components on the
 * endpoint are separate resources whose copies live on those instances (their placement, and copy counts that
 * Application Auto Scaling moves, down to 0 with scale to zero), and the API references do not say that two fleet
 * replacements hand every component back with the copies it had. The switch cannot prove the invariant for them,
 * so it changes nothing and names `--shadow`: that mode (shadow-ab.ts) builds one shadow endpoint per strategy
 * with copies of the components and only reads the live endpoint, so the question never arises. --variants needs
 * a second variant, which components (bound to one VariantName) would not follow either.
 */
export async function refuseInferenceComponentEndpoint(
  sagemaker: SageMakerClient,
  facts: EndpointFacts,
  clock: Clock,
  retry?: RetryPolicy,
): Promise<void> {
  // Decided from the configuration already read: components exist only on an endpoint whose variant names no model,
  // so a model endpoint costs no extra call. The list only names them in the message; if it fails, the refusal stands.
  if (!hostsInferenceComponents(facts)) return;
  const components = await listEndpointInferenceComponents(sagemaker, facts.endpointName, clock, retry).catch(() => []);
  const names = components.map((c) => c.InferenceComponentName ?? '?');
  const listed =
    names.length === 0
      ? 'its configuration names no model on a variant (the inference-component form)'
      : `it hosts inference components (${names.slice(0, 5).join(', ')}${names.length > 5 ? `, … ${names.length} in all` : ''})`;
  throw new AwsSetupError(
    'unsupported',
    `ab cannot run on endpoint '${facts.endpointName}': ${listed}. ab switches routing with UpdateEndpoint, which replaces the instance fleet for each strategy and again to restore the original; the components' copies live on those instances, and SageMaker does not document that a fleet replacement gives every component back with the copies it had, so ab could not guarantee the endpoint ends where it began. Nothing was changed. Rerun with --shadow: it compares the strategies on shadow endpoints (a copy of the configuration and of every component per strategy, side by side, deleted afterwards) and only reads this endpoint; it costs one more fleet per strategy while it runs, shown before anything is created (docs/validate.md, "Endpoints with inference components: --shadow").`,
  );
}

/** What bench needs to know of the component it invokes: that it is on the endpoint and InService, and the model name its engine serves. */
export interface ComponentFacts {
  readonly name: string;
  readonly status: string;
  /** The base component, when this one is a LoRA adapter. */
  readonly baseComponent: string | undefined;
  /** The name to put in the body's `model`: the served model's for a base component, the component's own for an adapter. */
  readonly servedModel: string | undefined;
}

/** DescribeInferenceComponent, checked against the endpoint; AwsSetupError naming what is wrong. */
export async function describeComponentFacts(
  sagemaker: SageMakerClient,
  endpointName: string,
  componentName: string,
  clock: Clock,
  retry?: RetryPolicy,
): Promise<ComponentFacts> {
  let described: DescribeInferenceComponentCommandOutput;
  try {
    described = await withThrottlingRetry(
      `DescribeInferenceComponent ${componentName}`,
      () => sagemaker.send(new DescribeInferenceComponentCommand({ InferenceComponentName: componentName })),
      clock,
      retry,
    );
  } catch (err) {
    const e = err as { name?: string; message?: string };
    if (/could not find|not found|does not exist/i.test(e.message ?? '') || e.name === 'ResourceNotFound') {
      throw new AwsSetupError(
        'not-found',
        `inference component '${componentName}' does not exist in this account and region (check --inference-component and --region)`,
        { cause: err },
      );
    }
    throw err;
  }
  if (described.EndpointName !== endpointName) {
    throw new AwsSetupError(
      'not-found',
      `inference component '${componentName}' is on endpoint '${described.EndpointName ?? '?'}', not '${endpointName}'`,
    );
  }
  const status = described.InferenceComponentStatus ?? 'unknown';
  if (status !== 'InService') {
    throw new AwsSetupError(
      'not-in-service',
      `inference component '${componentName}' is ${status}, not InService${described.FailureReason ? ` (${described.FailureReason})` : ''}`,
    );
  }
  const spec = described.Specification;
  const baseComponent = spec?.BaseInferenceComponentName;
  let servedModel: string | undefined;
  if (baseComponent !== undefined) servedModel = componentName;
  else {
    servedModel = servedModelFromEnvironment(spec?.Container?.Environment ?? {});
    if (servedModel === undefined && spec?.ModelName !== undefined)
      servedModel = await servedModelName(sagemaker, spec.ModelName, clock, retry);
  }
  return { name: componentName, status, baseComponent, servedModel };
}
