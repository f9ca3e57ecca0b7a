import fc from 'fast-check';
import { BlockHashIndex, BlockHashSet, slotCountFor } from '../../../router/src/state/block-hash-index';

// Keys up to 2^53 - 1, plus keys that share their low 32 bits (so a low-word match must be confirmed against
// the full key) and keys whose low words are few (long colliding probe runs, backward-shift deletion).
const key = fc.oneof(
  fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }),
  fc.integer({ min: 0, max: 40 }).map((k) => k * 4294967296 + (k % 3)),
  fc.integer({ min: 0, max: 7 }),
);

describe('BlockHashIndex', () => {
  test('GIVEN any sequence of adds and deletes THEN it answers like a Map from hash to id, keys read from the owner array', () => {
    const op = fc.oneof(
      fc.record({ kind: fc.constant('add' as const), key }),
      fc.record({ kind: fc.constant('delete' as const), key }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 300 }), (ops) => {
        const capacity = 48;
        const keys = new Float64Array(capacity).fill(-1);
        const freeIds = Array.from({ length: capacity }, (_, i) => capacity - 1 - i);
        const index = new BlockHashIndex(keys, capacity);
        const model = new Map<number, number>();
        for (const o of ops) {
          if (o.kind === 'add') {
            if (model.has(o.key)) {
              expect(index.add(o.key, 0)).toBe(false);
              continue;
            }
            if (freeIds.length === 0) continue;
            const id = freeIds.pop()!;
            expect(index.add(o.key, id)).toBe(true);
            keys[id] = o.key;
            model.set(o.key, id);
          } else {
            const id = model.get(o.key);
            expect(index.delete(o.key)).toBe(id !== undefined);
            if (id !== undefined) {
              model.delete(o.key);
              keys[id] = -1;
              freeIds.push(id);
            }
          }
          expect(index.size).toBe(model.size);
        }
        for (const [k, id] of model) expect(index.get(k)).toBe(id);
        for (let k = 0; k <= 7; k++) expect(index.get(k)).toBe(model.get(k) ?? -1);
        expect(new Map(index.entries())).toEqual(model);
      }),
    );
  });

  test('GIVEN a full index WHEN a new hash is added THEN it refuses, naming the size; a present hash still answers', () => {
    const keys = new Float64Array([5, 6]);
    const index = new BlockHashIndex(keys, 2);
    expect(index.add(5, 0)).toBe(true);
    expect(index.add(6, 1)).toBe(true);
    expect(() => index.add(7, 0)).toThrow('block hash index is full (2 entries)');
    expect(index.add(6, 0)).toBe(false);
    expect(index.get(6)).toBe(1);
    expect(() => new BlockHashIndex(keys, 0)).toThrow('maxEntries must be an integer >= 1, got 0');
  });

  test('GIVEN two hashes with the same low 32 bits THEN each finds its own id', () => {
    const a = 3 * 4294967296 + 17;
    const b = 9 * 4294967296 + 17;
    const keys = new Float64Array([a, b]);
    const index = new BlockHashIndex(keys, 2);
    index.add(a, 0);
    index.add(b, 1);
    expect([index.get(a), index.get(b), index.get(17)]).toEqual([0, 1, -1]);
    expect(index.delete(a)).toBe(true);
    expect([index.get(a), index.get(b)]).toEqual([-1, 1]);
  });
});

describe('slotCountFor', () => {
  test.each([
    [1, 8],
    [5, 8],
    [6, 9],
    [7, 11],
    [12, 18],
    [13, 20],
    [84_000, 126_000],
  ])('GIVEN %i entries THEN %i slots (load ≤ 2/3, no more)', (entries, slots) => {
    expect(slotCountFor(entries)).toBe(slots);
  });
});

describe('BlockHashSet', () => {
  test('GIVEN any adds beyond its initial size THEN it grows and answers like a Set (2^53 - 1 and 0 included)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(key, fc.constant(Number.MAX_SAFE_INTEGER), fc.constant(0)), { maxLength: 400 }),
        (keys) => {
          const set = new BlockHashSet(1);
          const model = new Set<number>();
          for (const k of keys) {
            expect(set.add(k)).toBe(!model.has(k));
            model.add(k);
            expect(set.size).toBe(model.size);
          }
          for (const k of model) expect(set.has(k)).toBe(true);
          for (let k = 0; k <= 7; k++) expect(set.has(k)).toBe(model.has(k));
        },
      ),
    );
  });

  test('GIVEN a value that is not a block hash THEN add refuses it, naming the range', () => {
    const set = new BlockHashSet();
    expect(() => set.add(-1)).toThrow('block hashes must be integers in [0, 2^53 - 1], got -1');
    expect(() => set.add(2 ** 53)).toThrow('got 9007199254740992');
  });
});
