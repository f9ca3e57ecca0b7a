/**
 * Attention-head counts of Hugging Face models people commonly serve, so that synth refuses a tensor parallel size
 * vLLM would refuse only once the GPU instances are paid for and the container starts.
 *
 * vLLM's rules (both checked before any weight loads, and the engine exits):
 * - the attention heads split evenly across the tensor-parallel ranks: "Total number of attention heads (H) must be
 *   divisible by tensor parallel size (T)" (`ModelConfig.verify_with_parallel_config`,
 *   https://github.com/vllm-project/vllm/blob/main/vllm/config/model.py);
 * - the key/value heads either split evenly (T ≤ KV heads: KV % T = 0) or are replicated a whole number of times
 *   (T > KV heads: T % KV = 0) (`QKVParallelLinear`,
 *   https://github.com/vllm-project/vllm/blob/main/vllm/model_executor/layers/linear.py).
 *
 * Figures are `num_attention_heads` and `num_key_value_heads` of each model's config.json on Hugging Face; a base
 * model and its `-Instruct` fine-tune share them. A model not listed is not checked (the construct warns when it
 * picks a tensor parallel size above 1 for it).
 */
export interface ModelHeads {
  readonly attentionHeads: number;
  readonly kvHeads: number;
}

const HEADS: Readonly<Record<string, ModelHeads>> = {
  'meta-llama/llama-3.1-8b': { attentionHeads: 32, kvHeads: 8 },
  'meta-llama/meta-llama-3.1-8b': { attentionHeads: 32, kvHeads: 8 },
  'meta-llama/llama-3.1-70b': { attentionHeads: 64, kvHeads: 8 },
  'meta-llama/meta-llama-3.1-70b': { attentionHeads: 64, kvHeads: 8 },
  'meta-llama/llama-3.1-405b': { attentionHeads: 128, kvHeads: 8 },
  'meta-llama/llama-3.2-1b': { attentionHeads: 32, kvHeads: 8 },
  'meta-llama/llama-3.2-3b': { attentionHeads: 24, kvHeads: 8 },
  'meta-llama/llama-3.3-70b': { attentionHeads: 64, kvHeads: 8 },
  'meta-llama/meta-llama-3-8b': { attentionHeads: 32, kvHeads: 8 },
  'meta-llama/meta-llama-3-70b': { attentionHeads: 64, kvHeads: 8 },
  'qwen/qwen2.5-0.5b': { attentionHeads: 14, kvHeads: 2 },
  'qwen/qwen2.5-1.5b': { attentionHeads: 12, kvHeads: 2 },
  'qwen/qwen2.5-3b': { attentionHeads: 16, kvHeads: 2 },
  'qwen/qwen2.5-7b': { attentionHeads: 28, kvHeads: 4 },
  'qwen/qwen2.5-14b': { attentionHeads: 40, kvHeads: 8 },
  'qwen/qwen2.5-32b': { attentionHeads: 40, kvHeads: 8 },
  'qwen/qwen2.5-72b': { attentionHeads: 64, kvHeads: 8 },
  'mistralai/mistral-7b-v0.3': { attentionHeads: 32, kvHeads: 8 },
  'mistralai/mixtral-8x7b-v0.1': { attentionHeads: 32, kvHeads: 8 },
};

/** The catalogue's key of a model id: case-insensitive, an `-Instruct` suffix ignored. */
function catalogKey(modelId: string): string {
  return modelId
    .trim()
    .toLowerCase()
    .replace(/-instruct$/, '');
}

/** The head counts of a catalogued model, or undefined. */
export function modelHeads(modelId: string | undefined): ModelHeads | undefined {
  return modelId === undefined ? undefined : HEADS[catalogKey(modelId)];
}

/** Whether vLLM can shard the model over `tensorParallelSize` GPUs (both rules above). */
export function headsAllowTensorParallel(heads: ModelHeads, tensorParallelSize: number): boolean {
  const kvFits =
    tensorParallelSize <= heads.kvHeads
      ? heads.kvHeads % tensorParallelSize === 0
      : tensorParallelSize % heads.kvHeads === 0;
  return heads.attentionHeads % tensorParallelSize === 0 && kvFits;
}

/** The divisors of `gpus` the model can be sharded over, ascending: the tensor parallel sizes that both fit the instance and start. */
export function allowedTensorParallelSizes(heads: ModelHeads, gpus: number): number[] {
  const sizes: number[] = [];
  for (let size = 1; size <= gpus; size++)
    if (gpus % size === 0 && headsAllowTensorParallel(heads, size)) sizes.push(size);
  return sizes;
}
