/**
 * Architecture facts of open models people serve with vLLM, and the rule vLLM applies to shard them: what a derived
 * engine profile (emulator/derived-profile.ts) and the construct's tensor parallel default (lib/private/
 * model-catalog.ts loads this module at synth) both need. Facts only, no weights: each entry is the model's
 * config.json on Hugging Face (`source`). Pure: no imports, so the construct can load it from the compiled router.
 *
 * Checked against public copies of the config.json files with the project's code search on 2026-12-06:
 * Qwen2.5-7B (layer shapes 3584/512/18944), Qwen2-0.5B-style Qwen2.5-0.5B, Qwen2.5-1.5B, Qwen2.5-3B,
 * Qwen3-235B-A22B (94 layers, 64/4 heads, 128 experts × 1536, top 8). The others are from the model cards and
 * config.json files as recalled and NOT re-verified here: `verified: false` marks them.
 */

/** Mixture-of-experts feed-forward: every layer has `count` experts of `intermediateSize`, `perToken` run per token. */
export interface ExpertLayout {
  readonly count: number;
  readonly perToken: number;
  readonly intermediateSize: number;
}

/** What an engine profile needs to know about a model (the fields of its config.json). */
export interface ModelArchitecture {
  /** The Hugging Face id, e.g. `Qwen/Qwen2.5-7B-Instruct`. */
  readonly id: string;
  readonly layers: number;
  readonly hiddenSize: number;
  readonly attentionHeads: number;
  readonly kvHeads: number;
  /** Dimension of one head (`head_dim`, else hidden_size ÷ heads). */
  readonly headDim: number;
  /** Dense feed-forward width (`intermediate_size`); unused by MoE layers, which use `experts`. */
  readonly intermediateSize: number;
  readonly vocabSize: number;
  /** The context the model was trained for (`max_position_embeddings`): vLLM's default `--max-model-len`. */
  readonly maxPositionEmbeddings: number;
  /** Bytes per weight and per KV element: 2 for bfloat16/float16, 1 for FP8 checkpoints. */
  readonly bytesPerWeight: number;
  /** Output projection shares the input embedding (`tie_word_embeddings`). */
  readonly tiedEmbeddings: boolean;
  /** Q, K and V projections have a bias (Qwen2 family). */
  readonly attentionBias: boolean;
  readonly experts?: ExpertLayout;
  /** Where the facts come from. */
  readonly source: string;
  /** Whether the figures were checked against a copy of the config.json while writing this catalog. */
  readonly verified: boolean;
}

interface CatalogRow {
  readonly layers: number;
  readonly hidden: number;
  readonly heads: number;
  readonly kv: number;
  readonly inter: number;
  readonly vocab: number;
  readonly maxPos: number;
  readonly headDim?: number;
  readonly tied?: boolean;
  readonly bias?: boolean;
  readonly experts?: ExpertLayout;
  readonly verified?: boolean;
}

const LLAMA3_VOCAB = 128_256;
const QWEN_SMALL_VOCAB = 151_936;
const QWEN_LARGE_VOCAB = 152_064;

