import { Stack, Validations } from 'aws-cdk-lib';
import { IConstruct } from 'constructs';

/**
 * cdk-nag (v3) reports every IAM resource containing `*` as `AwsSolutions-IAM5[Resource::<flattened ARN>]`, where
 * intrinsics are flattened (`{Ref: X}` → `<X>`, `Fn::GetAtt` → `<X.Attr>`, joins concatenated). The construct's own
 * wildcards are deliberate and narrow, so it acknowledges exactly those findings, each with its reason, through
 * CDK's `Validations.of().acknowledge()` (no dependency on cdk-nag). Anything else on the role still reports.
 */
export function acknowledgeWildcardResources(scope: IConstruct, resources: readonly string[], reason: string): void {
  const stack = Stack.of(scope);
  for (const resource of resources) {
    const flat = flattenReference(stack.resolve(resource));
    if (!flat.includes('*')) continue;
    Validations.of(scope).acknowledge({ id: `AwsSolutions-IAM5[Resource::${flat}]`, reason });
  }
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
