import fc from 'fast-check';
import { SeededRng } from '../../../router/src/common/seeded-rng';
import { CacheAwarePolicy, createPolicy, type InstanceView, type RoutingDecision } from '../../../router/src/policy';
import type { RoutingRequest } from '../../../router/src/protocol/routing-request';
import { chatRequest } from './policy-test-helpers';
import { InstanceStateLog, ObservedInstance } from '../../../router/src/state/instance-state-log';
import { CHARS_PER_TOKEN } from '../../../router/src/state/block-hash';

/** The routing block every policy here is given (its blockChars), and its tokens by the router's own token rule. */
const BLOCK = 256;
const BLOCK_TOKENS = BLOCK / CHARS_PER_TOKEN;

function policy(options: Partial<Record<string, number | string>> = {}): CacheAwarePolicy {
  return createPolicy(
    { name: 'cache-aware', blockChars: BLOCK, ...options },
    {
      rng: new SeededRng(1),
    },
  ) as CacheAwarePolicy;
}

function idle(n: number, extra: Partial<InstanceView> = {}): InstanceView[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `http://10.0.0.${i + 1}:8000`,
    healthy: true,
    inFlight: 0,
    queuedPrefillTokens: 0,
    decodeSequences: 0,
    ...extra,
  }));
}

/** Deterministic text of `blocks` routing blocks, distinct per label. */
function blocksOf(label: string, blocks: number): string {
  let s = '';
  for (let i = 0; s.length < blocks * BLOCK; i++) s += `${label}:${i};`;
  return s.slice(0, blocks * BLOCK);
}

/** Sends `request` to `instance` as the policy would record it (commit + completed release). */
function place(p: CacheAwarePolicy, request: RoutingRequest, instance: string): void {
  const d: RoutingDecision = { instance, reason: 'cache-match' };
  p.commit(request, d);
  p.release(request, d, { kind: 'completed' });
}

function decide(p: CacheAwarePolicy, request: RoutingRequest, views: readonly InstanceView[]) {
  return p.decide(request, { instances: views, nowMs: 0 });
}