/** config.json facts by Hugging Face id. An `-Instruct` fine-tune shares its base model's shapes. */
const CATALOG: Readonly<Record<string, CatalogRow>> = {
  'meta-llama/Meta-Llama-3-8B': {
    layers: 32,
    hidden: 4096,
    heads: 32,
    kv: 8,
    inter: 14336,
    vocab: LLAMA3_VOCAB,
    maxPos: 8192,
  },
  'meta-llama/Meta-Llama-3-70B': {
    layers: 80,
    hidden: 8192,
    heads: 64,
    kv: 8,
    inter: 28672,
    vocab: LLAMA3_VOCAB,
    maxPos: 8192,
  },
  'meta-llama/Llama-3.1-8B': {
    layers: 32,
    hidden: 4096,
    heads: 32,
    kv: 8,
    inter: 14336,
    vocab: LLAMA3_VOCAB,
    maxPos: 131072,
    verified: true,
  },
  'meta-llama/Llama-3.1-70B': {
    layers: 80,
    hidden: 8192,
    heads: 64,
    kv: 8,
    inter: 28672,
    vocab: LLAMA3_VOCAB,
    maxPos: 131072,
  },
  'meta-llama/Llama-3.1-405B': {
    layers: 126,
    hidden: 16384,
    heads: 128,
    kv: 8,
    inter: 53248,
    vocab: LLAMA3_VOCAB,
    maxPos: 131072,
  },
  'meta-llama/Llama-3.2-1B': {
    layers: 16,
    hidden: 2048,
    heads: 32,
    kv: 8,
    inter: 8192,
    vocab: LLAMA3_VOCAB,
    maxPos: 131072,
    headDim: 64,
    tied: true,
  },
  'meta-llama/Llama-3.2-3B': {
    layers: 28,
    hidden: 3072,
    heads: 24,
    kv: 8,
    inter: 8192,
    vocab: LLAMA3_VOCAB,
    maxPos: 131072,
    tied: true,
  },
  'meta-llama/Llama-3.3-70B': {
    layers: 80,
    hidden: 8192,
    heads: 64,
    kv: 8,
    inter: 28672,
    vocab: LLAMA3_VOCAB,
    maxPos: 131072,
  },
  'Qwen/Qwen2.5-0.5B': {
    layers: 24,
    hidden: 896,
    heads: 14,
    kv: 2,
    inter: 4864,
    vocab: QWEN_SMALL_VOCAB,
    maxPos: 32768,
    tied: true,
    bias: true,
    verified: true,
  },
  'Qwen/Qwen2.5-1.5B': {
    layers: 28,
    hidden: 1536,
    heads: 12,
    kv: 2,
    inter: 8960,
    vocab: QWEN_SMALL_VOCAB,
    maxPos: 32768,
    tied: true,
    bias: true,
    verified: true,
  },
  'Qwen/Qwen2.5-3B': {
    layers: 36,
    hidden: 2048,
    heads: 16,
    kv: 2,
    inter: 11008,
    vocab: QWEN_SMALL_VOCAB,
    maxPos: 32768,
    tied: true,
    bias: true,
    verified: true,
  },
  'Qwen/Qwen2.5-7B': {
    layers: 28,
    hidden: 3584,
    heads: 28,
    kv: 4,
    inter: 18944,
    vocab: QWEN_LARGE_VOCAB,
    maxPos: 32768,
    bias: true,
    verified: true,
  },
  'Qwen/Qwen2.5-14B': {
    layers: 48,
    hidden: 5120,
    heads: 40,
    kv: 8,
    inter: 13824,
    vocab: QWEN_LARGE_VOCAB,
    maxPos: 32768,
    bias: true,
  },
  'Qwen/Qwen2.5-32B': {
    layers: 64,
    hidden: 5120,
    heads: 40,
    kv: 8,
    inter: 27648,
    vocab: QWEN_LARGE_VOCAB,
    maxPos: 32768,
    bias: true,
  },
  'Qwen/Qwen2.5-72B': {
    layers: 80,
    hidden: 8192,
    heads: 64,
    kv: 8,
    inter: 29568,
    vocab: QWEN_LARGE_VOCAB,
    maxPos: 32768,
    bias: true,
  },
  'Qwen/Qwen3-0.6B': {
    layers: 28,
    hidden: 1024,
    heads: 16,
    kv: 8,
    inter: 3072,
    vocab: QWEN_SMALL_VOCAB,
    maxPos: 40960,
    headDim: 128,
    tied: true,
  },
  'Qwen/Qwen3-1.7B': {
    layers: 28,
    hidden: 2048,
    heads: 16,
    kv: 8,
    inter: 6144,
    vocab: QWEN_SMALL_VOCAB,
    maxPos: 40960,
    headDim: 128,
    tied: true,
  },
  'Qwen/Qwen3-4B': {
    layers: 36,
    hidden: 2560,
    heads: 32,
    kv: 8,
    inter: 9728,
    vocab: QWEN_SMALL_VOCAB,
    maxPos: 40960,
    headDim: 128,
    tied: true,
  },
  'Qwen/Qwen3-8B': {
    layers: 36,
    hidden: 4096,
    heads: 32,
    kv: 8,
    inter: 12288,
    vocab: QWEN_SMALL_VOCAB,
    maxPos: 40960,
    headDim: 128,
  },
  'Qwen/Qwen3-14B': {
    layers: 40,
    hidden: 5120,
    heads: 40,
    kv: 8,
    inter: 17408,
    vocab: QWEN_SMALL_VOCAB,
    maxPos: 40960,
    headDim: 128,
  },
  'Qwen/Qwen3-32B': {
    layers: 64,
    hidden: 5120,
    heads: 64,
    kv: 8,
    inter: 25600,
    vocab: QWEN_SMALL_VOCAB,
    maxPos: 40960,
    headDim: 128,
  },
  'Qwen/Qwen3-30B-A3B': {
    layers: 48,
    hidden: 2048,
    heads: 32,
    kv: 4,
    inter: 6144,
    vocab: QWEN_SMALL_VOCAB,
    maxPos: 40960,
    headDim: 128,
    experts: { count: 128, perToken: 8, intermediateSize: 768 },
  },
  'Qwen/Qwen3-235B-A22B': {
    layers: 94,
    hidden: 4096,
    heads: 64,
    kv: 4,
    inter: 12288,
    vocab: QWEN_SMALL_VOCAB,
    maxPos: 40960,
    headDim: 128,
    experts: { count: 128, perToken: 8, intermediateSize: 1536 },
    verified: true,
  },
  'mistralai/Mistral-7B-v0.3': {
    layers: 32,
    hidden: 4096,
    heads: 32,
    kv: 8,
    inter: 14336,
    vocab: 32768,
    maxPos: 32768,
  },
  'mistralai/Mixtral-8x7B-v0.1': {
    layers: 32,
    hidden: 4096,
    heads: 32,
    kv: 8,
    inter: 14336,
    vocab: 32000,
    maxPos: 32768,
    experts: { count: 8, perToken: 2, intermediateSize: 14336 },
  },
  'mistralai/Mixtral-8x22B-v0.1': {
    layers: 56,
    hidden: 6144,
    heads: 48,
    kv: 8,
    inter: 16384,
    vocab: 32000,
    maxPos: 65536,
    experts: { count: 8, perToken: 2, intermediateSize: 16384 },
  },
  'deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B': {
    layers: 28,
    hidden: 1536,
    heads: 12,
    kv: 2,
    inter: 8960,
    vocab: QWEN_SMALL_VOCAB,
    maxPos: 131072,
    bias: true,
  },
  'deepseek-ai/DeepSeek-R1-Distill-Qwen-7B': {
    layers: 28,
    hidden: 3584,
    heads: 28,
    kv: 4,
    inter: 18944,
    vocab: QWEN_LARGE_VOCAB,
    maxPos: 131072,
    bias: true,
  },
  'deepseek-ai/DeepSeek-R1-Distill-Qwen-14B': {
    layers: 48,
    hidden: 5120,
    heads: 40,
    kv: 8,
    inter: 13824,
    vocab: QWEN_LARGE_VOCAB,
    maxPos: 131072,
    bias: true,
  },
  'deepseek-ai/DeepSeek-R1-Distill-Qwen-32B': {
    layers: 64,
    hidden: 5120,
    heads: 40,
    kv: 8,
    inter: 27648,
    vocab: QWEN_LARGE_VOCAB,
    maxPos: 131072,
    bias: true,
  },
  'deepseek-ai/DeepSeek-R1-Distill-Llama-8B': {
    layers: 32,
    hidden: 4096,
    heads: 32,
    kv: 8,
    inter: 14336,
    vocab: LLAMA3_VOCAB,
    maxPos: 131072,
  },
  'deepseek-ai/DeepSeek-R1-Distill-Llama-70B': {
    layers: 80,
    hidden: 8192,
    heads: 64,
    kv: 8,
    inter: 28672,
    vocab: LLAMA3_VOCAB,
    maxPos: 131072,
  },
};

