import fc from 'fast-check';
import { BlockHashTable } from '../../../../router/src/sim/report/block-hash-table';
import { BlockLru } from '../../../../router/src/sim/report/block-lru';

describe('when using the block hash table', () => {
  test('GIVEN any sequence of sets and deletes THEN it answers exactly like a Map', () => {
    const key = fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }));
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), key, value: fc.integer({ min: 0, max: 1000 }) }),
      fc.record({ kind: fc.constant('delete' as const), key }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
        const table = new BlockHashTable(4);
        const model = new Map<number, number>();
        for (const o of ops) {
          if (o.kind === 'set') {
            table.set(o.key, o.value);
            model.set(o.key, o.value);
          } else {
            expect(table.delete(o.key)).toBe(model.delete(o.key));
          }
          expect(table.size).toBe(model.size);
        }
        for (let k = 0; k <= 40; k++) expect(table.get(k)).toBe(model.get(k) ?? -1);
        for (const [k, v] of model) expect(table.get(k)).toBe(v);
      }),
    );
  });

  test('GIVEN a negative key THEN it is refused', () => {
    expect(() => new BlockHashTable().set(-1, 0)).toThrow(/non-negative/);
  });
});

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
      fc.property(fc.integer({ min: 1, max: 8 }), fc.array(fc.integer({ min: 0, max: 15 }), { maxLength: 200 }), (capacity, touches) => {
        const lru = new BlockLru(capacity);
        let model: number[] = [];
        for (const h of touches) {
          lru.touch(h);
          model = [h, ...model.filter((x) => x !== h)].slice(0, capacity);
        }
        expect(Array.from(lru.recency())).toEqual(model);
      }),
    );
  });
});
