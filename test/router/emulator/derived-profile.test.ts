import fc from 'fast-check';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { InstanceType } from '../../../lib/instance-type';
import { derivedProfilesMarkdown, DERIVED_MARKERS } from '../../../router/bench/derived-profiles';
import {
  ACTIVATION_RESERVE_GIB,
  deriveFor,
  derivedProfileChecks,
  DERIVED_TARGET,
  typesThatFit,
  unfitReason,
} from '../../../router/src/emulator/derived-profile';
import { GPU_SPECS, INSTANCE_GPUS } from '../../../router/src/emulator/gpu-catalog';
import { catalogedArchitecture, CATALOGUED_MODEL_IDS } from '../../../router/src/emulator/model-architecture';

const GIB = 2 ** 30;

describe('when the GPU catalog is held to the construct', () => {
  test("GIVEN the construct's instance catalog THEN the router's copy has the same types, GPU counts and GPUs, in order", () => {
    const construct = InstanceType.catalogEntries().map((t) => [t.name, t.gpuCount, t.gpuModel]);
    const router = Object.entries(INSTANCE_GPUS).map(([name, g]) => [name, g.gpuCount, g.gpu]);
    expect(router).toEqual(construct);
  });

  test('GIVEN every GPU the catalog names THEN it has datasheet figures and a source', () => {
    for (const { gpu } of Object.values(INSTANCE_GPUS)) {
      expect(GPU_SPECS[gpu]).toMatchObject({ name: gpu });
      expect(GPU_SPECS[gpu].source).toMatch(/^https:\/\/www\.nvidia\.com\//);
    }
  });
});

describe('when a profile is derived', () => {
  test('GIVEN Qwen2.5-7B on one L40S THEN tensor parallel 1 and the KV capacity is the memory left over', () => {
    const derived = deriveFor('Qwen/Qwen2.5-7B-Instruct', 'ml.g6e.2xlarge');
    expect(derived.tensorParallelSize).toBe(1);
    const qwen = catalogedArchitecture('Qwen/Qwen2.5-7B')!;
    const kvPerToken = 2 * qwen.layers * qwen.kvHeads * qwen.headDim * 2; // 56 KiB
    const free = 48 * GIB * 0.9 - derived.weightGiBPerGpu * GIB - ACTIVATION_RESERVE_GIB * GIB;
    expect(derived.kvCapacityTokens).toBe(Math.floor(free / kvPerToken));
    expect(derived.weightGiBPerGpu).toBeGreaterThan(14);
    expect(derived.weightGiBPerGpu).toBeLessThan(14.3); // 7.62 B parameters × 2 bytes = 15.2 GB
    expect(derived.profile).toMatchObject({ maxNumBatchedTokens: 2048, maxNumSeqs: 256, maxModelLen: 32768 });
    expect(derived.profile.notes?.errorBand).toMatch(/vs p5-llama-3.1-70b/);
  });

  test('GIVEN Qwen2.5-7B on a p5 THEN the construct’s tensor parallel 4 (28 heads), not 8', () => {
    expect(deriveFor('Qwen/Qwen2.5-7B-Instruct', 'ml.p5.48xlarge').tensorParallelSize).toBe(4);
  });

  test('GIVEN Llama 3.1 70B on one L40S THEN it is refused, naming why and the smallest types that fit', () => {
    expect(() => deriveFor('meta-llama/Llama-3.1-70B-Instruct', 'ml.g6e.2xlarge')).toThrow(
      /cannot run on ml\.g6e\.2xlarge: its weights \(131\.\d GiB\) do not fit: .*; the smallest types it fits: ml\.g5\.48xlarge, ml\.g6\.48xlarge, ml\.g6e\.12xlarge/,
    );
  });

  test('GIVEN a model whose heads leave GPUs unused THEN the refusal says so', () => {
    const wide = { ...catalogedArchitecture('Qwen/Qwen2.5-7B')!, id: 'acme/wide', layers: 400 };
    expect(unfitReason({ model: wide, instanceType: 'ml.g6e.48xlarge' })).toMatch(
      /allow tensor parallel 1, 2, 4 of the 8 GPUs, not all/,
    );
  });

  test('GIVEN a model outside the catalog or a type outside it THEN the error says what works', () => {
    expect(() => deriveFor('acme/private', 'ml.g6e.2xlarge')).toThrow(/pass its config\.json with --model-config FILE/);
    expect(() => deriveFor('Qwen/Qwen2.5-7B', 'ml.g6e.2xlarg')).toThrow(
      /ml\.g6e\.2xlarg is not in the instance catalog/,
    );
  });

  test('GIVEN any catalogued model and type THEN it is refused or its profile validates, and fitting is monotone in memory', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...CATALOGUED_MODEL_IDS),
        fc.constantFrom(...Object.keys(INSTANCE_GPUS)),
        (id, type) => {
          const why = unfitReason({ model: catalogedArchitecture(id)!, instanceType: type });
          if (why === undefined) expect(deriveFor(id, type).profile.kvCapacityBlocks).toBeGreaterThanOrEqual(128);
          else expect(typesThatFit(catalogedArchitecture(id)!)).not.toContain(type);
        },
      ),
      { numRuns: 60 },
    );
  });
});

describe('when derived profiles are checked', () => {
  test('GIVEN the H200 measurements and the shipped p5 profile THEN prefill and decode are within ±15 %', () => {
    const checks = derivedProfileChecks().filter((c) => !c.reference.startsWith('p4d'));
    expect(checks).toHaveLength(4);
    for (const c of checks) expect(Math.abs(c.error)).toBeLessThanOrEqual(DERIVED_TARGET);
  });

  test('GIVEN docs/emulator.md THEN its table is what npm run bench:derived-profiles prints', () => {
    const docs = readFileSync(join(__dirname, '../../../docs/emulator.md'), 'utf8');
    const block = docs.slice(
      docs.indexOf(DERIVED_MARKERS.begin) + DERIVED_MARKERS.begin.length,
      docs.indexOf(DERIVED_MARKERS.end),
    );
    expect(block.trim()).toBe(derivedProfilesMarkdown().trim());
  });
});