describe('when the cache-aware policy predicts cached prefixes', () => {
  it('GIVEN equal load THEN the instance holding the longest matching prefix wins', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 3, max: 7 }),
        fc.uniqueArray(fc.integer({ min: 0, max: 40 }), { minLength: 2, maxLength: 7 }),
        (n, lengths) => {
          const p = policy({ balanceSlackTokens: 0 });
          const views = idle(n);
          const full = blocksOf('shared', 48);
          // Instance i holds the first lengths[i] blocks of the prompt (distinct lengths).
          lengths.slice(0, n).forEach((blocks, i) => {
            if (blocks > 0) place(p, chatRequest(full.slice(0, blocks * BLOCK)), views[i].id);
          });
          const held = lengths.slice(0, n);
          const longest = Math.max(...held);
          fc.pre(longest > 0);
          const d = decide(p, chatRequest(`${full}tail`), views);
          expect(d.instance).toBe(views[held.indexOf(longest)].id);
          expect(d.reason).toBe('cache-match');
          expect(d.predictedCachedTokens).toBe(longest * BLOCK_TOKENS);
        },
      ),
      { numRuns: 60 },
    );
  });

  it('GIVEN the instance with the longest match is swamped with queued prefill THEN a shorter match on an idle instance wins', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 20, max: 60 }),
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1, max: 50 }),
        (long, short, swampFactor) => {
          fc.pre(short < long);
          const p = policy();
          const views = idle(2);
          const full = blocksOf('doc', long);
          place(p, chatRequest(full), views[0].id);
          place(p, chatRequest(full.slice(0, short * BLOCK)), views[1].id);
          const savedByLong = (long - short) * BLOCK_TOKENS;
          // Swamped: its queue costs more than the prefix it saves, counted twice (the wait, and the work recomputed).
          const swamped = views.map((v, i) =>
            i === 0 ? { ...v, queuedPrefillTokens: 2 * savedByLong + 1024 * swampFactor } : v,
          );
          const d = decide(p, chatRequest(`${full}question`), swamped);
          expect(d.instance).toBe(views[1].id);
          // Without the queue, the long match wins.
          expect(decide(p, chatRequest(`${full}question`), views).instance).toBe(views[0].id);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('GIVEN the holder queues more than the prefix saves but less than the wait plus the recomputed work THEN it keeps the request', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 20, max: 60 }),
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1, max: 9 }),
        (long, short, tenths) => {
          const p = policy({ balanceSlackTokens: 0 });
          const views = idle(2);
          const full = blocksOf('doc', long);
          place(p, chatRequest(full), views[0].id);
          place(p, chatRequest(full.slice(0, short * BLOCK)), views[1].id);
          const savedByLong = (long - short) * BLOCK_TOKENS;
          // Diverting would start this request sooner, but recompute savedByLong tokens the fleet pays for later.
          const queued = savedByLong + Math.floor((savedByLong * tenths) / 10);
          const busy = views.map((v, i) => (i === 0 ? { ...v, queuedPrefillTokens: queued } : v));
          expect(decide(p, chatRequest(`${full}question`), busy).instance).toBe(views[0].id);
          // Past the wait plus the work, it diverts.
          const swamped = views.map((v, i) => (i === 0 ? { ...v, queuedPrefillTokens: 2 * savedByLong + 1 } : v));
          expect(decide(p, chatRequest(`${full}question`), swamped).instance).toBe(views[1].id);
        },
      ),
      { numRuns: 40 },
    );
  });

  it("GIVEN the other instance's cache is full THEN the holder keeps the request until its queue costs more than the wait, the recompute and the cache the copy displaces", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 20, max: 60 }),
        fc.integer({ min: 1, max: 10 }),
        fc.integer({ min: 1, max: 9 }),
        (long, short, tenths) => {
          // Each index holds 64 blocks: the holder's fits, the other is filled to capacity.
          const p = policy({ balanceSlackTokens: 0, kvCacheTokens: 64 * BLOCK_TOKENS });
          const views = idle(2);
          const full = blocksOf('doc', long);
          place(p, chatRequest(full), views[0].id);
          place(p, chatRequest(`${full.slice(0, short * BLOCK)}${blocksOf('filler', 64 - short)}`), views[1].id);
          const savedByLong = (long - short) * BLOCK_TOKENS;
          // Past the wait plus the work (where an instance with room diverts), the displaced cache keeps it.
          const queued = 2 * savedByLong + Math.floor((savedByLong * tenths) / 10);
          const busy = views.map((v, i) => (i === 0 ? { ...v, queuedPrefillTokens: queued } : v));
          expect(decide(p, chatRequest(`${full}question`), busy).instance).toBe(views[0].id);
          // Past the wait, the work and the displaced cache, it diverts.
          const swamped = views.map((v, i) => (i === 0 ? { ...v, queuedPrefillTokens: 3 * savedByLong + 1 } : v));
          expect(decide(p, chatRequest(`${full}question`), swamped).instance).toBe(views[1].id);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('GIVEN many decoding sequences on the holder THEN decode pressure counts in the cost', () => {
    const p = policy();
    const views = idle(2);
    const full = blocksOf('doc', 12);
    place(p, chatRequest(full), views[0].id);
    expect(decide(p, chatRequest(`${full}q`), views).instance).toBe(views[0].id);
    const busy = [{ ...views[0], decodeSequences: 2000 }, views[1]];
    expect(decide(p, chatRequest(`${full}q`), busy).instance).toBe(views[1].id);
  });
});

