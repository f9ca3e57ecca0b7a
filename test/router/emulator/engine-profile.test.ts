import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  BUILTIN_PROFILE_NAMES,
  builtinProfile,
  loadProfileFile,
  ProfileError,
  resolveProfile,
  validateProfile,
} from '../../../router/src/emulator/engine-profile';

const p5 = builtinProfile('p5-llama-3.1-70b');

describe('engine profiles', () => {
  test('GIVEN the built-in names THEN every profile loads and p5 carries the DESIGN.md §5 numbers', () => {
    expect(BUILTIN_PROFILE_NAMES).toEqual([
      'p5-llama-3.1-70b',
      'p5e-llama-3.1-70b',
      'p4de-llama-3.1-70b',
      'p4d-llama-3.1-70b',
      'h200-llama-3.1-8b',
      'tiny',
    ]);
    for (const name of BUILTIN_PROFILE_NAMES) expect(builtinProfile(name).name).toBe(name);
    expect(p5).toMatchObject({
      blockTokens: 16,
      kvCapacityBlocks: 84000,
      maxNumBatchedTokens: 8192,
      maxNumSeqs: 1024,
      requestOverheadMs: 20,
      stepTime: {
        baseMs: 5,
        decodeFloorMs: 6.6,
        decodeNsPerContextToken: 17,
        usPerScheduledToken: 45,
        attentionNsPerTokenPair: 0.83,
      },
    });
    expect(builtinProfile('tiny').kvCapacityBlocks).toBe(128);
  });

  test('GIVEN h200-llama-3.1-8b THEN it holds one H200 of Llama 3.1 8B KV and every number has a note', () => {
    const h200 = builtinProfile('h200-llama-3.1-8b');
    expect(h200).toMatchObject({
      modelName: 'meta-llama/Llama-3.1-8B-Instruct',
      blockTokens: 16,
      maxNumBatchedTokens: 8192,
      maxModelLen: 131072,
    });
    // 128 KiB of KV per token (2 x 32 layers x 8 heads x 128 x 2 bytes) into ~108 GB: 800k-850k tokens.
    const kvBytes = h200.kvCapacityBlocks * h200.blockTokens * 2 * 32 * 8 * 128 * 2;
    expect(kvBytes).toBeGreaterThan(100e9);
    expect(kvBytes).toBeLessThan(141e9 * 0.9 - 16.06e9);
    const documented = Object.keys(h200.notes ?? {});
    for (const field of [
      'kvCapacityBlocks',
      'maxNumBatchedTokens',
      'maxNumSeqs',
      'maxModelLen',
      'requestOverheadMs',
      'blockTokens',
      'defaultMaxTokens',
    ]) {
      expect(documented).toContain(field);
    }
    for (const field of Object.keys(h200.stepTime)) expect(documented).toContain(`stepTime.${field}`);
  });

  test('GIVEN an unknown name THEN the error lists the built-in profiles', () => {
    expect(() => builtinProfile('p4')).toThrow(
      /unknown profile "p4": expected one of p5-llama-3.1-70b, p5e-llama-3.1-70b, p4de-llama-3.1-70b, p4d-llama-3.1-70b, h200-llama-3.1-8b, tiny/,
    );
  });

  describe('when loading from a file', () => {
    const dir = mkdtempSync(join(tmpdir(), 'profiles-'));

    test('GIVEN a valid JSON file THEN it loads, by path or via resolveProfile', () => {
      const path = join(dir, 'custom.json');
      writeFileSync(path, JSON.stringify({ ...p5, name: 'custom', kvCapacityBlocks: 90000 }));
      expect(loadProfileFile(path).kvCapacityBlocks).toBe(90000);
      expect(resolveProfile(path).name).toBe('custom');
    });

    test('GIVEN a missing file or broken JSON THEN the error names the file', () => {
      expect(() => loadProfileFile(join(dir, 'nope.json'))).toThrow(/cannot read profile file .*nope\.json/);
      const broken = join(dir, 'broken.json');
      writeFileSync(broken, '{ "name": ');
      expect(() => loadProfileFile(broken)).toThrow(/broken\.json is not valid JSON/);
    });
  });

  describe('when validating', () => {
    test.each([
      ['blockTokens', 0, /"blockTokens" must be an integer in \[1, 1024\], got 0/],
      ['kvCapacityBlocks', 1.5, /"kvCapacityBlocks" must be an integer/],
      ['maxNumSeqs', -1, /"maxNumSeqs" must be an integer in \[1, /],
      ['requestOverheadMs', 'fast', /"requestOverheadMs" must be a number in \[0, 60000\], got "fast"/],
      ['name', '', /"name" must be a non-empty string/],
      ['stepTime', 5, /"stepTime" must be an object/],
      ['surprise', 1, /unknown field "surprise"/],
    ])('GIVEN %s = %p THEN it is rejected with a message naming the field', (field, value, message) => {
      expect(() => validateProfile({ ...p5, [field]: value })).toThrow(message);
    });

    test('GIVEN a step-time coefficient out of range or unknown THEN the nested field is named', () => {
      expect(() => validateProfile({ ...p5, stepTime: { ...p5.stepTime, usPerScheduledToken: -1 } })).toThrow(
        /"stepTime.usPerScheduledToken"/,
      );
      expect(() => validateProfile({ ...p5, stepTime: { ...p5.stepTime, extra: 1 } })).toThrow(
        /unknown field "stepTime.extra"/,
      );
    });

    test('GIVEN maxModelLen larger than the KV cache THEN it is rejected (a maximal request could never run)', () => {
      expect(() => validateProfile({ ...p5, kvCapacityBlocks: 100, maxModelLen: 1601 })).toThrow(ProfileError);
      expect(validateProfile({ ...p5, kvCapacityBlocks: 100, maxModelLen: 1600 }).maxModelLen).toBe(1600);
    });

    test('GIVEN a valid profile THEN the result is frozen', () => {
      expect(Object.isFrozen(validateProfile(p5))).toBe(true);
      expect(Object.isFrozen(validateProfile(p5).stepTime)).toBe(true);
    });
  });
});
