import type { InstanceView, ObservedBlocks, RoutingSnapshot } from './routing-policy';

/**
 * Which instances may take a request, by the model it names. An engine serves its base model and, with vLLM's
 * `--enable-lora`, each adapter it loaded (a request runs with an adapter by naming it in `model`; GET /v1/models
 * lists them all: https://docs.vllm.ai/en/latest/features/lora/). A fleet whose engines serve different models or
 * adapters must send each request only to the engines that serve its model, or the engine answers 404; SageMaker
 * does the same with inference components, sending a request only to instances holding a copy of the component
 * it names (https://docs.aws.amazon.com/sagemaker/latest/dg/realtime-endpoints-adapt.html: an adapter component
 * runs on its base component's compute). Within that set the policy decides as usual, so sagemaker-prefix-aware's
 * rendezvous keeps each adapter's prefixes on a sticky instance of the adapter's set, and its spill stays in the set.
 *
 * Pure: the same function scopes the live router's snapshot and the simulator's.
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
 * The snapshot a policy decides on for a request naming `model`: instances that do not serve it are shown
 * `heldBack` (unhealthy for this decision, their state kept). The same snapshot object when every instance may
 * serve it (the common single-model fleet: nothing allocated). Throws UnknownModelError when no configured
 * instance serves it, healthy or not (an unknown model, answered like vLLM's 404; a known model whose
 * instances are all down is the caller's no-healthy-instance case instead).
 */
export function scopeToModel(snapshot: RoutingSnapshot, model: string): RoutingSnapshot {
  const instances = snapshot.instances;
  let serving = 0;
  for (let i = 0; i < instances.length; i++) if (servesModel(instances[i], model)) serving++;
  if (serving === instances.length) return snapshot;
  if (serving === 0) throw new UnknownModelError(model);
  return { ...snapshot, instances: instances.map((v) => (servesModel(v, model) ? v : new HeldBackView(v))) };
}

/** An instance shown as not a candidate for one decision: unhealthy, with its load as it is. */
class HeldBackView implements InstanceView {
  readonly healthy = false;
  readonly heldBack = true;
  readonly id: string;
  readonly inFlight: number;
  readonly queuedPrefillTokens: number | undefined;
  readonly decodeSequences: number | undefined;
  readonly kvCapacityTokens: number | undefined;
  readonly observedBlocks: ObservedBlocks | undefined;
  readonly servedModels: ReadonlySet<string> | undefined;
  constructor(view: InstanceView) {
    this.id = view.id;
    this.inFlight = view.inFlight;
    this.queuedPrefillTokens = view.queuedPrefillTokens;
    this.decodeSequences = view.decodeSequences;
    this.kvCapacityTokens = view.kvCapacityTokens;
    this.observedBlocks = view.observedBlocks;
    this.servedModels = view.servedModels;
  }
}