describe('when prompts are cold', () => {
  it('GIVEN replicas with the same instances and no history THEN they make the same cold placement, whatever the list order', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 4000 }),
        fc.integer({ min: 2, max: 9 }),
        fc.nat(),
        (text, n, rotation) => {
          const views = idle(n);
          const rotated = [...views.slice(rotation % n), ...views.slice(0, rotation % n)];
          const a = decide(policy(), chatRequest(text), views);
          const b = decide(policy(), chatRequest(text), rotated);
          expect(b.instance).toBe(a.instance);
          expect(a.reason).toBe('cold-rendezvous');
        },
      ),
      { numRuns: 80 },
    );
  });

  it('GIVEN prompts with the same first block THEN the placement depends on it only, and different first blocks spread', () => {
    const views = idle(7);
    const head = blocksOf('system', 1);
    const first = decide(policy(), chatRequest(`${head}user one`), views).instance;
    expect(decide(policy(), chatRequest(`${head}another user`), views).instance).toBe(first);
    const placed = new Set(
      Array.from({ length: 60 }, (_, i) => decide(policy(), chatRequest(blocksOf(`s${i}`, 2)), views).instance),
    );
    expect(placed.size).toBe(7);
  });

  it('GIVEN a short request waiting for its first token on one instance THEN a long cold prompt goes to the other, whichever rendezvous prefers', () => {
    // Its first chunk would join that request's engine step and delay its first token by the chunk's prefill.
    const long = chatRequest(blocksOf('long-cold', 128)); // 8,192 tokens: the 439 queued are within the slack
    for (const waitingOn of [0, 1]) {
      const views = idle(2).map((v, i) =>
        i === waitingOn ? { ...v, inFlight: 1, queuedPrefillTokens: 439, decodeSequences: 0 } : v,
      );
      expect(decide(policy(), long, views).instance).toBe(views[1 - waitingOn].id);
    }
  });

  it('GIVEN the rendezvous choice only decodes (nothing waits for a first token) THEN least-loaded places a cold prompt on the idle one, rendezvous keeps it', () => {
    const long = chatRequest(blocksOf('long-cold', 128));
    const first = decide(policy(), long, idle(2)).instance;
    const decoding = idle(2).map((v) => (v.id === first ? { ...v, inFlight: 1, decodeSequences: 1 } : v));
    expect(decide(policy(), long, decoding).instance).not.toBe(first);
    expect(decide(policy({ coldPlacement: 'rendezvous' }), long, decoding).instance).toBe(first);
  });

  it('GIVEN eligible instances with requests in flight THEN least-loaded takes the fewest in flight per unit of speed, rendezvous order breaking ties, and rendezvous ignores the counts', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ inFlight: fc.nat({ max: 4 }), slow: fc.boolean() }), { minLength: 2, maxLength: 8 }),
        fc.nat(),
        (fleet, label) => {
          // Requests in flight with nothing queued or decoding: every instance's cold cost is the same, so all are eligible.
          const views = idle(fleet.length).map((v, i) => ({
            ...v,
            inFlight: fleet[i].inFlight,
            prefillTokensPerSecond: fleet[i].slow ? 5_000 : 20_000,
          }));
          const request = chatRequest(blocksOf(`cold-${label}`, 2));
          const loadOf = (v: InstanceView) => v.inFlight / (v.prefillTokensPerSecond === 5_000 ? 0.25 : 1);
          const least = Math.min(...views.map(loadOf));
          const chosen = decide(policy(), request, views);
          expect(chosen.reason).toBe('cold-rendezvous');
          expect(loadOf(views.find((v) => v.id === chosen.instance)!)).toBe(least);
          // Among the least loaded, the same instance as rendezvous over those alone.
          const tied = views.filter((v) => loadOf(v) === least).map((v) => ({ ...v, inFlight: 0 }));
          const others = views.filter((v) => loadOf(v) !== least).map((v) => ({ ...v, healthy: false }));
          expect(decide(policy({ coldPlacement: 'rendezvous' }), request, [...tied, ...others]).instance).toBe(
            chosen.instance,
          );
          // Rendezvous: the choice made on the idle fleet, whatever is in flight.
          const rendezvous = decide(policy({ coldPlacement: 'rendezvous' }), request, views).instance;
          const idleFleet = views.map((v) => ({ ...v, inFlight: 0 }));
          expect(rendezvous).toBe(decide(policy({ coldPlacement: 'rendezvous' }), request, idleFleet).instance);
        },
      ),
      { numRuns: 150 },
    );
  });

  it('GIVEN an unknown coldPlacement THEN building the policy fails naming the option and its values', () => {
    expect(() => policy({ coldPlacement: 'nearest' })).toThrow(/coldPlacement.*least-loaded or rendezvous/s);
  });

  it('GIVEN a router that has sent only a few prompts THEN each new cold prefix goes to an instance holding nothing, not to the rendezvous top (bounded load from the first prompt)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 3, max: 9 }),
        fc.uniqueArray(fc.nat(), { minLength: 6, maxLength: 6 }),
        (n, labels) => {
          const p = policy();
          const views = idle(n);
          // While fewer than n ÷ 1.5 equal prompts are indexed, an instance holding one is at its bound.
          const distinct = Math.floor(n / 1.5);
          const used = new Set<string>();
          for (const label of labels.slice(0, distinct)) {
            const request = chatRequest(blocksOf(`cold-${label}`, 4));
            const d = decide(p, request, views);
            expect(d.reason).toBe('cold-rendezvous');
            expect(used.has(d.instance)).toBe(false);
            used.add(d.instance);
            place(p, request, d.instance);
          }
        },
      ),
      { numRuns: 60 },
    );
  });

  it('GIVEN one instance already holds far more than its share THEN a cold prompt skips it (bounded load)', () => {
    const views = idle(4);
    const text = blocksOf('new', 2);
    const p = policy();
    const owner = decide(p, chatRequest(text), views).instance;
    for (let i = 0; i < 50; i++) place(p, chatRequest(blocksOf(`fill${i}`, 8)), owner);
    expect(decide(p, chatRequest(text), views).instance).not.toBe(owner);
  });
});

