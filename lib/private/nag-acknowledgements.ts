import { Stack, Validations } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';

/**
 * cdk-nag (v3) reports every IAM resource containing `*` as `AwsSolutions-IAM5[Resource::<flattened ARN>]`, where
 * intrinsics are flattened (`{Ref: X}` → `<X>`, `Fn::GetAtt` → `<X.Attr>`, joins concatenated). The construct's own
 * wildcards are deliberate and narrow, so it acknowledges exactly those findings, each with its reason, through
 * CDK's `Validations.of().acknowledge()` (no dependency on cdk-nag). Anything else on the role still reports.
 * Reasons are collected first and acknowledged once per finding, so a finding shared by several statements
 * (`Resource::*`) carries every reason.
 */
/** Reasons recorded per principal and finding id, until `flushWildcardAcknowledgements`. */
const pending = new WeakMap<IConstruct, Map<string, string[]>>();

/** Records why the wildcard resources of a statement granted to `scope` are needed. */
export function recordWildcardReason(scope: IConstruct, resources: readonly string[], reason: string): void {
  const stack = Stack.of(scope);
  let byId = pending.get(scope);
  if (!byId) {
    byId = new Map();
    pending.set(scope, byId);
  }
  for (const resource of resources) {
    const flat = flattenReference(stack.resolve(resource));
    if (!flat.includes('*')) continue;
    const id = `AwsSolutions-IAM5[Resource::${flat}]`;
    const reasons = byId.get(id) ?? [];
    if (!reasons.includes(reason)) reasons.push(reason);
    byId.set(id, reasons);
  }
}

/** Acknowledges each recorded finding once, with every reason that applies to it. */
export function flushWildcardAcknowledgements(scope: IConstruct): void {
  const byId = pending.get(scope);
  if (!byId) return;
  for (const [id, reasons] of byId) Validations.of(scope).acknowledge({ id, reason: reasons.join(' ') });
  pending.delete(scope);
}

/** Same flattening as cdk-nag's `flattenCfnReference`. */
export function flattenReference(node: unknown): string {
  if (node === undefined) return '';
  if (typeof node === 'string') return node.replace(/\${/g, '<').replace(/}/g, '>');
  if (typeof node === 'object' && node !== null) {
    const record = node as Record<string, unknown>;
    if (record['Fn::Join']) {
      const [delimiter, items] = record['Fn::Join'] as [string, unknown[]];
      return items.map(flattenReference).join(delimiter);
    }
    if (record['Fn::Sub']) return flattenReference(record['Fn::Sub']);
    if (record['Fn::GetAtt']) {
      const [resource, attribute] = record['Fn::GetAtt'] as [unknown, unknown];
      return `<${flattenReference(resource)}.${flattenReference(attribute)}>`;
    }
    if (record['Fn::ImportValue']) return flattenReference(record['Fn::ImportValue']);
    if (record.Ref) return `<${flattenReference(record.Ref)}>`;
  }
  return JSON.stringify(node);
}

/**
 * Compliance-pack findings (cdk-nag NIST 800-53 R5 and HIPAA Security) that the construct's design answers, each
 * acknowledged with the reason on the exact resource; anything else still reports.
 */
export function acknowledgeComplianceFindings(options: {
  /** The execution role, when the construct created it. */
  readonly createdRole?: IConstruct;
  /** The endpoint configuration, when every instance type has local NVMe storage (no KmsKeyId possible). */
  readonly nvmeEndpointConfig?: IConstruct;
}): void {
  const policy = options.createdRole?.node.tryFindChild('DefaultPolicy');
  if (policy) {
    for (const id of ['NIST.800.53.R5-IAMNoInlinePolicy', 'HIPAA.Security-IAMNoInlinePolicy']) {
      Validations.of(policy).acknowledge({
        id,
        reason:
          "The execution role's policy holds only this endpoint's statements (its image repository, model prefix, log group, " +
          'metric namespace) and lives and dies with the role; a customer-managed policy would add a reusable attach point without ' +
          'narrowing any statement.',
      });
    }
  }
  if (options.nvmeEndpointConfig) {
    for (const id of [
      'NIST.800.53.R5-SageMakerEndpointConfigurationKMSKeyConfigured',
      'HIPAA.Security-SageMakerEndpointConfigurationKMSKeyConfigured',
    ]) {
      Validations.of(options.nvmeEndpointConfig).acknowledge({
        id,
        reason:
          'Every instance type of this endpoint has local NVMe instance storage, which the instance hardware encrypts; SageMaker ' +
          'rejects a KmsKeyId in the endpoint configuration for such instance types (the construct refuses encryptionKey there).',
      });
    }
  }
}
