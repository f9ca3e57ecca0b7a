import { App, Stack, StackProps } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { InstanceType, ModelSource, PrefixAwareLlmEndpoint, PrefixAwareLlmEndpointProps } from '../../lib/index';

/**
 * Every test app turns aws-cdk-lib's built-in CloudFormation schema validation into errors
 * (`validateAgainstDefaultRules`), including its warnings such as an unknown enum value (`strictCfnValidateErrors`),
 * so synthesizing any template with a wrong enum or range fails the test.
 */
export const VALIDATION_CONTEXT = {
  '@aws-cdk/core:validateAgainstDefaultRules': true,
  '@aws-cdk/core:strictCfnValidateErrors': true,
} as const;

export function newApp(context: Record<string, unknown> = {}): App {
  return new App({ context: { ...VALIDATION_CONTEXT, ...context } });
}

/** A fresh app with one stack: Template.fromStack synthesizes the whole app, so tests never share apps. */
export function newStack(props: StackProps = {}): Stack {
  return new Stack(newApp(), 'TestStack', props);
}

export const LLAMA_70B = 'meta-llama/Llama-3.1-70B-Instruct';

/**
 * Props with the required model and the p5 instance type the construct defaults to, given explicitly (left out, it
 * warns with the fleet's price: `PrefixAwareLlmWarnings.DEFAULT_INSTANCE_TYPE`); tests override what they exercise.
 */
export function baseProps(overrides: Partial<PrefixAwareLlmEndpointProps> = {}): PrefixAwareLlmEndpointProps {
  return {
    model: ModelSource.huggingFace(LLAMA_70B),
    ...(overrides.instancePools === undefined && { instanceType: InstanceType.ML_P5_48XLARGE }),
    ...overrides,
  };
}

/** Builds one endpoint in a fresh stack. */
export function build(overrides: Partial<PrefixAwareLlmEndpointProps> = {}, stackProps: StackProps = {}) {
  const stack = newStack(stackProps);
  const endpoint = new PrefixAwareLlmEndpoint(stack, 'Llm', baseProps(overrides));
  return { stack, endpoint };
}

/** Builds one endpoint and synthesizes its template (validated). */
export function synth(overrides: Partial<PrefixAwareLlmEndpointProps> = {}, stackProps: StackProps = {}) {
  const { stack, endpoint } = build(overrides, stackProps);
  return { stack, endpoint, template: Template.fromStack(stack) };
}

/** The only resource of a type, as its Properties. */
export function onlyResource(template: Template, type: string): Record<string, any> {
  const resources = Object.values(template.findResources(type));
  if (resources.length !== 1) throw new Error(`expected one ${type}, found ${resources.length}`);
  return (resources[0] as { Properties: Record<string, any> }).Properties;
}

/** The single production variant of the endpoint configuration. */
export function variantOf(template: Template): Record<string, any> {
  return onlyResource(template, 'AWS::SageMaker::EndpointConfig').ProductionVariants[0];
}

/** The container environment of the model. */
export function environmentOf(template: Template): Record<string, any> {
  return onlyResource(template, 'AWS::SageMaker::Model').PrimaryContainer.Environment;
}

/** Every warning of the stack (synthesizes). */
export function warningsOf(stack: Stack): string[] {
  return allWarningsOf(stack);
}

/** Every warning of the stack. */
export function allWarningsOf(stack: Stack): string[] {
  return Annotations.fromStack(stack)
    .findWarning('*', Match.anyValue())
    .map((w) => String(w.entry.data));
}

/** The construct problems a failing constructor reports, or [] when it succeeds. */
export function problemsOf(fn: () => unknown): readonly string[] {
  try {
    fn();
    return [];
  } catch (error) {
    const problems = (error as { problems?: readonly string[] }).problems;
    if (!problems) throw error;
    return problems;
  }
}

/** Builds an endpoint in a fresh stack and returns the reported problems. */
export function problemsFor(
  overrides: Partial<PrefixAwareLlmEndpointProps> = {},
  stackProps: StackProps = {},
): readonly string[] {
  return problemsOf(() => build(overrides, stackProps));
}

/** Every statement of every IAM policy in the template, flattened. */
export function policyStatements(template: Template): Array<Record<string, any>> {
  return Object.values(template.findResources('AWS::IAM::Policy')).flatMap(
    (policy) => (policy as any).Properties.PolicyDocument.Statement as Array<Record<string, any>>,
  );
}

/** Actions of a statement as an array. */
export function actionsOf(statement: Record<string, any>): string[] {
  return Array.isArray(statement.Action) ? statement.Action : [statement.Action];
}
