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

  test('any sequence of operations gives the same blocks, matches, free counts, evictions and eviction order as a plain-array model of the pool', () => {
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
        const model = new PoolModel(10);
        const holders: number[][] = [];
        for (const o of ops) {
          if (o.kind === 'take') {
            // Reading ahead (what a large pool does before many allocations and registrations) changes nothing.
            pool.readAheadEvictions(o.hashes.length);
            pool.readAheadRegistrations(o.hashes, 0, o.hashes.length);
            const matchedIds = new Int32Array(o.hashes.length);
            const matched = pool.matchPrefix(o.hashes, o.hashes.length, matchedIds);
            expect(matched).toBe(model.matchPrefix(o.hashes));
            const fresh = o.hashes.length - matched;
            if (fresh > model.freeBlocks - model.unreferencedAmong(o.hashes.slice(0, matched))) continue;
            const ids = o.hashes.slice(0, matched).map((h) => pool.acquireCached(h));
            expect(ids).toEqual(o.hashes.slice(0, matched).map((h) => model.acquireCached(h)));
            expect(ids).toEqual(Array.from(matchedIds.subarray(0, matched)));
            for (let i = matched; i < o.hashes.length; i++) {
              const id = pool.allocate();
              expect(id).toBe(model.allocate());
              expect(pool.register(id, o.hashes[i])).toBe(model.register(id, o.hashes[i]));
              ids.push(id);
            }
            holders.push(ids);
          } else if (holders.length > 0) {
            const released = holders.splice(o.index % holders.length, 1)[0];
            pool.release(released);
            model.release(released);
          }
          expect([pool.freeBlocks, pool.cachedBlocks, pool.evictions]).toEqual([
            model.freeBlocks,
            model.cachedBlocks,
            model.evictions,
          ]);
          expect(pool.evictionOrder()).toEqual(model.evictionOrder());
          pool.checkInvariants(model.references());
        }
      }),
      { numRuns: 300 },
    );
  });
});

/**
 * The pool as plain arrays and a Map, written from the rules in KvBlockPool's comment and nothing of its code: the
 * free queue is an array (least recently used first), a freed block with a hash goes to its end and one without to
 * its front, allocation takes the front and evicts that block's hash, and one hash is held by at most one block.
 */
class PoolModel {
  private readonly refs: number[];
  private readonly hashOf: (number | undefined)[];
  private readonly blockOf = new Map<number, number>();
  private freeQueue: number[];
  evictions = 0;

  constructor(capacity: number) {
    this.refs = new Array<number>(capacity).fill(0);
    this.hashOf = new Array<number | undefined>(capacity).fill(undefined);
    this.freeQueue = Array.from({ length: capacity }, (_, id) => id);
  }

  get freeBlocks(): number {
    return this.freeQueue.length;
  }

  get cachedBlocks(): number {
    return this.blockOf.size;
  }

  matchPrefix(hashes: readonly number[]): number {
    let matched = 0;
    while (matched < hashes.length && this.blockOf.has(hashes[matched])) matched++;
    return matched;
  }

  /** How many of these cached hashes no request holds (taking them shrinks the free queue). */
  unreferencedAmong(hashes: readonly number[]): number {
    return new Set(hashes.map((h) => this.blockOf.get(h)!).filter((id) => this.refs[id] === 0)).size;
  }

  acquireCached(hash: number): number {
    const id = this.blockOf.get(hash)!;
    if (this.refs[id] === 0) this.freeQueue = this.freeQueue.filter((queued) => queued !== id);
    this.refs[id]++;
    return id;
  }

  allocate(): number {
    const id = this.freeQueue.shift()!;
    const hash = this.hashOf[id];
    if (hash !== undefined) {
      this.blockOf.delete(hash);
      this.hashOf[id] = undefined;
      this.evictions++;
    }
    this.refs[id] = 1;
    return id;
  }

  register(id: number, hash: number): boolean {
    if (this.hashOf[id] !== undefined || this.blockOf.has(hash)) return false;
    this.hashOf[id] = hash;
    this.blockOf.set(hash, id);
    return true;
  }

  /** Last block first, as a request's tail should be evicted before its prefix. */
  release(ids: readonly number[]): void {
    for (const id of [...ids].reverse()) {
      if (--this.refs[id] > 0) continue;
      if (this.hashOf[id] !== undefined) this.freeQueue.push(id);
      else this.freeQueue.unshift(id);
    }
  }

  evictionOrder(): number[] {
    return this.freeQueue.map((id) => this.hashOf[id]).filter((h): h is number => h !== undefined);
  }

  references(): number[] {
    return [...this.refs];
  }
}

describe('KvBlockPool.resetPrefixCache', () => {
  test('GIVEN a block still referenced THEN the reset is refused and nothing is forgotten', () => {
    const pool = new KvBlockPool(4);
    const id = pool.allocate();
    pool.register(id, 11);
    expect(pool.resetPrefixCache()).toBe(false);
    expect(pool.cachedBlocks).toBe(1);
    pool.release([id]);
    expect(pool.resetPrefixCache()).toBe(true);
    expect(pool.cachedBlocks).toBe(0);
    expect(pool.matchPrefix([11], 1)).toBe(0);
    expect(pool.evictions).toBe(0);
    pool.checkInvariants();
  });

  test('GIVEN evictions after a reset THEN no forgotten hash is reported evicted', () => {
    const evicted: number[] = [];
    const pool = new KvBlockPool(2, (hash) => evicted.push(hash));
    const a = pool.allocate();
    pool.register(a, 1);
    pool.release([a]);
    const b = pool.allocate();
    pool.register(b, 2);
    pool.release([b]);
    pool.resetPrefixCache();
    pool.allocate();
    pool.allocate();
    expect(evicted).toEqual([]);
  });
});

describe('KvBlockPool eviction listener', () => {
  test('GIVEN every free block cached THEN allocate reports the least recently used hash it evicts', () => {
    const evicted: number[] = [];
    const pool = new KvBlockPool(2, (hash) => evicted.push(hash));
    for (const hash of [1, 2]) {
      const id = pool.allocate();
      pool.register(id, hash);
      pool.release([id]);
    }
    pool.allocate();
    expect(evicted).toEqual([1]);
  });
});
