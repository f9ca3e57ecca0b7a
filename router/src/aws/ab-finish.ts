import type { DeploymentConfig } from '@aws-sdk/client-sagemaker';

/**
 * The AWS CLI commands that finish an A/B's restore by hand, for the state the endpoint was last seen in. One
 * home for them: the plan prints them before any change, the tool prints them when it exits 3, the report
 * carries them, and docs/validate.md shows the same shape (tests run them against the control-plane fake).
 *
 * Endpoint states (API_DescribeEndpoint EndpointStatus): while a deployment runs (Creating, Updating,
 * SystemUpdating, RollingBack) UpdateEndpoint is refused, so the commands wait first; UpdateRollbackFailed and
 * OutOfService are fixed with another UpdateEndpoint; on a Failed endpoint "DeleteEndpoint is the only operation
 * that can be performed", so the endpoint is deleted and created again on its original configuration.
 */
export interface FinishState {
  readonly endpointName: string;
  readonly originalConfig: string;
  /** Copies the run created (or may have created): each is deleted once the endpoint is back. */
  readonly copies: readonly string[];
  /** Last EndpointStatus seen; 'unknown' before the run (the plan's own lines). */
  readonly status: string;
  /** The DeploymentConfig the restore would use (rolling where the endpoint can roll). */
  readonly deploymentConfig: DeploymentConfig | undefined;
  /** The original configuration no longer exists: recreate it from this file (CreateEndpointConfig input). */
  readonly recreateFrom?: string;
}

/** States in which SageMaker is still changing the endpoint and refuses UpdateEndpoint. */
export const TRANSITIONAL_STATES: ReadonlySet<string> = new Set([
  'Creating',
  'Updating',
  'SystemUpdating',
  'RollingBack',
]);

/** Single-quoted for a POSIX shell. */
export function shellQuote(text: string): string {
  return /^[A-Za-z0-9_./:=@%+-]+$/.test(text) ? text : `'${text.replace(/'/g, `'\\''`)}'`;
}

export function finishCommands(state: FinishState): string[] {
  const e = state.endpointName;
  const out: string[] = [];
  if (state.recreateFrom !== undefined)
    out.push(`aws sagemaker create-endpoint-config --cli-input-json ${shellQuote(`file://${state.recreateFrom}`)}`);
  if (state.status === 'Failed') {
    out.push(`aws sagemaker delete-endpoint --endpoint-name ${e}`);
    out.push(`aws sagemaker wait endpoint-deleted --endpoint-name ${e}`);
    out.push(`aws sagemaker create-endpoint --endpoint-name ${e} --endpoint-config-name ${state.originalConfig}`);
  } else {
    if (state.status === 'unknown' || TRANSITIONAL_STATES.has(state.status))
      out.push(
        `aws sagemaker wait endpoint-in-service --endpoint-name ${e}   # let a deployment in progress end first`,
      );
    const dc =
      state.deploymentConfig === undefined
        ? ''
        : ` --deployment-config ${shellQuote(JSON.stringify(state.deploymentConfig))}`;
    out.push(
      `aws sagemaker update-endpoint --endpoint-name ${e} --endpoint-config-name ${state.originalConfig} --retain-all-variant-properties${dc}`,
    );
  }
  out.push(`aws sagemaker wait endpoint-in-service --endpoint-name ${e}`);
  out.push(
    `aws sagemaker describe-endpoint --endpoint-name ${e} --query '[EndpointStatus,EndpointConfigName,PendingDeploymentSummary]'   # expect InService, ${state.originalConfig}, null`,
  );
  for (const c of state.copies) out.push(`aws sagemaker delete-endpoint-config --endpoint-config-name ${c}`);
  return out;
}

/**
 * The AWS CLI commands that delete what `ab --shadow` created and could not delete itself, in dependency order:
 * components (adapters listed before their bases), then each endpoint (waiting until it is gone), then its
 * configuration, so a configuration is never deleted while an endpoint still uses it.
 */
export function deleteResourceCommands(left: {
  readonly components: readonly string[];
  readonly endpoints: readonly string[];
  readonly configs: readonly string[];
}): string[] {
  const out: string[] = [];
  for (const c of left.components) out.push(`aws sagemaker delete-inference-component --inference-component-name ${c}`);
  for (const e of left.endpoints) {
    out.push(`aws sagemaker delete-endpoint --endpoint-name ${e}`);
    out.push(`aws sagemaker wait endpoint-deleted --endpoint-name ${e}`);
  }
  for (const c of left.configs) out.push(`aws sagemaker delete-endpoint-config --endpoint-config-name ${c}`);
  return out;
}
