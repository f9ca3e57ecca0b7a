import fc from 'fast-check';
import { BlockLru } from '../../../../router/src/sim/report/block-lru';

describe('when using the block LRU', () => {
  test('GIVEN capacity 3 WHEN a fourth block arrives THEN the least recently touched one is evicted', () => {
    const lru = new BlockLru(3);
    [1, 2, 3].forEach((h) => lru.touch(h));
    lru.touch(1);
    lru.touch(4);
    expect(Array.from(lru.recency())).toEqual([4, 1, 3]);
    expect(lru.has(2)).toBe(false);
    expect(lru.size).toBe(3);
  });

  test('GIVEN capacity 0 THEN nothing is ever held', () => {
    const lru = new BlockLru(0);
    lru.touch(7);
    expect(lru.has(7)).toBe(false);
    expect(lru.size).toBe(0);
  });

  test('GIVEN any touches THEN contents and order match a naive LRU list', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.array(fc.oneof(fc.integer({ min: 0, max: 15 }), fc.integer({ min: 0, max: 3 }).map((k) => k * 4294967296 + 5)), { maxLength: 200 }), (capacity, touches) => {
        const lru = new BlockLru(capacity);
        let model: number[] = [];
        for (const h of touches) {
          expect(lru.touch(h)).toBe(model.includes(h));
          model = [h, ...model.filter((x) => x !== h)].slice(0, capacity);
        }
        expect(Array.from(lru.recency())).toEqual(model);
      }),
    );
  });

  test('GIVEN sequences of touches (prompts repeating runs) THEN touchSequence equals touching one by one and reports the leading hits, now and ever', () => {
    const run = fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 0, maxLength: 30 });
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 24 }), fc.array(fc.oneof(run, run.map((r) => [...r, ...r])), { maxLength: 40 }), (capacity, sequences) => {
        const bySequence = new BlockLru(capacity, true);
        const oneByOne = new BlockLru(capacity);
        const ever = new Set<number>();
        for (const sequence of sequences) {
          const present = sequence.map((h) => oneByOne.touch(h));
          const seen = sequence.map((h) => {
            const before = ever.has(h);
            ever.add(h);
            return before;
          });
          const leadingOf = (xs: boolean[]) => (xs.indexOf(false) === -1 ? xs.length : xs.indexOf(false));
          expect(bySequence.touchSequence(sequence)).toBe(leadingOf(present));
          expect(bySequence.lastEverHeldLeading).toBe(leadingOf(seen));
          expect(bySequence.everHeldCount).toBe(ever.size);
          expect(Array.from(bySequence.recency())).toEqual(Array.from(oneByOne.recency()));
        }
      }),
    );
  });
});
