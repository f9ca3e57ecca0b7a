import fc from 'fast-check';
import { BlockLru } from '../../../router/src/report/block-lru';

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
      fc.property(
        fc.integer({ min: 1, max: 8 }),
        fc.array(
          fc.oneof(
            fc.integer({ min: 0, max: 15 }),
            fc.integer({ min: 0, max: 3 }).map((k) => k * 4294967296 + 5),
          ),
          { maxLength: 200 },
        ),
        (capacity, touches) => {
          const lru = new BlockLru(capacity);
          let model: number[] = [];
          for (const h of touches) {
            expect(lru.touch(h)).toBe(model.includes(h));
            model = [h, ...model.filter((x) => x !== h)].slice(0, capacity);
          }
          expect(Array.from(lru.recency())).toEqual(model);
        },
      ),
    );
  });

  test('GIVEN sequences of touches (prompts repeating runs) THEN touchSequence equals touching one by one and reports the leading hits', () => {
    const run = fc.array(fc.integer({ min: 0, max: 40 }), { minLength: 0, maxLength: 30 });
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 24 }),
        fc.array(
          fc.oneof(
            run,
            run.map((r) => [...r, ...r]),
          ),
          { maxLength: 40 },
        ),
        (capacity, sequences) => {
          const bySequence = new BlockLru(capacity);
          const oneByOne = new BlockLru(capacity);
          for (const sequence of sequences) {
            const present = sequence.map((h) => oneByOne.touch(h));
            expect(bySequence.touchSequence(sequence)).toBe(leadingOf(present));
            expect(Array.from(bySequence.recency())).toEqual(Array.from(oneByOne.recency()));
          }
        },
      ),
    );
  });

  test('GIVEN chained block hashes of prompts sharing prefixes THEN touchSequence also reports the leading hashes ever touched and the distinct hashes ever held', () => {
    // A block's hash stands for the whole prefix up to it, as blockHashes makes it: interned prefix strings.
    const ids = new Map<string, number>();
    const chained = (tokens: number[]): number[] =>
      tokens.map((_, i) => {
        const key = tokens.slice(0, i + 1).join(',');
        let id = ids.get(key);
        if (id === undefined) ids.set(key, (id = ids.size));
        return id;
      });
    const documents = [0, 1, 2].map((d) => Array.from({ length: 20 }, (_, i) => (d * 7 + i * 3) % 5));
    const prompt = fc
      .tuple(
        fc.integer({ min: 0, max: 2 }),
        fc.integer({ min: 0, max: 20 }),
        fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 8 }),
      )
      .map(([d, shared, tail]) => chained([...documents[d].slice(0, shared), ...tail]));
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 24 }), fc.array(prompt, { maxLength: 40 }), (capacity, sequences) => {
        ids.clear();
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
          expect(bySequence.touchSequence(sequence)).toBe(leadingOf(present));
          expect(bySequence.lastEverHeldLeading).toBe(leadingOf(seen));
          expect(bySequence.everHeldCount).toBe(ever.size);
          expect(Array.from(bySequence.recency())).toEqual(Array.from(oneByOne.recency()));
        }
      }),
    );
  });
});

function leadingOf(xs: boolean[]): number {
  return xs.indexOf(false) === -1 ? xs.length : xs.indexOf(false);
}
