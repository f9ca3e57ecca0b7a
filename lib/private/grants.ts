import { aws_iam as iam } from 'aws-cdk-lib';
import { Construct } from 'constructs';
import { recordWildcardReason } from './nag-acknowledgements';

/** One statement the construct grants, with the reason any wildcard in its resources is needed. */
export interface ScopedGrant {
  readonly actions: string[];
  readonly resources: string[];
  readonly conditions?: Record<string, Record<string, unknown>>;
  /** Why a `*` in `resources` cannot be narrower; required when there is one. */
  readonly wildcardReason?: string;
}

/**
 * Adds the statement to the grantee's policy and, for wildcard resources, records the reason; the caller
 * acknowledges the matching cdk-nag findings with `flushWildcardAcknowledgements` once all grants are made.
 */
export function grantScoped(grantee: iam.IGrantable, grant: ScopedGrant): void {
  grantee.grantPrincipal.addToPrincipalPolicy(
    new iam.PolicyStatement({
      actions: grant.actions,
      resources: grant.resources,
      conditions: grant.conditions,
    }),
  );
  const principal = grantee.grantPrincipal;
  if (grant.wildcardReason && Construct.isConstruct(principal)) {
    recordWildcardReason(principal, grant.resources, grant.wildcardReason);
  }
}
