import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtinProfile, loadProfileFile, prefillTokensPerSecond } from '../../../router/src/emulator/engine-profile';
import { EngineModel } from '../../../router/src/emulator/engine-model';

/**
 * The profiles of the fallback types `instancePools` offers for Llama 3.1 70B are derived, not measured: every
 * step-time coefficient is the p5 profile's scaled by a ratio of published peak figures. These are the figures the
 * profiles cite (their `sources`), and each coefficient must be what its stated derivation gives, to rounding.
 */
const PUBLISHED = {
  // https://www.nvidia.com/en-us/data-center/h100/ — H100 SXM: 1,979 BF16 TFLOPS with sparsity (989.4 dense), 3.35 TB/s.
  h100: { bf16DenseTflops: 989.4, hbmTbPerSecond: 3.35, memoryGb: 80 },
  // https://www.nvidia.com/en-us/data-center/h200/ — H200 SXM: the H100's compute, 141 GB at 4.8 TB/s.
  h200: { bf16DenseTflops: 989.4, hbmTbPerSecond: 4.8, memoryGb: 141 },
  // NVIDIA A100 datasheet — A100 SXM: 312 BF16 TFLOPS dense; 80 GB HBM2e at 2,039 GB/s; 40 GB HBM2 at 1,555 GB/s.
  a100x80: { bf16DenseTflops: 312, hbmTbPerSecond: 2.039, memoryGb: 80 },
  a100x40: { bf16DenseTflops: 312, hbmTbPerSecond: 1.555, memoryGb: 40 },
} as const;

const p5 = builtinProfile('p5-llama-3.1-70b');
const CASES: readonly (readonly [string, keyof typeof PUBLISHED])[] = [
  ['p5e-llama-3.1-70b', 'h200'],
  ['p4de-llama-3.1-70b', 'a100x80'],
  ['p4d-llama-3.1-70b', 'a100x40'],
];

/** Within the 3-significant-digit rounding the notes state. */
const closeTo = (value: number, expected: number) => expect(Math.abs(value - expected) / expected).toBeLessThan(0.005);

