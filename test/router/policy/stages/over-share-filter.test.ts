import fc from 'fast-check';
import { BALANCE_FACTOR, FLOOR_FACTOR, overShareFilter } from '../../../../router/src/policy/stages/over-share-filter';
import type { CostCandidate } from '../../../../router/src/policy/stages/predicted-cost-candidates';
import type { PrefixMemory } from '../../../../router/src/policy/stages/prefix-memory';

const LIMITS = { stepTokens: 8192, balanceSlackTokens: 512 };

/** One instance as the filter sees it: requests sent, in flight, prefill queued, prompt tokens held, cost. */
interface Instance {
  readonly sent: number;
  readonly inFlight: number;
  readonly queued: number;
  readonly cached: number;
  readonly cost: number;
}

const instanceArb = fc.record({
  sent: fc.integer({ min: 0, max: 40 }),
  inFlight: fc.integer({ min: 0, max: 8 }),
  queued: fc.constantFrom(0, 0, 0, 300),
  cached: fc.constantFrom(0, 384, 768, 2048),
  cost: fc.integer({ min: 0, max: 3000 }),
});

function run(fleet: readonly Instance[]): { candidates: CostCandidate[]; kept: readonly CostCandidate[] } {
  const sentTo = new Map(fleet.map((f, i) => [`i${i}`, f.sent]));
  const memory = { sentTo: (id: string) => sentTo.get(id) ?? 0 } as unknown as PrefixMemory;
  const candidates = fleet.map((f, i): CostCandidate => ({
    view: { id: `i${i}`, healthy: true, inFlight: f.inFlight, queuedPrefillTokens: f.queued },
    matchedBlocks: f.cached / 64,
    cachedTokens: f.cached,
    longest: f.cached === Math.max(...fleet.map((x) => x.cached)),
    uncached: 4096 - f.cached,
    indexedBlocks: 0,
    cost: f.cost,
    coldCost: f.cost,
    score: i,
    weight: 1,
  }));
  return { candidates, kept: overShareFilter(memory, LIMITS).filter(candidates, undefined) };
}

describe('when the over-share filter bounds request shares from above and below', () => {
  it('GIVEN any fleet THEN it keeps at least one instance, every idle one below its floor, and a unique longest match unless its holder is over both bounds', () => {
    fc.assert(
      fc.property(fc.array(instanceArb, { minLength: 2, maxLength: 8 }), (fleet) => {
        const { candidates, kept } = run(fleet);
        expect(kept.length).toBeGreaterThan(0);
        const total = fleet.reduce((a, f) => a + f.sent, 0);
        const totalInFlight = fleet.reduce((a, f) => a + f.inFlight, 0);
        const n = fleet.length;
        const bound = (m: number) => Math.max(Math.ceil((BALANCE_FACTOR * (m + 1)) / n), 4);
        const longest = Math.max(...fleet.map((f) => f.cached));
        fleet.forEach((f, i) => {
          const isKept = kept.includes(candidates[i]);
          const share = total / n;
          if (share >= 4 && f.sent < FLOOR_FACTOR * share && f.queued === 0) expect(isKept).toBe(true);
          const unique = f.cached > 0 && f.cached === longest && fleet.filter((x) => x.cached === longest).length === 1;
          const overBoth = f.sent + 1 > bound(total) && f.inFlight + 1 > bound(totalInFlight);
          if (unique && !overBoth) expect(isKept).toBe(true);
        });
      }),
      { numRuns: 500 },
    );
  });

  it('GIVEN no instance holds any of the prompt THEN every instance is kept (cold prompts follow rendezvous)', () => {
    fc.assert(
      fc.property(fc.array(instanceArb, { minLength: 2, maxLength: 8 }), (fleet) => {
        const { candidates, kept } = run(fleet.map((f) => ({ ...f, cached: 0 })));
        expect(kept).toEqual(candidates);
      }),
    );
  });
});
