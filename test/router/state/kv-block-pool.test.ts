import fc from 'fast-check';
import { KvBlockPool } from '../../../router/src/state/kv-block-pool';

/** Allocates one block per hash, registers it, and returns the ids (a request's prompt being computed). */
function cacheBlocks(pool: KvBlockPool, hashes: number[]): number[] {
  return hashes.map((h) => {
    const id = pool.allocate();
    pool.register(id, h);
    return id;
  });
}

describe('KvBlockPool', () => {
  describe('when blocks are allocated and released', () => {
    test('GIVEN a pool of 4 WHEN 4 blocks are allocated THEN none is free and a 5th allocation throws', () => {
      const pool = new KvBlockPool(4);
      for (let i = 0; i < 4; i++) pool.allocate();
      expect(pool.freeBlocks).toBe(0);
      expect(pool.usedBlocks).toBe(4);
      expect(() => pool.allocate()).toThrow(/exhausted/);
    });

    test('GIVEN capacity 0 WHEN constructing THEN it is refused', () => {
      expect(() => new KvBlockPool(0)).toThrow(/capacity/);
    });

    test('GIVEN released hashed blocks WHEN looked up THEN they are still cached (free but reusable)', () => {
      const pool = new KvBlockPool(8);
      const ids = cacheBlocks(pool, [11, 12, 13]);
      pool.release(ids);
      expect(pool.freeBlocks).toBe(8);
      expect(pool.matchPrefix([11, 12, 13, 14], 10)).toBe(3);
      pool.checkInvariants();
    });

    test('GIVEN a block released twice THEN the second release throws', () => {
      const pool = new KvBlockPool(2);
      const id = pool.allocate();
      pool.release([id]);
      expect(() => pool.release([id])).toThrow(/released more often/);
    });
  });

  describe('when matching a prefix', () => {
    test('GIVEN a miss in the middle THEN only the leading run counts', () => {
      const pool = new KvBlockPool(8);
      cacheBlocks(pool, [1, 2, 4]);
      expect(pool.matchPrefix([1, 2, 3, 4], 10)).toBe(2);
    });

    test('GIVEN maxBlocks smaller than the cached run THEN the match stops at maxBlocks', () => {
      const pool = new KvBlockPool(8);
      cacheBlocks(pool, [1, 2, 3]);
      expect(pool.matchPrefix([1, 2, 3], 2)).toBe(2);
    });

    test('GIVEN a hash already cached WHEN another block registers it THEN the duplicate stays unhashed', () => {
      const pool = new KvBlockPool(4);
      cacheBlocks(pool, [7]);
      const dup = pool.allocate();
      expect(pool.register(dup, 7)).toBe(false);
      expect(pool.cachedBlocks).toBe(1);
    });
  });

  describe('when capacity runs out (LRU eviction)', () => {
    test('GIVEN three released requests A, B, C WHEN new blocks are needed THEN A (least recently used) is evicted first', () => {
      const pool = new KvBlockPool(6);
      const a = cacheBlocks(pool, [101, 102]);
      const b = cacheBlocks(pool, [201, 202]);
      const c = cacheBlocks(pool, [301, 302]);
      pool.release(a);
      pool.release(b);
      pool.release(c);
      pool.allocate();
      pool.allocate();
      expect(pool.matchPrefix([101, 102], 2)).toBe(0);
      expect(pool.matchPrefix([201, 202], 2)).toBe(2);
      expect(pool.matchPrefix([301, 302], 2)).toBe(2);
      expect(pool.evictions).toBe(2);
    });

    test('GIVEN a released request WHEN evicting one block THEN its last block goes before its first (prefix kept longest)', () => {
      const pool = new KvBlockPool(3);
      pool.release(cacheBlocks(pool, [1, 2, 3]));
      expect(pool.evictionOrder()).toEqual([3, 2, 1]);
      pool.allocate();
      expect(pool.matchPrefix([1, 2, 3], 3)).toBe(2);
    });

    test('GIVEN A then B released WHEN A is reused and released again THEN B becomes the least recently used', () => {
      const pool = new KvBlockPool(4);
      const a = cacheBlocks(pool, [10, 11]);
      const b = cacheBlocks(pool, [20, 21]);
      pool.release(a);
      pool.release(b);
      const again = [pool.acquireCached(10), pool.acquireCached(11)];
      pool.release(again);
      expect(pool.evictionOrder()).toEqual([21, 20, 11, 10]);
    });

    test('GIVEN blocks held by a request WHEN every free block is taken THEN the held blocks are never evicted', () => {
      const pool = new KvBlockPool(5);
      const held = cacheBlocks(pool, [1, 2]);
      pool.release(cacheBlocks(pool, [3, 4, 5]));
      for (let i = 0; i < 3; i++) pool.allocate();
      expect(pool.freeBlocks).toBe(0);
      expect(pool.matchPrefix([1, 2], 2)).toBe(2);
      expect(pool.referencesOf(1)).toBe(1);
      expect(() => pool.allocate()).toThrow('KV pool exhausted');
      pool.release(held);
      pool.checkInvariants();
    });

    test('GIVEN an unhashed block released after hashed ones THEN it is reused before any cached block is evicted', () => {
      const pool = new KvBlockPool(3);
      const cached = cacheBlocks(pool, [1, 2]);
      const scratch = pool.allocate();
      pool.release(cached);
      pool.release([scratch]);
      expect(pool.allocate()).toBe(scratch);
      expect(pool.evictions).toBe(0);
    });
  });

  test('any sequence of operations keeps the pool consistent and never over capacity, and matches prefixes as the index alone would (successor hints never change a match)', () => {
    type Op = { kind: 'take'; hashes: number[] } | { kind: 'drop'; index: number };
    const op = fc.oneof(
      fc.record({
        kind: fc.constant('take' as const),
        hashes: fc.array(fc.integer({ min: 0, max: 12 }), { maxLength: 5 }),
      }),
      fc.record({ kind: fc.constant('drop' as const), index: fc.nat() }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops: Op[]) => {
        const pool = new KvBlockPool(10);
        const holders: number[][] = [];
        for (const o of ops) {
          if (o.kind === 'take') {
            // Reading ahead (what a large pool does before many allocations and registrations) changes nothing.
            pool.readAheadEvictions(o.hashes.length);
            pool.readAheadRegistrations(o.hashes, 0, o.hashes.length);
            const matchedIds = new Int32Array(o.hashes.length);
            const matched = pool.matchPrefix(o.hashes, o.hashes.length, matchedIds);
            let leadingCached = 0;
            while (leadingCached < o.hashes.length && pool.referencesOf(o.hashes[leadingCached]) !== undefined)
              leadingCached++;
            expect(matched).toBe(leadingCached);
            const fresh = o.hashes.length - matched;
            if (fresh > pool.freeBlocks - pool.countUnreferenced(o.hashes, matched)) continue;
            const ids = o.hashes.slice(0, matched).map((h) => pool.acquireCached(h));
            expect(ids).toEqual(Array.from(matchedIds.subarray(0, matched)));
            for (let i = matched; i < o.hashes.length; i++) {
              const id = pool.allocate();
              pool.register(id, o.hashes[i]);
              ids.push(id);
            }
            holders.push(ids);
          } else if (holders.length > 0) {
            pool.release(holders.splice(o.index % holders.length, 1)[0]);
          }
          const refs = new Int32Array(10);
          for (const h of holders) for (const id of h) refs[id]++;
          pool.checkInvariants(refs);
          expect(pool.usedBlocks).toBeLessThanOrEqual(pool.capacity);
        }
      }),
      { numRuns: 300 },
    );
  });
});