describe('when the fleet mixes instance speeds (5 fast + 2 at 0.3 of their speed)', () => {
  const FAST = 20_000;
  const SLOW = 6_000;
  const WEIGHT = SLOW / FAST;
  const PROMPTS = 3000;

  function mixed(extra: (i: number) => Partial<InstanceView> = () => ({})): InstanceView[] {
    return idle(7).map((v, i) => ({ ...v, prefillTokensPerSecond: i < 5 ? FAST : SLOW, ...extra(i) }));
  }

  /** Decisions (never committed: the fleet stays as given) for `PROMPTS` distinct cold prompts of 4 blocks. */
  function coldWins(views: readonly InstanceView[]): Map<string, number> {
    const p = policy();
    const wins = new Map<string, number>();
    for (let i = 0; i < PROMPTS; i++) {
      const d = decide(p, chatRequest(blocksOf(`cold${i}`, 4)), views);
      expect(d.reason).toBe('cold-rendezvous');
      wins.set(d.instance, (wins.get(d.instance) ?? 0) + 1);
    }
    return wins;
  }

  /** 4.5 binomial standard deviations of a count over PROMPTS trials of probability `share`, plus one. */
  function expectNear(count: number, share: number): void {
    expect(Math.abs(count - PROMPTS * share)).toBeLessThanOrEqual(4.5 * Math.sqrt(PROMPTS * share * (1 - share)) + 1);
  }

  it('GIVEN an idle fleet THEN each slower instance gets cold prompts in proportion to its speed (weighted rendezvous)', () => {
    const views = mixed();
    const wins = coldWins(views);
    const totalWeight = 5 + 2 * WEIGHT;
    for (const [i, v] of views.entries()) expectNear(wins.get(v.id) ?? 0, (i < 5 ? 1 : WEIGHT) / totalWeight);
  });

  it('GIVEN three of the fast instances busy THEN the slower ones get more cold prompts: their share among the idle', () => {
    // 1,000 queued tokens: more than the slack over an idle instance's cold cost (a 256-token prompt's prefill).
    const views = mixed((i) => (i < 3 ? { queuedPrefillTokens: 1000, inFlight: 1 } : {}));
    const wins = coldWins(views);
    const idleWeight = 2 + 2 * WEIGHT;
    for (const [i, v] of views.entries()) {
      if (i < 3) expect(wins.get(v.id) ?? 0).toBe(0);
      else expectNear(wins.get(v.id) ?? 0, (i < 5 ? 1 : WEIGHT) / idleWeight);
    }
  });

  it('GIVEN every fast instance busy THEN cold prompts go to the idle slower ones, though each prefills there 3× slower', () => {
    const views = mixed((i) => (i < 5 ? { queuedPrefillTokens: 1000, inFlight: 1 } : {}));
    const wins = coldWins(views);
    expect((wins.get(views[5].id) ?? 0) + (wins.get(views[6].id) ?? 0)).toBe(PROMPTS);
    expectNear(wins.get(views[5].id) ?? 0, 0.5);
  });

  it('GIVEN a slower instance with queued work THEN the queue counts at its slowdown: a queue a fast instance would clear within the slack keeps it out', () => {
    // 100 queued tokens × 1/0.3 ≈ 333 fastest-instance tokens: beyond the 64-token slack of a 256-token prompt.
    const views = mixed((i) => (i >= 5 ? { queuedPrefillTokens: 100, inFlight: 1 } : {}));
    const wins = coldWins(views);
    expect((wins.get(views[5].id) ?? 0) + (wins.get(views[6].id) ?? 0)).toBe(0);
  });

  it('GIVEN a slower instance holding a long prefix of the prompt THEN the prompt goes there (a hit costs its uncached part × the slowdown)', () => {
    const p = policy();
    const views = mixed();
    const full = blocksOf('long', 40);
    place(p, chatRequest(full), views[6].id);
    const d = decide(p, chatRequest(`${full}${blocksOf('tail', 1)}`), views);
    expect(d).toMatchObject({ instance: views[6].id, reason: 'cache-match' });
  });

  it('GIVEN every instance at the same speed THEN every cold placement is the one made without speeds', () => {
    const withSpeeds = idle(7).map((v) => ({ ...v, prefillTokensPerSecond: SLOW }));
    const busy = (i: number) => (i % 3 === 0 ? { queuedPrefillTokens: 700 * i, decodeSequences: i, inFlight: 2 } : {});
    const a = policy();
    const b = policy();
    for (let i = 0; i < 400; i++) {
      const request = chatRequest(blocksOf(`same${i}`, 1 + (i % 5)));
      const viewsA = withSpeeds.map((v, k) => ({ ...v, ...busy(k) }));
      const viewsB = idle(7).map((v, k) => ({ ...v, ...busy(k) }));
      expect(decide(a, request, viewsA)).toEqual(decide(b, request, viewsB));
    }
  });
});

