import fc from 'fast-check';
import {
  blockHashes,
  cacheableHitTokens,
  characterBlockHashes,
  tokenCount,
} from '../../../router/src/state/block-hash';

describe('block hashing', () => {
  test('GIVEN a 64-character block size WHEN a text has 130 characters THEN it has 2 full blocks and 33 tokens', () => {
    const text = 'x'.repeat(130);
    expect(blockHashes(text)).toHaveLength(2);
    expect(tokenCount(text)).toBe(33);
  });

  test('two texts share block i exactly when they share every character up to the end of block i', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 300 }),
        fc.string({ maxLength: 200 }),
        fc.string({ maxLength: 200 }),
        (shared, x, y) => {
          const a = shared + x;
          const b = shared + y;
          const ha = blockHashes(a);
          const hb = blockHashes(b);
          for (let i = 0; i < Math.min(ha.length, hb.length); i++) {
            const samePrefix = a.slice(0, (i + 1) * 64) === b.slice(0, (i + 1) * 64);
            expect(ha[i] === hb[i]).toBe(samePrefix);
          }
        },
      ),
    );
  });

  test('a change in an early block changes every later hash (chaining)', () => {
    const base = 'a'.repeat(64 * 4);
    const changed = 'b' + base.slice(1);
    const h1 = blockHashes(base);
    const h2 = blockHashes(changed);
    h1.forEach((h, i) => expect(h2[i]).not.toBe(h));
    // Identical block contents at different positions still hash differently.
    expect(new Set(h1).size).toBe(4);
  });

  test('a seed separates namespaces and maxBlocks bounds the work', () => {
    const text = 'q'.repeat(64 * 3);
    expect(blockHashes(text, { seed: 'tenant-a' })[0]).not.toBe(blockHashes(text, { seed: 'tenant-b' })[0]);
    expect(blockHashes(text, { maxBlocks: 2 })).toEqual(blockHashes(text).slice(0, 2));
  });

  test('hashes are safe integers', () => {
    for (const h of blockHashes('z'.repeat(64 * 50))) expect(Number.isSafeInteger(h) && h >= 0).toBe(true);
  });

  test('GIVEN blocks in characters THEN whole-token sizes hash as blockHashes, and any size keeps the prefix rule', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 200 }),
        fc.string({ maxLength: 40 }),
        fc.integer({ min: 1, max: 9 }),
        (t, u, size) => {
          // The same chain as blockHashes where the size is whole tokens (here 2 tokens, 8 characters)
          expect(Array.from(characterBlockHashes(t, 8, 'seed'))).toEqual(
            blockHashes(t, { blockTokens: 2, seed: 'seed' }),
          );
          const a = characterBlockHashes(t, size, 'seed');
          const b = characterBlockHashes(t + u, size, 'seed');
          expect(a).toHaveLength(Math.floor(t.length / size));
          expect(Array.from(b.subarray(0, a.length))).toEqual(Array.from(a));
        },
      ),
    );
    expect(characterBlockHashes('abcd', 4, 'm')[0]).not.toBe(characterBlockHashes('abcd', 4, 'n')[0]);
  });

  describe('cacheableHitTokens', () => {
    test.each([
      [10, 160, 144], // all 10 blocks cached but the last token must be recomputed: 9 blocks
      [10, 161, 160], // 161 tokens: 10 whole blocks fit before the last token
      [3, 8000, 48],
      [0, 8000, 0],
      [5, 0, 0],
    ])('matched %i blocks of a %i-token prompt serve %i tokens', (matched, prompt, expected) => {
      expect(cacheableHitTokens(matched, prompt)).toBe(expected);
    });
  });
});
