import { TemplateJson } from './template';

/** A documented AWS rule a synthesized template must satisfy. */
export interface AwsRule {
  /** Short stable id, e.g. `CW-MI-ONE-QUERY`. */
  readonly id: string;
  /** The documentation page the rule encodes (the rule is only as strong as that page). */
  readonly doc: string;
  /** What the page says, in one sentence. */
  readonly statement: string;
  /** Violations in one template, each naming the resource. */
  check(template: TemplateJson): RuleFinding[];
}

/** One violation of a rule. */
export interface RuleFinding {
  readonly rule: string;
  readonly resource: string;
  readonly message: string;
}

/** Every finding of every rule over one template, as `RULE at RESOURCE: message` lines. */
export function findings(template: TemplateJson, rules: readonly AwsRule[]): string[] {
  return rules.flatMap((rule) => rule.check(template).map((f) => `${f.rule} at ${f.resource}: ${f.message}`));
}