describe('when hot prefixes and sessions are routed', () => {
  /**
   * Sends `count` requests sharing a prefix of `prefixBlocks` routing blocks (64 tokens each; 2,048 tokens by
   * default); `drains`: each finishes its prefill before the next comes and stays in flight, decoding.
   */
  function hotStream(
    count: number,
    drains: boolean,
    prefixBlocks = 32,
    options: Partial<Record<string, number>> = {},
  ): { used: Set<string>; misses: number } {
    const p = policy(options);
    const views = idle(7).map((v) => ({ ...v }));
    const prefix = blocksOf('hot', prefixBlocks);
    const used = new Set<string>();
    let misses = 0;
    for (let i = 0; i < count; i++) {
      const r = chatRequest(`${prefix}question ${i} ${'x'.repeat(200)}`);
      const d = p.decide(r, { instances: views, nowMs: 0 });
      p.commit(r, d);
      const v = views.find((x) => x.id === d.instance)!;
      if (drains) Object.assign(v, { inFlight: v.inFlight + 1, decodeSequences: (v.decodeSequences ?? 0) + 1 });
      else
        Object.assign(v, {
          inFlight: v.inFlight + 1,
          queuedPrefillTokens: (v.queuedPrefillTokens ?? 0) + 2_100 - (d.predictedCachedTokens ?? 0),
        });
      if ((d.predictedCachedTokens ?? 0) === 0) misses++;
      used.add(d.instance);
    }
    return { used, misses };
  }

  it('GIVEN a hot prefix at light load (prefills drain) THEN it stays on one instance until that one has 1/ε requests, and each instance computes it once', () => {
    // Bounded load in requests (ε = 0.25): 4 requests before a second instance is needed.
    expect(hotStream(4, true).used.size).toBe(1);
    const { used, misses } = hotStream(30, true);
    expect(used.size).toBeGreaterThan(1);
    expect(misses).toBe(used.size);
  });

  it('GIVEN a hot prefix longer than one engine step at light load THEN its holder keeps it past its request share: passing over would recompute more than a step', () => {
    // 160 blocks = 10,240 tokens > stepTokens 8,192.
    expect(hotStream(30, true, 160).used.size).toBe(1);
    // The same prefix within one step (stepTokens above it) is bounded by request share again.
    expect(hotStream(30, true, 160, { stepTokens: 16_384 }).used.size).toBeGreaterThan(1);
  });

  it('GIVEN the holder was sent more than its share earlier but carries no more than its share now THEN it keeps the hit', () => {
    const p = policy();
    const views = idle(7);
    const history = blocksOf('conversation', 12);
    // Six earlier requests went to instance-0 and have ended: over its share of the requests sent, idle now.
    for (let i = 0; i < 6; i++) place(p, chatRequest(`${blocksOf(`earlier-${i}`, 2)}`), views[0].id);
    place(p, chatRequest(history), views[0].id);
    const d = decide(p, chatRequest(`${history}${blocksOf('next turn', 1)}`), views);
    expect(d).toMatchObject({ instance: views[0].id, reason: 'cache-match' });
    // The same holder carrying more than its share of the requests in flight is passed over.
    const loaded = views.map((v, i) => (i === 0 ? { ...v, inFlight: 5, decodeSequences: 5 } : v));
    expect(decide(p, chatRequest(`${history}${blocksOf('next turn', 1)}`), loaded).instance).not.toBe(views[0].id);
  });

  describe('GIVEN one instance was sent fewer than 0.75 × its share of the requests (below its floor) at light load', () => {
    /**
     * Seven idle instances: instances 0–5 were each sent `earlier` requests of their own, instance 6 `starved` (its
     * share of 6 × earlier + starved is at least 4 requests, the bound's minimum) of `starvedBlocks` routing blocks
     * each (64 tokens a block); `system` (a system prompt of `systemBlocks` blocks) was sent to each of `holders`.
     */
    function fleet(systemBlocks: number, holders: readonly number[], starved = 0, earlier = 6, starvedBlocks = 2) {
      const p = policy();
      const views = idle(7);
      const system = blocksOf('system', systemBlocks);
      for (let i = 0; i < 6; i++)
        for (let k = 0; k < earlier; k++) place(p, chatRequest(blocksOf(`own-${i}-${k}`, 2)), views[i].id);
      for (let k = 0; k < starved; k++) place(p, chatRequest(blocksOf(`own-6-${k}`, starvedBlocks)), views[6].id);
      for (const h of holders) place(p, chatRequest(system), views[h].id);
      const next = (label: string) => decide(p, chatRequest(`${system}${blocksOf(label, 1)}`), views).instance;
      return { views, next };
    }

    it('WHEN it holds the prompt as far as any instance does THEN it takes the request: nothing is recomputed', () => {
      // 12 blocks = 768 tokens: more than the slack, but instance 6 holds all of it too. Its index holds the most
      // (one 100-block prompt), so the load tie-break among equal costs would not choose it.
      const { views, next } = fleet(12, [0, 1, 6], 1, 6, 100);
      expect(next('user')).toBe(views[6].id);
    });

    it('WHEN a prefix within the slack (384 tokens) is held by two others THEN it takes the request and recomputes the shared prefix', () => {
      const { views, next } = fleet(6, [0, 1]);
      expect(next('user')).toBe(views[6].id);
    });

    it('WHEN it has prefill queued THEN a holder keeps it: a recompute there would delay its queue', () => {
      const { views, next } = fleet(6, [0, 1]);
      // One queued token: its cost stays within the slack, so only the idle condition keeps the request off it.
      views[6] = { ...views[6], queuedPrefillTokens: 1 };
      expect([views[0].id, views[1].id]).toContain(next('user'));
    });

    it('WHEN the prefix is held by one instance alone (a conversation history) THEN that instance keeps it', () => {
      const { views, next } = fleet(6, [0]);
      expect(next('user')).toBe(views[0].id);
    });

    it('WHEN the shared prefix is longer than the slack (768 tokens) THEN a holder keeps it', () => {
      const { views, next } = fleet(12, [0, 1]);
      expect([views[0].id, views[1].id]).toContain(next('user'));
    });

    it('WHEN it was sent 0.75 × its share or more THEN a holder keeps it', () => {
      // 6 × 6 + 5 + 2 system prompts = 43 sent: share 6.14, floor 4.6 ≤ 5. With 4 sent: share 6, floor 4.5 > 4.
      const atFloor = fleet(6, [0, 1], 5);
      expect([atFloor.views[0].id, atFloor.views[1].id]).toContain(atFloor.next('user'));
      const below = fleet(6, [0, 1], 4);
      expect(below.next('user')).toBe(below.views[6].id);
    });

    it('WHEN its share is under 4 requests (a young router) THEN a holder keeps it', () => {
      // 6 × 3 + 2 = 20 sent: share 2.9, under the bound's minimum of 4 requests.
      const { views, next } = fleet(6, [0, 1], 0, 3);
      expect([views[0].id, views[1].id]).toContain(next('user'));
    });
  });

  it('GIVEN prefixes of very unequal popularity under load THEN no instance is sent more than its bounded share of requests by a cache match', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 2, max: 7 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 40, max: 150 }),
        fc.integer({ min: 0, max: 1000 }),
        (n, prefixes, count, seed) => {
          const p = policy();
          const views = idle(n);
          const rng = new SeededRng(seed);
          const sent = new Map<string, number>();
          for (let i = 0; i < count; i++) {
            // Prefix k is drawn with probability ∝ 2^-k: one dominates.
            let k = 0;
            while (k < prefixes - 1 && rng.next() < 0.5) k++;
            const r = chatRequest(`${blocksOf(`system-${k}`, 8)}user ${i}`);
            const d = p.decide(r, { instances: views, nowMs: 0 });
            p.commit(r, d);
            sent.set(d.instance, (sent.get(d.instance) ?? 0) + 1);
            // Every request stays in flight (decoding): each instance carries what it was sent.
            const v = views.find((x) => x.id === d.instance)!;
            Object.assign(v, { inFlight: v.inFlight + 1, decodeSequences: (v.decodeSequences ?? 0) + 1 });
            // A request matching a cached prefix never takes its instance past ⌈1.25 × total / n⌉ (or 4) while another
            // instance is under; cold prompts follow rendezvous order (bounded by index contents) instead.
            const bound = Math.max(Math.ceil((1.25 * (i + 1)) / n), 4);
            const under = views.some((v) => v.id !== d.instance && (sent.get(v.id) ?? 0) + 1 <= bound);
            if (d.reason !== 'cold-rendezvous' && under) expect(sent.get(d.instance)).toBeLessThanOrEqual(bound);
          }
        },
      ),
      { numRuns: 40 },
    );
  });

  it('GIVEN a hot prefix whose prefill queue only grows THEN it spreads to more instances instead of piling onto one', () => {
    expect(hotStream(12, false).used.size).toBeGreaterThan(1);
  });

  it('GIVEN a session header THEN its requests stay on one instance unless it is unhealthy or overloaded', () => {
    const p = policy();
    const views = idle(5);
    const headers = { 'x-session-id': 'conversation-42' };
    const r1: RoutingRequest = { ...chatRequest('hello there'), headers };
    const d1 = decide(p, r1, views);
    p.commit(r1, d1);
    const r2: RoutingRequest = { ...chatRequest(blocksOf('unrelated', 4)), headers };
    expect(decide(p, r2, views)).toMatchObject({ instance: d1.instance, reason: 'session-affinity' });
    const unhealthy = views.map((v) => (v.id === d1.instance ? { ...v, healthy: false } : v));
    expect(decide(p, r2, unhealthy).instance).not.toBe(d1.instance);
    const overloaded = views.map((v) => (v.id === d1.instance ? { ...v, queuedPrefillTokens: 1_000_000 } : v));
    expect(decide(p, r2, overloaded).instance).not.toBe(d1.instance);
    const off = createPolicy({ name: 'cache-aware', sessionHeader: '' }, { rng: new SeededRng(1) });
    off.commit(r1, d1);
    expect(off.decide(r2, { instances: views, nowMs: 0 }).reason).not.toBe('session-affinity');
  });
});

