/**
 * `--model-config FILE`: a model's architecture from its Hugging Face config.json, for models the catalog
 * (model-architecture.ts) does not list, e.g. a private fine-tune. Field names are those of transformers'
 * `PretrainedConfig` subclasses (LlamaConfig, Qwen2Config, Qwen3Config, Qwen3MoeConfig, MistralConfig,
 * MixtralConfig); a file that lacks one, or has a shape this model cannot price, is refused naming the file and field.
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from '../common/config-error';
import type { ExpertLayout, ModelArchitecture } from './model-architecture';

/** Bytes per weight of the `torch_dtype` (or `dtype`) values vLLM serves unquantized. */
const DTYPE_BYTES: Readonly<Record<string, number>> = { bfloat16: 2, float16: 2, float32: 4 };

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Reads and checks a config.json; `modelId` names the model in reports (default: the file's `_name_or_path`). */
export function loadModelConfigFile(path: string, modelId?: string): ModelArchitecture {
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new ConfigError([`--model-config: cannot read ${path} as JSON: ${(err as Error).message}`]);
  }
  return parseModelConfig(parsed, path, modelId);
}

/** A config.json's parsed object as an architecture; `where` names it in errors. */
export function parseModelConfig(value: unknown, where: string, modelId?: string): ModelArchitecture {
  const fail = (field: string, why: string): never => {
    throw new ConfigError([`--model-config ${where}: "${field}" ${why}`]);
  };
  if (!isRecord(value)) return fail('(top level)', 'must be a JSON object (a Hugging Face config.json)');
  const positive = (field: string, fallback?: number): number => {
    const raw = value[field] ?? fallback;
    if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 1)
      return fail(field, `must be a whole number ≥ 1, got ${JSON.stringify(raw)}`);
    return raw;
  };
  if ('n_routed_experts' in value || 'kv_lora_rank' in value)
    fail('kv_lora_rank', 'is multi-head latent attention (DeepSeek-V2/V3), which the derived profile cannot price');
  const hiddenSize = positive('hidden_size');
  const attentionHeads = positive('num_attention_heads');
  const architecture: ModelArchitecture = {
    id:
      modelId ?? (typeof value._name_or_path === 'string' && value._name_or_path !== '' ? value._name_or_path : where),
    layers: positive('num_hidden_layers'),
    hiddenSize,
    attentionHeads,
    kvHeads: positive('num_key_value_heads', attentionHeads),
    headDim: positive('head_dim', hiddenSize / attentionHeads),
    intermediateSize: positive('intermediate_size'),
    vocabSize: positive('vocab_size'),
    maxPositionEmbeddings: positive('max_position_embeddings'),
    bytesPerWeight: bytesPerWeight(value, fail),
    tiedEmbeddings: value.tie_word_embeddings === true,
    attentionBias: value.model_type === 'qwen2' || value.attention_bias === true,
    source: `config file ${where}`,
    verified: true,
  };
  const experts = expertLayout(value, architecture.intermediateSize, fail);
  return experts === undefined ? architecture : { ...architecture, experts };
}

type Fail = (field: string, why: string) => never;

function bytesPerWeight(value: Record<string, unknown>, fail: Fail): number {
  const quantization = value.quantization_config;
  if (quantization !== undefined) {
    if (isRecord(quantization) && quantization.quant_method === 'fp8') return 1;
    return fail(
      'quantization_config',
      `is ${JSON.stringify(isRecord(quantization) ? quantization.quant_method : quantization)}: only FP8 checkpoints ("fp8") and unquantized bfloat16/float16 are priced`,
    );
  }
  const field = value.torch_dtype !== undefined ? 'torch_dtype' : 'dtype';
  const dtype = value[field] ?? 'bfloat16';
  const bytes = typeof dtype === 'string' ? DTYPE_BYTES[dtype] : undefined;
  return bytes ?? fail(field, `must be one of ${Object.keys(DTYPE_BYTES).join(', ')}, got ${JSON.stringify(dtype)}`);
}

function expertLayout(value: Record<string, unknown>, denseWidth: number, fail: Fail): ExpertLayout | undefined {
  const countField = value.num_local_experts !== undefined ? 'num_local_experts' : 'num_experts';
  const count = value[countField];
  if (count === undefined || count === 0) return undefined;
  const perToken = value.num_experts_per_tok;
  const width = value.moe_intermediate_size ?? denseWidth;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1)
    return fail(countField, `must be a whole number ≥ 1, got ${JSON.stringify(count)}`);
  if (typeof perToken !== 'number' || !Number.isInteger(perToken) || perToken < 1 || perToken > count)
    return fail('num_experts_per_tok', `must be a whole number in [1, ${count}], got ${JSON.stringify(perToken)}`);
  if (typeof width !== 'number' || !Number.isInteger(width) || width < 1)
    return fail('moe_intermediate_size', `must be a whole number ≥ 1, got ${JSON.stringify(width)}`);
  return { count, perToken, intermediateSize: width };
}