/** The catalog's key of a model id: case-insensitive, an `-Instruct` part ignored (`Mistral-7B-Instruct-v0.3`). */
function catalogKey(modelId: string): string {
  return modelId
    .trim()
    .toLowerCase()
    .replace(/-instruct(?=-v\d|$)/, '');
}

const BY_KEY = new Map(Object.keys(CATALOG).map((id) => [catalogKey(id), id]));

function fromRow(id: string, row: CatalogRow): ModelArchitecture {
  return {
    id,
    layers: row.layers,
    hiddenSize: row.hidden,
    attentionHeads: row.heads,
    kvHeads: row.kv,
    headDim: row.headDim ?? row.hidden / row.heads,
    intermediateSize: row.inter,
    vocabSize: row.vocab,
    maxPositionEmbeddings: row.maxPos,
    bytesPerWeight: 2,
    tiedEmbeddings: row.tied ?? false,
    attentionBias: row.bias ?? false,
    ...(row.experts ? { experts: row.experts } : {}),
    source: `https://huggingface.co/${id}/blob/main/config.json`,
    verified: row.verified ?? false,
  };
}

/** The ids the catalog knows (base models; their `-Instruct` fine-tunes are found too). */
export const CATALOGUED_MODEL_IDS: readonly string[] = Object.keys(CATALOG);

/** A catalogued model's architecture, under the id it was asked for, or undefined. */
export function catalogedArchitecture(modelId: string | undefined): ModelArchitecture | undefined {
  if (modelId === undefined) return undefined;
  const id = BY_KEY.get(catalogKey(modelId));
  return id === undefined ? undefined : { ...fromRow(id, CATALOG[id]), id: modelId.trim() };
}

/** Attention and key/value heads: what vLLM's sharding rule reads. */
export interface ModelHeads {
  readonly attentionHeads: number;
  readonly kvHeads: number;
}

/**
 * Whether vLLM can shard the model over `tensorParallelSize` GPUs. vLLM's rules, both checked before any weight
 * loads (the engine exits otherwise): the attention heads split evenly ("Total number of attention heads (H) must be
 * divisible by tensor parallel size (T)", `ModelConfig.verify_with_parallel_config` in vllm/config/model.py), and
 * the key/value heads either split evenly (T ≤ KV: KV % T = 0) or are replicated a whole number of times
 * (T > KV: T % KV = 0; `QKVParallelLinear` in vllm/model_executor/layers/linear.py).
 */
export function headsAllowTensorParallel(heads: ModelHeads, tensorParallelSize: number): boolean {
  const kvFits =
    tensorParallelSize <= heads.kvHeads
      ? heads.kvHeads % tensorParallelSize === 0
      : tensorParallelSize % heads.kvHeads === 0;
  return heads.attentionHeads % tensorParallelSize === 0 && kvFits;
}

/** The divisors of `gpus` the model can be sharded over, ascending: the tensor parallel sizes that fit and start. */
export function allowedTensorParallelSizes(heads: ModelHeads, gpus: number): number[] {
  const sizes: number[] = [];
  for (let size = 1; size <= gpus; size++)
    if (gpus % size === 0 && headsAllowTensorParallel(heads, size)) sizes.push(size);
  return sizes;
}
