import type { InstanceView, RoutingSnapshot } from './routing-policy';

/**
 * Which instances may take a request, by the model it names. An engine serves its base model and, with vLLM's
 * `--enable-lora`, each adapter it loaded (a request runs with an adapter by naming it in `model`; GET /v1/models
 * lists them all: https://docs.vllm.ai/en/latest/features/lora/). A fleet whose engines serve different models or
 * adapters must send each request only to the engines that serve its model, or the engine answers 404; SageMaker
 * does the same with inference components, sending a request only to instances holding a copy of the component
 * it names (https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-adapt.html: an adapter component
 * runs on its base component's compute). Every policy's first stage is the serves-model filter
 * (stages/serves-model-filter.ts), so within that set it decides as usual: sagemaker-prefix-aware's rendezvous keeps
 * each adapter's prefixes on a sticky instance of the adapter's set, and its spill stays in the set.
 */
export class UnknownModelError extends Error {
  constructor(readonly model: string) {
    super(`The model \`${model}\` does not exist.`);
    this.name = 'UnknownModelError';
  }
}

/** True when `view` may serve `model`: the request names none, or the instance's models are unknown or include it. */
export function servesModel(view: InstanceView, model: string): boolean {
  return model === '' || view.servedModels === undefined || view.servedModels.has(model);
}

/**
 * True when `instances` is not empty, every one is healthy and all serve the same models (each `servedModels`
 * undefined, or all equal sets): RoutingSnapshot.allHealthySameModels. O(instances × models): callers compute it
 * when an instance's health or served models change, not per decision.
 */
export function allHealthySameModels(instances: readonly InstanceView[]): boolean {
  if (instances.length === 0) return false;
  const models = instances[0].servedModels;
  for (const instance of instances) if (!instance.healthy || !sameModels(instance.servedModels, models)) return false;
  return true;
}

function sameModels(a: ReadonlySet<string> | undefined, b: ReadonlySet<string> | undefined): boolean {
  if (a === b) return true;
  if (a === undefined || b === undefined || a.size !== b.size) return false;
  for (const model of a) if (!b.has(model)) return false;
  return true;
}

/**
 * Throws UnknownModelError when no configured instance serves `model`, healthy or not (an unknown model, answered
 * like vLLM's 404). A known model whose instances are all down is the policy's no-healthy-instance case instead.
 * Which instances a policy may choose for it is its serves-model filter (stages/serves-model-filter.ts).
 */
export function requireServingInstance(snapshot: RoutingSnapshot, model: string): void {
  const instances = snapshot.instances;
  // All serve the same models: the first answers for every one.
  if (snapshot.allHealthySameModels === true && instances.length > 0) {
    if (servesModel(instances[0], model)) return;
    throw new UnknownModelError(model);
  }
  for (let i = 0; i < instances.length; i++) if (servesModel(instances[i], model)) return;
  throw new UnknownModelError(model);
}
