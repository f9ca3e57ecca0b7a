import { loadRouterModule } from './router-settings';

/**
 * Attention-head counts of Hugging Face models people commonly serve, so that synth refuses a tensor parallel size
 * vLLM would refuse only once the GPU instances are paid for and the container starts. The facts and vLLM's
 * sharding rule have one home, the router's model catalog (router/src/emulator/model-architecture.ts), which
 * `prefix-router plan` also derives engine profiles from: the construct loads that pure module from the compiled
 * router it ships, like the price table (./router-settings.ts). A model not listed is not checked (the construct
 * warns when it picks a tensor parallel size above 1 for it); an installation without the router module checks none.
 */
export interface ModelHeads {
  readonly attentionHeads: number;
  readonly kvHeads: number;
}

/** The part of the router's model-architecture module the construct uses. */
export interface ModelArchitectureModule {
  catalogedArchitecture(modelId: string | undefined): ModelHeads | undefined;
  headsAllowTensorParallel(heads: ModelHeads, tensorParallelSize: number): boolean;
  allowedTensorParallelSizes(heads: ModelHeads, gpus: number): number[];
}

const MODEL_ARCHITECTURE = ['router', 'src', 'emulator', 'model-architecture'];

function architectureModule(): ModelArchitectureModule | undefined {
  return loadRouterModule<ModelArchitectureModule>(MODEL_ARCHITECTURE, __dirname);
}

/** The head counts of a catalogued model (case-insensitive, an `-Instruct` part ignored), or undefined. */
export function modelHeads(modelId: string | undefined): ModelHeads | undefined {
  const architecture = architectureModule()?.catalogedArchitecture(modelId);
  return architecture === undefined
    ? undefined
    : { attentionHeads: architecture.attentionHeads, kvHeads: architecture.kvHeads };
}

/** Whether vLLM can shard the model over `tensorParallelSize` GPUs (only called with heads the module gave). */
export function headsAllowTensorParallel(heads: ModelHeads, tensorParallelSize: number): boolean {
  return architectureModule()?.headsAllowTensorParallel(heads, tensorParallelSize) ?? true;
}

/** The divisors of `gpus` the model can be sharded over, ascending: the tensor parallel sizes that both fit the instance and start. */
export function allowedTensorParallelSizes(heads: ModelHeads, gpus: number): number[] {
  const module = architectureModule();
  if (module !== undefined) return module.allowedTensorParallelSizes(heads, gpus);
  return Array.from({ length: gpus }, (_, i) => i + 1).filter((size) => gpus % size === 0);
}
