import fc from 'fast-check';
import { InstancePrefixIndex, PrefixIndex, RecencyClock } from '../../../router/src/state/prefix-index';
import { testBlockKey } from './test-block-keys';

/** A chain of distinct block hashes: prompt `p` has blocks p*1000 + 0..n-1 (chained hashes never repeat across prompts). */
function chain(prompt: number, blocks: number, shared = 0): string[] {
  return Array.from({ length: blocks }, (_, i) => testBlockKey(i < shared ? -(i + 1) : prompt * 1000 + i));
}

describe('when the per-instance prefix index records prompts', () => {
  it('GIVEN any stream of prompts sharing prefixes THEN it never exceeds its capacity and match equals the longest present prefix', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 200 }),
        fc.array(fc.record({ blocks: fc.integer({ min: 1, max: 40 }), shared: fc.integer({ min: 0, max: 10 }) }), {
          minLength: 1,
          maxLength: 60,
        }),
        (capacity, prompts) => {
          const index = new InstancePrefixIndex(capacity);
          const clock = new RecencyClock();
          prompts.forEach((p, i) => {
            index.record(chain(i, p.blocks, Math.min(p.shared, p.blocks)), clock);
            expect(index.size).toBeLessThanOrEqual(capacity);
          });
          prompts.forEach((p, i) => {
            const hashes = chain(i, p.blocks, Math.min(p.shared, p.blocks));
            let linear = 0;
            while (linear < hashes.length && index.has(hashes[linear])) linear++;
            expect(index.match(hashes)).toBe(linear);
          });
        },
      ),
      { numRuns: 80 },
    );
  });

  it('GIVEN a full index THEN the least recently used prompt loses its last blocks first', () => {
    const index = new InstancePrefixIndex(10);
    const clock = new RecencyClock();
    index.record(chain(1, 6), clock);
    index.record(chain(2, 6), clock);
    expect(index.match(chain(2, 6))).toBe(6);
    expect(index.match(chain(1, 6))).toBe(4);
  });

  it('GIVEN evictNotNewerThan THEN exactly the entries used no later than that recency go', () => {
    const index = new InstancePrefixIndex(100);
    const clock = new RecencyClock();
    index.record(chain(1, 5), clock);
    const boundary = index.recencyOf(chain(1, 5)[0])!;
    index.record(chain(2, 5), clock);
    expect(index.evictNotNewerThan(boundary)).toBe(5);
    expect(index.match(chain(1, 5))).toBe(0);
    expect(index.match(chain(2, 5))).toBe(5);
  });

  it.each([
    [0, 0],
    [3, 3],
    [5, 5],
    [8, 5],
  ])(
    'GIVEN evictOldest with at most %i blocks THEN %i of the oldest go, and its cutoff replays the same on a copy',
    (maxBlocks, dropped) => {
      const index = new InstancePrefixIndex(100);
      const clock = new RecencyClock();
      index.record(chain(1, 5), clock);
      const boundary = index.recencyOf(chain(1, 5)[0])!;
      index.record(chain(2, 5), clock);
      const copy = new InstancePrefixIndex(100);
      const { hashes, recency } = index.export();
      copy.restore(hashes, recency);
      const result = index.evictOldest(boundary, maxBlocks);
      expect(result.dropped).toBe(dropped);
      // Oldest first: a chain loses its last blocks, so it stays prefix-closed.
      expect(index.match(chain(1, 5))).toBe(5 - dropped);
      expect(index.match(chain(2, 5))).toBe(5);
      if (result.cutoff !== undefined) copy.evictNotNewerThan(result.cutoff);
      expect(copy.export()).toEqual(index.export());
    },
  );

  it('GIVEN instances removed THEN their indexes are forgotten; a smaller capacity evicts at once', () => {
    const all = new PrefixIndex();
    all.forInstance('a', 50).record(chain(1, 20), all.clock);
    all.forInstance('b', 50).record(chain(2, 20), all.clock);
    all.retainOnly(new Set(['b']));
    expect(all.instanceIds()).toEqual(['b']);
    expect(all.forInstance('b', 5).size).toBe(5);
    expect(all.totalBlocks).toBe(5);
  });
});

describe('when the index is asked for the part of a match touched after some recency', () => {
  it('GIVEN any prompts and any cut-off THEN matchNewerThan equals the longest prefix whose blocks are all newer', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 4, max: 200 }),
        fc.array(fc.record({ blocks: fc.integer({ min: 1, max: 30 }), shared: fc.integer({ min: 0, max: 10 }) }), {
          minLength: 1,
          maxLength: 40,
        }),
        fc.integer({ min: 0, max: 600 }),
        (capacity, prompts, cutoff) => {
          const index = new InstancePrefixIndex(capacity);
          const clock = new RecencyClock();
          prompts.forEach((p, i) => index.record(chain(i, p.blocks, Math.min(p.shared, p.blocks)), clock));
          prompts.forEach((p, i) => {
            const hashes = chain(i, p.blocks, Math.min(p.shared, p.blocks));
            let linear = 0;
            while (linear < hashes.length && (index.recencyOf(hashes[linear]) ?? -1) > cutoff) linear++;
            expect(index.matchNewerThan(hashes, cutoff)).toBe(linear);
          });
        },
      ),
      { numRuns: 80 },
    );
  });
});
