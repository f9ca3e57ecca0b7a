import fc from 'fast-check';
import { BlockHashTable } from '../../../router/src/state/block-hash-table';

describe('BlockHashTable', () => {
  test('any sequence of sets and deletes behaves like a Map (keys up to 2^53, colliding probe runs)', () => {
    // Few distinct low bits so probe runs collide and backward-shift deletion is exercised.
    const key = fc.oneof(
      fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
      fc.integer({ min: 0, max: 40 }).map((k) => k * 4294967296 + (k % 3)),
    );
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), key, value: fc.integer({ min: 0, max: 1000 }) }),
      fc.record({ kind: fc.constant('delete' as const), key, value: fc.constant(0) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
        const table = new BlockHashTable(64);
        const model = new Map<number, number>();
        for (const o of ops) {
          if (o.kind === 'set') {
            if (!model.has(o.key) && model.size >= 64) continue;
            table.set(o.key, o.value);
            model.set(o.key, o.value);
          } else {
            expect(table.delete(o.key)).toBe(model.delete(o.key));
          }
          expect(table.size).toBe(model.size);
        }
        for (const [k, v] of model) expect(table.get(k)).toBe(v);
        expect(new Map(table.entries())).toEqual(model);
      }),
    );
  });

  test('GIVEN a full table WHEN a new key is set THEN it refuses; an absent key reads -1', () => {
    const table = new BlockHashTable(2);
    table.set(1, 1);
    table.set(2, 2);
    expect(() => table.set(3, 3)).toThrow(/full/);
    table.set(2, 5);
    expect(table.get(2)).toBe(5);
    expect(table.get(99)).toBe(-1);
    expect(() => table.set(4, -1)).toThrow(/non-negative/);
  });
});

describe('BlockHashTable.setIfAbsent', () => {
  test('GIVEN a present key THEN it keeps the old value and says so; GIVEN an absent key THEN it stores it', () => {
    const table = new BlockHashTable(4);
    expect(table.setIfAbsent(2 ** 40 + 7, 1)).toBe(true);
    expect(table.setIfAbsent(2 ** 40 + 7, 2)).toBe(false);
    expect(table.get(2 ** 40 + 7)).toBe(1);
    expect(table.size).toBe(1);
  });
});

describe('when the table is growable', () => {
  test('GIVEN any sequence of sets and deletes beyond its initial size THEN it grows and answers exactly like a Map', () => {
    const key = fc.oneof(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }));
    const op = fc.oneof(
      fc.record({ kind: fc.constant('set' as const), key, value: fc.integer({ min: 0, max: 1000 }) }),
      fc.record({ kind: fc.constant('delete' as const), key }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
        const table = new BlockHashTable(4, { growable: true });
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

  test('GIVEN a fixed-size table WHEN it is full THEN it refuses, naming its size', () => {
    const table = new BlockHashTable(2);
    table.set(1, 1);
    table.set(2, 2);
    expect(() => table.set(3, 3)).toThrow(/full \(2 entries\)/);
  });
});
