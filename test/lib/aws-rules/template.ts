/**
 * Reading a synthesized CloudFormation template the way the rules need it: resources by type, intrinsics flattened
 * to comparable strings (`{Ref: X}` → `<X>`, `Fn::GetAtt` → `<X.Attr>`, joins and subs concatenated, pseudo
 * parameters kept as `<AWS::Region>`), and IAM statements of a role wherever they are attached.
 */

/** A resource of a template. */
export interface TemplateResource {
  readonly Type: string;
  readonly Properties?: Record<string, any>;
}

/** The parts of a template the rules read. */
export interface TemplateJson {
  readonly Resources?: Record<string, TemplateResource>;
}

/** `[logicalId, properties]` of every resource of one type. */
export function resourcesOfType(template: TemplateJson, type: string): Array<[string, Record<string, any>]> {
  return Object.entries(template.Resources ?? {})
    .filter(([, r]) => r.Type === type)
    .map(([id, r]) => [id, r.Properties ?? {}]);
}

/** An intrinsic or literal as one comparable string. */
export function flatten(node: unknown): string {
  if (node === undefined || node === null) return '';
  if (typeof node === 'string') return node.replace(/\$\{([^}]+)\}/g, '<$1>');
  if (typeof node === 'number' || typeof node === 'boolean') return String(node);
  if (Array.isArray(node)) return node.map(flatten).join(',');
  const record = node as Record<string, unknown>;
  if (record.Ref !== undefined) return `<${flatten(record.Ref)}>`;
  if (record['Fn::GetAtt']) {
    const [id, attribute] = record['Fn::GetAtt'] as [unknown, unknown];
    return `<${flatten(id)}.${flatten(attribute)}>`;
  }
  if (record['Fn::Join']) {
    const [delimiter, items] = record['Fn::Join'] as [string, unknown[]];
    return items.map(flatten).join(delimiter);
  }
  if (record['Fn::Sub']) {
    const sub = record['Fn::Sub'];
    return flatten(Array.isArray(sub) ? sub[0] : sub);
  }
  if (record['Fn::FindInMap']) return `<FindInMap:${(record['Fn::FindInMap'] as unknown[]).map(flatten).join('.')}>`;
  if (record['Fn::Select']) {
    const [index, list] = record['Fn::Select'] as [unknown, unknown];
    return `<Select:${flatten(index)}:${flatten(list)}>`;
  }
  return JSON.stringify(node);
}

/** Glob match of IAM-style patterns: `*` any run, `?` one character; everything else literal. */
export function globMatches(pattern: string, value: string): boolean {
  const regex = new RegExp(
    `^${pattern
      .split('')
      .map((c) => (c === '*' ? '.*' : c === '?' ? '.' : c.replace(/[.+^${}()|[\]\\]/g, '\\$&')))
      .join('')}$`,
    's',
  );
  return regex.test(value);
}

/** One IAM policy statement, actions and resources as flattened strings. */
export interface FlatStatement {
  readonly effect: string;
  readonly actions: string[];
  readonly resources: string[];
  readonly hasCondition: boolean;
}

function asArray<T>(value: T | T[] | undefined): T[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

function flatStatements(document: any): FlatStatement[] {
  return asArray(document?.Statement).map((s: any) => ({
    effect: s.Effect ?? 'Allow',
    actions: asArray(s.Action).map(flatten),
    resources: asArray(s.Resource).map(flatten),
    hasCondition: s.Condition !== undefined,
  }));
}

/**
 * Every statement granted to a role: inline `Policies` of the role and `AWS::IAM::Policy` /
 * `AWS::IAM::RolePolicy` resources attached to it (`Roles: [{Ref: role}]` or `RoleName`).
 */
export function roleStatements(template: TemplateJson, roleLogicalId: string): FlatStatement[] {
  const role = template.Resources?.[roleLogicalId];
  const statements: FlatStatement[] = [];
  for (const policy of asArray(role?.Properties?.Policies)) statements.push(...flatStatements(policy.PolicyDocument));
  const ref = `<${roleLogicalId}>`;
  for (const [, props] of resourcesOfType(template, 'AWS::IAM::Policy')) {
    if (asArray(props.Roles).map(flatten).includes(ref)) statements.push(...flatStatements(props.PolicyDocument));
  }
  for (const [, props] of resourcesOfType(template, 'AWS::IAM::RolePolicy')) {
    if (flatten(props.RoleName) === ref) statements.push(...flatStatements(props.PolicyDocument));
  }
  return statements;
}

/**
 * Whether some Allow statement grants `action` on a resource the matcher accepts. `resourceCovers(pattern)` is given
 * each statement resource pattern (flattened); a bare `*` always covers.
 */
export function isAllowed(
  statements: FlatStatement[],
  action: string,
  resourceCovers: (pattern: string) => boolean = () => true,
): boolean {
  return statements.some(
    (s) =>
      s.effect === 'Allow' &&
      s.actions.some((a) => globMatches(a, action)) &&
      s.resources.some((r) => r === '*' || resourceCovers(r)),
  );
}

/** The logical id behind `{Ref: X}` or `{Fn::GetAtt: [X, ...]}`, if the value is one. */
export function referencedId(node: unknown): string | undefined {
  if (typeof node !== 'object' || node === null) return undefined;
  const record = node as Record<string, unknown>;
  if (typeof record.Ref === 'string') return record.Ref;
  if (Array.isArray(record['Fn::GetAtt'])) return String((record['Fn::GetAtt'] as unknown[])[0]);
  return undefined;
}