describe('when a fallback profile is derived from the p5 profile', () => {
  test.each(CASES)(
    'GIVEN %s THEN its compute terms are p5’s × the published BF16 ratio and its memory terms × the bandwidth ratio',
    (name, gpu) => {
      const profile = builtinProfile(name);
      const compute = PUBLISHED.h100.bf16DenseTflops / PUBLISHED[gpu].bf16DenseTflops;
      const bandwidth = PUBLISHED.h100.hbmTbPerSecond / PUBLISHED[gpu].hbmTbPerSecond;
      closeTo(profile.stepTime.usPerScheduledToken, p5.stepTime.usPerScheduledToken * compute);
      closeTo(profile.stepTime.attentionNsPerTokenPair, p5.stepTime.attentionNsPerTokenPair * compute);
      closeTo(profile.stepTime.decodeFloorMs, p5.stepTime.decodeFloorMs * bandwidth);
      closeTo(profile.stepTime.decodeNsPerContextToken, p5.stepTime.decodeNsPerContextToken * bandwidth);
      expect(profile.stepTime.baseMs).toBe(p5.stepTime.baseMs);
    },
  );

  test.each(CASES)(
    'GIVEN %s THEN its KV capacity is the p5 arithmetic on this GPU’s memory, rounded down to 1,000 blocks',
    (name, gpu) => {
      const profile = builtinProfile(name);
      // 8 GPUs × memory × 0.9 − 141 GB of weights − ~20 GB, counted in GiB as the p5 note does, / 320 KiB per token.
      const tokens = ((8 * PUBLISHED[gpu].memoryGb * 0.9 - 141 - 20) * 2 ** 30) / (320 * 1024);
      expect(profile.kvCapacityBlocks).toBe(Math.floor(tokens / 16 / 1000) * 1000);
      // The same arithmetic gives the p5 profile's own figure.
      expect(Math.floor(((8 * PUBLISHED.h100.memoryGb * 0.9 - 161) * 2 ** 30) / (320 * 1024) / 16 / 1000) * 1000).toBe(
        p5.kvCapacityBlocks,
      );
    },
  );

  test.each(CASES)(
    'GIVEN %s THEN every number has a note, every source a URL and dates, and no figure is a fit',
    (name) => {
      const profile = builtinProfile(name);
      const notes = profile.notes ?? {};
      for (const field of Object.keys(profile.stepTime)) expect(Object.keys(notes)).toContain(`stepTime.${field}`);
      for (const field of [
        'kvCapacityBlocks',
        'maxNumBatchedTokens',
        'maxNumSeqs',
        'requestOverheadMs',
        'method',
        'validation',
      ])
        expect(Object.keys(notes)).toContain(field);
      expect(notes.method).toMatch(/not fitted/);
      expect(profile.sources!.length).toBeGreaterThanOrEqual(3);
      for (const source of profile.sources!) {
        expect(source.url).toMatch(/^https:\/\//);
        expect(source.published).toMatch(/^\d{4}-\d{2}/);
        expect(source.cited).toMatch(/^\d{4}-\d{2}-\d{2}$/);
      }
    },
  );

  test('GIVEN the fallback types THEN p4d is the slowest to prefill and holds the least KV: the one the mixed-fleet benchmark uses', () => {
    const speeds = Object.fromEntries(
      ['p5-llama-3.1-70b', ...CASES.map(([n]) => n)].map((n) => [n, prefillTokensPerSecond(builtinProfile(n))]),
    );
    expect(speeds['p5e-llama-3.1-70b']).toBeCloseTo(speeds['p5-llama-3.1-70b'], 6);
    expect(speeds['p4de-llama-3.1-70b']).toBeCloseTo(speeds['p4d-llama-3.1-70b'], 6);
    expect(speeds['p4d-llama-3.1-70b'] / speeds['p5-llama-3.1-70b']).toBeCloseTo(1 / 3.15, 1);
    const kv = CASES.map(([n]) => builtinProfile(n).kvCapacityBlocks);
    expect(Math.min(...kv)).toBe(builtinProfile('p4d-llama-3.1-70b').kvCapacityBlocks);
  });

  test('GIVEN prefillTokensPerSecond THEN it is what the engine model computes for one full step of uncached prompt', () => {
    for (const profile of [p5, builtinProfile('p4d-llama-3.1-70b')]) {
      const engine = new EngineModel(profile);
      engine.submit(
        { id: 'r', promptTokens: profile.maxNumBatchedTokens + 1, blockHashes: new Int32Array(0), maxTokens: 1 },
        0,
      );
      // The first step computes exactly maxNumBatchedTokens of the prompt; its end is when the engine next runs.
      const events = engine.runUntil(1e9, { stopAfterFinish: false, lookahead: false });
      const firstToken = events.find((e) => e.type === 'first-token')!;
      // Two steps: a full one, then one token (plus its attention to the rest). The full step alone is the capacity.
      const oneStepMs = (profile.maxNumBatchedTokens / prefillTokensPerSecond(profile)) * 1000;
      expect(firstToken.timeMs - profile.requestOverheadMs).toBeGreaterThan(oneStepMs);
      expect(firstToken.timeMs - profile.requestOverheadMs).toBeLessThan(
        oneStepMs + profile.stepTime.baseMs + profile.stepTime.decodeFloorMs + 1,
      );
    }
  });

  test('GIVEN a profile file with a source missing its url THEN it is refused naming the field', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fallback-profiles-'));
    const path = join(dir, 'bad.json');
    const profile = builtinProfile('p4d-llama-3.1-70b');
    writeFileSync(path, JSON.stringify({ ...profile, sources: [{ ...profile.sources![0], url: '' }] }));
    expect(() => loadProfileFile(path)).toThrow(/"sources\[0\]\.url" must be a non-empty string/);
    writeFileSync(path, JSON.stringify({ ...profile, sources: [{ ...profile.sources![0], doi: 'x' }] }));
    expect(() => loadProfileFile(path)).toThrow(/unknown field "sources\[0\]\.doi"/);
  });
});