describe('when the index is bounded and corrected', () => {
  it('GIVEN any stream of prompts THEN each instance index stays within its capacity from the KV size', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1024, max: 8192 }),
        fc.array(fc.integer({ min: 1, max: 30 }), { minLength: 1, maxLength: 40 }),
        (kvTokens, sizes) => {
          const p = policy();
          const views = idle(3, { kvCapacityTokens: kvTokens });
          const capacity = Math.floor((kvTokens * CHARS_PER_TOKEN) / BLOCK);
          sizes.forEach((blocks, i) => {
            const r = chatRequest(blocksOf(`p${i}`, blocks));
            p.commit(r, decide(p, r, views));
          });
          for (const v of views) expect(p.index.get(v.id)?.size ?? 0).toBeLessThanOrEqual(capacity);
          expect(p.capacityBlocksOf(views[0])).toBe(capacity);
        },
      ),
      { numRuns: 40 },
    );
  });

  it('GIVEN an instance removed from the list or ejected THEN its entries disappear', () => {
    const p = policy();
    const views = idle(3);
    for (let i = 0; i < 6; i++) place(p, chatRequest(blocksOf(`q${i}`, 3)), views[i % 3].id);
    expect(p.index.instanceIds().sort()).toEqual(views.map((v) => v.id).sort());
    const r = chatRequest(blocksOf('next', 2));
    p.commit(r, p.decide(r, { instances: [views[0], { ...views[1], healthy: false }], nowMs: 0 }));
    expect(p.index.instanceIds()).toEqual([views[0].id]);
  });

  /** One instance that was sent an old 4-block prompt, then a 20-block document; a request extending the document is decided and committed. */
  function feedbackScenario() {
    const p = policy();
    const [a] = idle(1);
    const old = chatRequest(blocksOf('old', 4));
    place(p, old, a.id);
    const doc = blocksOf('doc', 20);
    place(p, chatRequest(doc), a.id);
    const r = chatRequest(`${doc}more`);
    const d = p.decide(r, { instances: [a], nowMs: 0 });
    p.commit(r, d);
    return { p, a, old, doc, r, d };
  }

  it('GIVEN the engine reports fewer cached tokens than predicted THEN the blocks it evidently evicted, and older ones, are dropped', () => {
    const { p, a, old, doc, r, d } = feedbackScenario();
    expect(d.predictedCachedTokens).toBe(20 * BLOCK_TOKENS);
    // Only 5 blocks' worth came from cache: block 5 onwards had been evicted, and so had everything older.
    p.release(r, d, { kind: 'completed', cachedTokens: 5 * BLOCK_TOKENS });
    expect(p.index.get(a.id)!.match(p.blockHashesOf(old))).toBe(0);
    // This request's own blocks were just computed: they stay.
    expect(p.index.get(a.id)!.match(p.blockHashesOf(chatRequest(doc)))).toBe(20);
  });

  it('GIVEN the engine delivers about what was predicted THEN nothing is dropped', () => {
    const { p, a, old, r, d } = feedbackScenario();
    p.release(r, d, { kind: 'completed', cachedTokens: 19 * BLOCK_TOKENS });
    expect(p.index.get(a.id)!.match(p.blockHashesOf(old))).toBe(4);
  });

  /** Sends `request` to `instance` and releases it with the engine's report of `cachedBlocks` blocks served from cache. */
  function served(p: CacheAwarePolicy, request: RoutingRequest, instance: string, cachedBlocks: number): void {
    const d: RoutingDecision = { instance, reason: 'cache-match' };
    p.commit(request, d);
    p.release(request, d, { kind: 'completed', cachedTokens: cachedBlocks * BLOCK_TOKENS });
  }

  /** Ten 4-block conversations on one instance, then a hot 8-block prefix, and the engine seen serving conversation 7 whole. */
  function warmInstance() {
    const p = policy();
    const [a] = idle(1);
    const conversations = Array.from({ length: 10 }, (_, i) => chatRequest(blocksOf(`conversation-${i}`, 4)));
    for (const c of conversations) place(p, c, a.id);
    const hot = chatRequest(blocksOf('hot system prompt', 8));
    place(p, hot, a.id);
    served(p, conversations[7], a.id, 4);
    served(p, hot, a.id, 8);
    const matched = (r: RoutingRequest) => p.index.get(a.id)!.match(p.blockHashesOf(r));
    return { p, a, conversations, hot, matched };
  }

  it('GIVEN a request that matches a hot prefix but the engine served none of it (another rendering) THEN the index keeps everything', () => {
    const { p, a, conversations, hot, matched } = warmInstance();
    // WHEN a request with the hot prefix's routing text reports cached_tokens 0, many times
    for (let i = 0; i < 5; i++) served(p, hot, a.id, 0);
    // THEN the hot chain stays routable and nothing older was dropped: the engine was just seen serving deeper blocks
    expect(matched(hot)).toBe(8);
    for (const c of conversations) expect(matched(c)).toBe(4);
    // (the whole prompt less its last token, which the engine recomputes)
    expect(decide(p, hot, [a]).predictedCachedTokens).toBe(8 * BLOCK_TOKENS - 1);
  });

  it('GIVEN the engine reports an old conversation missing (deeper than anything it served) THEN it and everything older are dropped', () => {
    const { p, a, conversations, matched } = warmInstance();
    served(p, conversations[2], a.id, 0);
    expect(matched(conversations[0])).toBe(0);
    expect(matched(conversations[1])).toBe(0);
    // The reporting request's own blocks were just computed: back in. Newer ones stay.
    expect(matched(conversations[2])).toBe(4);
    expect(matched(conversations[3])).toBe(4);
  });

  it('GIVEN repeated eviction reports THEN each drops at most the blocks recorded since the previous correction', () => {
    const { p, a, conversations, matched } = warmInstance();
    served(p, conversations[2], a.id, 0); // corrects: conversations 0-2 dropped, 2 recorded again (4 blocks since)
    // WHEN the engine at once reports conversation 6 missing (older ones 3-5 with it, by LRU)
    served(p, conversations[6], a.id, 0);
    // THEN only 4 blocks (one conversation, the oldest) go: an LRU engine cannot have lost more since it admitted only 4
    expect(matched(conversations[3])).toBe(0);
    expect(matched(conversations[4])).toBe(4);
    // AND once more traffic has come in, a repeated report corrects further
    for (let i = 0; i < 3; i++) place(p, chatRequest(blocksOf(`new-${i}`, 4)), a.id);
    served(p, conversations[6], a.id, 0);
    expect(matched(conversations[4])).toBe(0);
    expect(matched(conversations[5])).toBe(0);
  });

  it('GIVEN a different tenant key or model THEN the same text does not match', () => {
    const p = policy();
    const views = idle(4);
    const text = blocksOf('doc', 10);
    place(p, chatRequest(text, 'tenant-a'), views[0].id);
    expect(decide(p, chatRequest(text, 'tenant-a'), views).predictedCachedTokens).toBeGreaterThan(0);
    expect(decide(p, chatRequest(text, 'tenant-b'), views).predictedCachedTokens).toBe(0);
    expect(decide(p, { ...chatRequest(text, 'tenant-a'), model: 'other' }, views).predictedCachedTokens).toBe(0);
  });
});

