import { RouterError } from './router-errors';

/**
 * SageMaker's header naming the inference component a runtime-API call invokes (the SDK's `InferenceComponentName`
 * field of InvokeEndpoint / InvokeEndpointWithResponseStream:
 * https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_runtime_InvokeEndpoint.html). On an endpoint that
 * hosts components SageMaker sends the call only to instances holding a copy of that component; a LoRA adapter is
 * its own component on its base component's compute
 * (https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-adapt.html).
 */
export const INFERENCE_COMPONENT_HEADER = 'x-amzn-sagemaker-inference-component';

/** The API reference's constraint on InferenceComponentName: at most 63 characters, alphanumerics and inner hyphens. */
const INFERENCE_COMPONENT_NAME = /^[a-zA-Z0-9](?:[-a-zA-Z0-9]*[a-zA-Z0-9])?$/;
const MAX_INFERENCE_COMPONENT_NAME = 63;

export function isValidInferenceComponentName(name: string): boolean {
  return name.length <= MAX_INFERENCE_COMPONENT_NAME && INFERENCE_COMPONENT_NAME.test(name);
}

/**
 * The component a runtime-API request names, or undefined. Behind the local router a component is a model the
 * engines serve (`--served-model-name`, or a LoRA adapter's `--lora-modules` name): the request is routed only to
 * engines that list it, as SageMaker routes only to instances holding the component. The body still travels as
 * sent, so its `model` (what vLLM runs) should name the same adapter. An invalid name is a 400, as SageMaker's
 * ValidationError; the value is not echoed.
 */
export function inferenceComponentOf(value: string | string[] | undefined): string | undefined {
  if (value === undefined) return undefined;
  const name = Array.isArray(value) ? value.join(',') : value;
  if (!isValidInferenceComponentName(name)) {
    throw new RouterError(
      'invalid_inference_component',
      `X-Amzn-SageMaker-Inference-Component must be 1 to ${MAX_INFERENCE_COMPONENT_NAME} letters, digits and inner hyphens (got ${name.length} characters)`,
    );
  }
  return name;
}
