import fc from 'fast-check';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  allowedTensorParallelSizes,
  catalogedArchitecture,
  CATALOGUED_MODEL_IDS,
  headsAllowTensorParallel,
} from '../../../router/src/emulator/model-architecture';
import { loadModelConfigFile, parseModelConfig } from '../../../router/src/emulator/model-config-file';

/** Qwen2.5-7B-Instruct's config.json, the fields the parser reads (https://huggingface.co/Qwen/Qwen2.5-7B-Instruct). */
const QWEN_7B_CONFIG = {
  architectures: ['Qwen2ForCausalLM'],
  model_type: 'qwen2',
  hidden_size: 3584,
  intermediate_size: 18944,
  max_position_embeddings: 32768,
  num_attention_heads: 28,
  num_hidden_layers: 28,
  num_key_value_heads: 4,
  tie_word_embeddings: false,
  torch_dtype: 'bfloat16',
  vocab_size: 152064,
};

describe('when a model is looked up in the catalog', () => {
  test('GIVEN an -Instruct id in any case THEN the base shapes come back under the id asked for', () => {
    const qwen = catalogedArchitecture('qwen/QWEN2.5-7B-instruct');
    expect(qwen).toMatchObject({ id: 'qwen/QWEN2.5-7B-instruct', layers: 28, attentionHeads: 28, kvHeads: 4 });
    expect(qwen?.source).toBe('https://huggingface.co/Qwen/Qwen2.5-7B/blob/main/config.json');
    expect(catalogedArchitecture('mistralai/Mistral-7B-Instruct-v0.3')?.kvHeads).toBe(8);
    expect(catalogedArchitecture('acme/private-model')).toBeUndefined();
  });

  test('GIVEN every catalogued model THEN its shapes are whole, its heads divide its width and it cites a config.json', () => {
    for (const id of CATALOGUED_MODEL_IDS) {
      const a = catalogedArchitecture(id)!;
      expect(Number.isInteger(a.headDim)).toBe(true);
      expect(a.attentionHeads % a.kvHeads).toBe(0);
      expect(a.source).toMatch(/^https:\/\/huggingface\.co\/.+\/config\.json$/);
    }
  });

  test("GIVEN any heads and GPU count THEN every allowed size divides the GPUs and passes vLLM's rule", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 128 }),
        fc.integer({ min: 1, max: 16 }),
        fc.integer({ min: 1, max: 16 }),
        (kv, group, gpus) => {
          const heads = { attentionHeads: kv * group, kvHeads: kv };
          const sizes = allowedTensorParallelSizes(heads, gpus);
          expect(sizes[0]).toBe(1);
          for (const size of sizes) {
            expect(gpus % size).toBe(0);
            expect(headsAllowTensorParallel(heads, size)).toBe(true);
          }
        },
      ),
    );
  });
});

describe('when --model-config reads a config.json', () => {
  test("GIVEN Qwen2.5-7B's config.json THEN it equals the catalog's entry but for where it came from", () => {
    const parsed = parseModelConfig(QWEN_7B_CONFIG, 'config.json', 'Qwen/Qwen2.5-7B-Instruct');
    const { source: _s, verified: _v, ...catalogued } = catalogedArchitecture('Qwen/Qwen2.5-7B-Instruct')!;
    const { source, verified: _pv, ...fromFile } = parsed;
    expect(fromFile).toEqual(catalogued);
    expect(source).toBe('config file config.json');
  });

  test('GIVEN a Mixtral-style and a Qwen3-MoE-style file THEN the experts are read from either field set', () => {
    const mixtral = parseModelConfig(
      { ...QWEN_7B_CONFIG, model_type: 'mixtral', num_local_experts: 8, num_experts_per_tok: 2 },
      'm.json',
    );
    expect(mixtral.experts).toEqual({ count: 8, perToken: 2, intermediateSize: 18944 });
    const qwen3 = parseModelConfig(
      { ...QWEN_7B_CONFIG, num_experts: 128, num_experts_per_tok: 8, moe_intermediate_size: 768 },
      'q.json',
    );
    expect(qwen3.experts).toEqual({ count: 128, perToken: 8, intermediateSize: 768 });
  });

  test('GIVEN an FP8 checkpoint THEN a weight is one byte', () => {
    expect(
      parseModelConfig({ ...QWEN_7B_CONFIG, quantization_config: { quant_method: 'fp8' } }, 'f.json').bytesPerWeight,
    ).toBe(1);
  });

  test.each([
    [
      { ...QWEN_7B_CONFIG, num_hidden_layers: undefined },
      '"num_hidden_layers" must be a whole number ≥ 1, got undefined',
    ],
    [{ ...QWEN_7B_CONFIG, hidden_size: 0 }, '"hidden_size" must be a whole number ≥ 1, got 0'],
    [{ ...QWEN_7B_CONFIG, torch_dtype: 'int8' }, '"torch_dtype" must be one of bfloat16, float16, float32, got "int8"'],
    [{ ...QWEN_7B_CONFIG, quantization_config: { quant_method: 'awq' } }, '"quantization_config" is "awq"'],
    [
      { ...QWEN_7B_CONFIG, num_experts: 8, num_experts_per_tok: 9 },
      '"num_experts_per_tok" must be a whole number in [1, 8], got 9',
    ],
    [{ ...QWEN_7B_CONFIG, kv_lora_rank: 512 }, '"kv_lora_rank" is multi-head latent attention'],
    [[1, 2], '"(top level)" must be a JSON object'],
  ])('GIVEN a bad file (%#) THEN the error names the file and the field', (config, message) => {
    expect(() => parseModelConfig(config, 'bad.json')).toThrow(`--model-config bad.json: ${message}`);
  });

  test('GIVEN a file that is not JSON THEN the error names the file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'model-config-'));
    const file = join(dir, 'config.json');
    writeFileSync(file, '{ not json');
    expect(() => loadModelConfigFile(file)).toThrow(`--model-config: cannot read ${file} as JSON`);
    writeFileSync(file, JSON.stringify({ ...QWEN_7B_CONFIG, _name_or_path: 'acme/qwen-ft' }));
    expect(loadModelConfigFile(file).id).toBe('acme/qwen-ft');
  });
});
