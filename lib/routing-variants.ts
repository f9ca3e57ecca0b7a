import { aws_iam as iam, aws_sagemaker as sagemaker, Stack } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { grantScoped } from './private/grants';
import { flushWildcardAcknowledgements } from './private/nag-acknowledgements';
import {
  AB_TESTING_CLOUDWATCH_READ_ACTIONS,
  AB_TESTING_CONFIG_ACTIONS,
  AB_TESTING_ENDPOINT_ACTIONS,
  AB_TESTING_MODEL_READ_ACTIONS,
  INVOKE_ENDPOINT_ACTIONS,
} from './private/iam-actions';
import { ProblemCollector, show } from './private/validation';
import { RoutingStrategy } from './routing-strategy';

/**
 * Extra production variants for comparing routing strategies under identical conditions at the same time
 * (`prefix-router ab --variants`): each is a copy of the endpoint's main variant — same model, instance type,
 * instance count, timeouts — that differs only in `RoutingConfig`. Routing is configured per variant, and a
 * client picks one with `TargetVariant`, so one workload can be split between them.
 *
 * Cost: every variant is a full fleet; two variants of N instances bill 2N instances.
 */
export interface RoutingVariant {
  /**
   * Production variant name (`TargetVariant` in requests). 1–63 letters, digits or hyphens, starting and ending
   * with a letter or digit; not the main variant's name.
   */
  readonly variantName: string;
  /** Routing of this variant. */
  readonly routing: RoutingStrategy;
}

/** Checks the extra variants; `mainVariantName` is taken. */
export function validateRoutingVariants(
  variants: readonly RoutingVariant[] | undefined,
  context: { mainVariantName: string; hasAutoScaling: boolean; deploymentStyle: string; deploymentGiven: boolean },
  problems: ProblemCollector,
): void {
  if (variants === undefined || variants.length === 0) return;
  // SageMaker allows up to 10 production variants per endpoint configuration.
  if (variants.length > 9)
    problems.add(
      `routingVariants must hold at most 9 variants (10 production variants in all) (got ${variants.length})`,
    );
  const seen = new Set<string>([context.mainVariantName]);
  variants.forEach((v, i) => {
    const name = v.variantName;
    const refused = problems.sageMakerName(`routingVariants[${i}].variantName`, name);
    if (!refused && seen.has(name)) {
      problems.add(
        `routingVariants[${i}].variantName must differ from the other variant names (${[...seen].join(', ')}) (got ${show(name)})`,
      );
    }
    seen.add(name);
    const sub = new ProblemCollector();
    v.routing._validate(sub);
    for (const p of sub.list()) problems.add(`routingVariants[${i}].${p}`);
  });
  if (context.hasAutoScaling) {
    problems.add(
      'autoScaling cannot be combined with routingVariants: the variants must keep equal instance counts for a fair comparison (got both)',
    );
  }
  if (context.deploymentGiven && context.deploymentStyle === 'ROLLING') {
    problems.add(
      'deployment must be DeploymentPolicy.blueGreen() with routingVariants: SageMaker does not roll endpoints with more than one production variant (got DeploymentPolicy.rolling())',
    );
  }
}

/** The main variant followed by the extra ones: copies of it with another name and RoutingConfig. */
export function withRoutingVariants(
  main: sagemaker.CfnEndpointConfig.ProductionVariantProperty,
  variants: readonly RoutingVariant[] | undefined,
): sagemaker.CfnEndpointConfig.ProductionVariantProperty[] {
  return [
    main,
    ...(variants ?? []).map((v) => ({ ...main, variantName: v.variantName, routingConfig: v.routing._render() })),
  ];
}

/**
 * What `prefix-router ab` needs on one endpoint, least privilege:
 * - invoke the endpoint (the workload);
 * - DescribeEndpoint / UpdateEndpoint on the endpoint;
 * - Describe/Create/DeleteEndpointConfig on endpoint configurations (the copies' names derive from the
 *   CloudFormation-generated original's, which SageMaker lower-cases in ARNs, so they cannot be named here);
 * - DescribeModel (to find the served model name);
 * - cloudwatch:GetMetricData and ListMetrics, which support no resource ARNs.
 */
export function grantAbTestingTo(scope: Construct, grantee: iam.IGrantable, endpointArn: string): iam.Grant {
  const stack = Stack.of(scope);
  const invoke = iam.Grant.addToPrincipal({ grantee, actions: INVOKE_ENDPOINT_ACTIONS, resourceArns: [endpointArn] });
  const endpoint = iam.Grant.addToPrincipal({
    grantee,
    actions: AB_TESTING_ENDPOINT_ACTIONS,
    resourceArns: [endpointArn],
  });
  const configArn = stack.formatArn({ service: 'sagemaker', resource: 'endpoint-config', resourceName: '*' });
  const modelArn = stack.formatArn({ service: 'sagemaker', resource: 'model', resourceName: '*' });
  grantScoped(grantee, {
    actions: AB_TESTING_CONFIG_ACTIONS,
    resources: [configArn],
    wildcardReason:
      'prefix-router ab creates and deletes copies of the endpoint configuration whose names are derived at run time from a CloudFormation-generated name; limited to endpoint configurations of this account and region.',
  });
  grantScoped(grantee, {
    actions: AB_TESTING_MODEL_READ_ACTIONS,
    resources: [modelArn],
    wildcardReason:
      'Read-only: the model name is generated by CloudFormation and SageMaker lower-cases it in ARNs; used to find the served model name.',
  });
  grantScoped(grantee, {
    actions: AB_TESTING_CLOUDWATCH_READ_ACTIONS,
    resources: ['*'],
    wildcardReason: 'cloudwatch:GetMetricData and cloudwatch:ListMetrics support no resource ARNs; read-only.',
  });
  const principal = grantee.grantPrincipal;
  if (Construct.isConstruct(principal)) flushWildcardAcknowledgements(principal);
  return invoke.combine(endpoint);
}