describe('when this router observes what the instances publish', () => {
  function observedEmpty(atMs: number): ObservedInstance {
    const o = new ObservedInstance();
    o.apply(new InstanceStateLog(BLOCK, 10_000, 'e').updateSince(undefined, undefined), atMs);
    return o;
  }

  it("GIVEN an observation THEN the instance's index as of it plus what this router sent since count, not what only this router's older index holds", () => {
    const p = policy({ balanceSlackTokens: 0 });
    const views = idle(2);
    const before = chatRequest(blocksOf('sent-before', 10));
    place(p, before, views[0].id);
    // The instances publish empty indexes (their engines evicted it, say): this router's own memory is older.
    const observing = views.map((v) => ({ ...v, observedBlocks: observedEmpty(5) }));
    expect(p.decide(before, { instances: observing, nowMs: 10 }).predictedCachedTokens).toBe(0);
    // Sent after the observation: not in it yet, but this router knows.
    const after = chatRequest(blocksOf('sent-after', 10));
    const d = p.decide(after, { instances: observing, nowMs: 10 });
    p.commit(after, d);
    const again = p.decide(after, { instances: observing, nowMs: 11 });
    expect(again.instance).toBe(d.instance);
    expect(again.predictedCachedTokens).toBe(10 * BLOCK_TOKENS - 1);
    // Without observations the router's own index is all it has.
    expect(p.decide(before, { instances: views, nowMs: 12 }).predictedCachedTokens).toBe(10 * BLOCK_TOKENS - 1);
  });

  it('GIVEN a published index with another block size THEN it is not used', () => {
    const p = policy();
    const log = new InstanceStateLog(BLOCK * 2, 10_000, 'e');
    const prompt = chatRequest(blocksOf('other-size', 8));
    // The very hashes this policy computes, but published as blocks of another size: they must not be trusted.
    log.admit(p.blockHashesOf(prompt), 100).end();
    const o = new ObservedInstance();
    o.apply(log.updateSince(undefined, undefined), 0);
    const views = idle(2).map((v) => ({ ...v, observedBlocks: o }));
    // The router falls back on its own (empty) index: a cold placement, not an observed match.
    expect(p.decide(prompt, { instances: views, nowMs: 0 }).reason).toBe('cold-rendezvous');
  });
});
