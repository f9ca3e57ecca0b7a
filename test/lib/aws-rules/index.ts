/**
 * Documented CloudWatch, SageMaker and IAM rules as executable checks over synthesized templates. Each rule cites the
 * AWS documentation page it encodes; `findings(template)` lists every violation as `RULE at RESOURCE: message`.
 */
import { CLOUDWATCH_RULES } from './cloudwatch';
import { IAM_RULES } from './iam';
import { INFERENCE_COMPONENT_RULES } from './inference-components';
import { AwsRule, findings as findingsOf } from './rule';
import { SAGEMAKER_RULES } from './sagemaker';
import { TemplateJson } from './template';

export { AwsRule, RuleFinding } from './rule';
export { TemplateJson } from './template';
export { CLOUDWATCH_RULES, IAM_RULES, INFERENCE_COMPONENT_RULES, SAGEMAKER_RULES };

/** Every rule. */
export const AWS_RULES: readonly AwsRule[] = [
  ...CLOUDWATCH_RULES,
  ...SAGEMAKER_RULES,
  ...INFERENCE_COMPONENT_RULES,
  ...IAM_RULES,
];

/** Every violation of every rule in one template. */
export function findings(template: TemplateJson, rules: readonly AwsRule[] = AWS_RULES): string[] {
  return findingsOf(template, rules);
}
