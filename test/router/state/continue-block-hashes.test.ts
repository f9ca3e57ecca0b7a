import fc from 'fast-check';
import { blockHashes, continueBlockHashes } from '../../../router/src/state/block-hash';

describe('continueBlockHashes', () => {
  test('GIVEN a text split at a block boundary THEN continuing from the first part equals hashing the whole', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 5 }),
        fc.string({ maxLength: 400 }),
        fc.string({ maxLength: 64 }),
        (blocks, rest, seed) => {
          const head = 'h'.repeat(64 * blocks);
          const whole = blockHashes(head + rest, { seed });
          const first = blockHashes(head, { seed });
          const continued = continueBlockHashes(rest, first.length > 0 ? first[first.length - 1] : undefined, { seed });
          expect([...first, ...continued]).toEqual(whole);
        },
      ),
    );
  });

  test('GIVEN maxBlocks THEN it stops there, and a negative budget yields nothing', () => {
    const text = 'z'.repeat(64 * 4);
    const first = blockHashes('a'.repeat(64));
    expect(continueBlockHashes(text, first[0], { maxBlocks: 2 })).toHaveLength(2);
    expect(continueBlockHashes(text, first[0], { maxBlocks: -1 })).toHaveLength(0);
  });
});
