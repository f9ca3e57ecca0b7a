import fc from 'fast-check';
import { SeededRng } from '../../../router/src/common/seeded-rng';
import { createPolicy, type InstanceView, type RoutingPolicy } from '../../../router/src/policy';
import { chatRequest } from './policy-test-helpers';

/** A prompt of `chars` characters, distinct per label. */
function text(label: string, chars: number): string {
  let s = '';
  for (let i = 0; s.length < chars; i++) s += `${label}-${i} `;
  return s.slice(0, chars);
}

function views(loads: readonly number[]): InstanceView[] {
  return loads.map((inFlight, i) => ({ id: `http://10.0.0.${i + 1}:8000`, healthy: true, inFlight }));
}

function smg(options: Record<string, number> = {}, seed = 1): RoutingPolicy {
  return createPolicy({ name: 'smg-cache-aware', ...options }, { rng: new SeededRng(seed) });
}

/** Decides and commits `prompt` at `nowMs` on instances with `loads` in flight. */
function route(p: RoutingPolicy, prompt: string, loads: readonly number[], nowMs = 0) {
  const request = chatRequest(prompt);
  const decision = p.decide(request, { instances: views(loads), nowMs });
  p.commit(request, decision);
  return decision;
}

/** Sends `prompt` to instance `target` first: every other instance loaded so the miss branch picks `target`. */
function placeOn(p: RoutingPolicy, prompt: string, target: number, n: number): void {
  const loads = Array.from({ length: n }, (_, i) => (i === target ? 0 : 1));
  expect(route(p, prompt, loads)).toMatchObject({ instance: views(loads)[target].id, reason: 'smg-min-load' });
}

describe('when smg-cache-aware routes by its tree', () => {
  it('GIVEN a prompt one worker was sent THEN the same prompt follows it (match rate 1 > 0.3): smg-cache-hit', () => {
    const p = smg();
    const prompt = text('system', 4096);
    placeOn(p, prompt, 2, 4);
    expect(route(p, prompt, [0, 0, 0, 0])).toEqual({ instance: views([0, 0, 0])[2].id, reason: 'smg-cache-hit' });
  });

  it('GIVEN a match at or below cacheThreshold THEN the least-loaded worker, by in flight then requests sent: smg-min-load', () => {
    const p = smg({ cacheThreshold: 0.5 });
    const shared = text('shared', 1024);
    placeOn(p, `${shared}${text('a', 3072)}`, 0, 3);
    // GIVEN a new prompt sharing the first 1,024 of its 4,096 characters with what worker 0 was sent (rate 0.25)
    const next = `${shared}${text('b', 3072)}`;
    // THEN the least loaded wins, not the holder: of workers 0 and 2 (equal load), 2, which was sent fewer requests
    expect(route(p, next, [0, 1, 0])).toEqual({ instance: views([0, 1, 0])[2].id, reason: 'smg-min-load' });
    expect(route(p, text('cold', 4096), [0, 0, 0])).toEqual({ instance: views([0, 0])[1].id, reason: 'smg-min-load' });
  });

  it('GIVEN two workers holding the longest match at equal load THEN either may win: ties broken by the seeded RNG', () => {
    const prompt = text('hot', 2048);
    const winners = new Set<string>();
    for (let seed = 1; seed <= 20; seed++) {
      const p = smg({}, seed);
      placeOn(p, prompt, 0, 3);
      // The holder swamped: the request spills to worker 1, which is sent the prompt too
      expect(route(p, prompt, [200, 0, 0])).toEqual({ instance: views([0, 0])[1].id, reason: 'smg-spill' });
      const decision = route(p, prompt, [0, 0, 5]);
      expect(decision.reason).toBe('smg-cache-hit');
      winners.add(decision.instance);
    }
    expect([...winners].sort()).toEqual([views([0, 0])[0].id, views([0, 0])[1].id]);
  });
});

describe('when the spill gate sees the holder of a matching prompt loaded', () => {
  // The gate fires exactly when the holder's load L exceeds both 1.5 × the mean m and m + 64 (the CLI defaults).
  it.each([
    ['both exceeded', [0, 200], 'smg-spill'],
    ['relative only (20 > 15, not > 74)', [0, 20], 'smg-cache-hit'],
    ['absolute only (400 > 364, not > 450)', [200, 400], 'smg-cache-hit'],
    ['L = m + 64 exactly (138 = 74 + 64)', [10, 138], 'smg-cache-hit'],
    ['L = m + 64.5 (139 > 74.5 + 64)', [10, 139], 'smg-spill'],
  ])('GIVEN %s THEN %s', (_case, loads, reason) => {
    const p = smg();
    const prompt = text('conversation', 4096);
    placeOn(p, prompt, 1, 2);
    const decision = route(p, prompt, loads);
    expect(decision.reason).toBe(reason);
    expect(decision.instance).toBe(views(loads)[reason === 'smg-spill' ? 0 : 1].id);
  });

  it('GIVEN any loads THEN it spills exactly when both thresholds are exceeded, to the least-loaded worker', () => {
    fc.assert(
      fc.property(
        fc.array(fc.integer({ min: 0, max: 400 }), { minLength: 2, maxLength: 6 }),
        fc.nat(),
        fc.integer({ min: 0, max: 100 }),
        fc.double({ min: 1, max: 3, noNaN: true }),
        (loads, holderSeed, abs, rel) => {
          const holder = holderSeed % loads.length;
          const p = smg({ balanceAbsThreshold: abs, balanceRelThreshold: rel });
          const prompt = text('p', 2048);
          placeOn(p, prompt, holder, loads.length);
          const mean = loads.reduce((a, b) => a + b, 0) / loads.length;
          const spills = loads[holder] > mean * rel && loads[holder] > mean + abs;
          const decision = route(p, prompt, loads);
          expect(decision.reason).toBe(spills ? 'smg-spill' : 'smg-cache-hit');
          if (spills) expect(decision.instance).toBe(views(loads)[loads.indexOf(Math.min(...loads))].id);
          else expect(decision.instance).toBe(views(loads)[holder].id);
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('when the tree is evicted', () => {
  it('GIVEN an eviction interval that passed THEN the tree is cut back to maxTreeSize, least recently sent first', () => {
    const p = smg({ evictionIntervalSecs: 1, maxTreeSize: 4096, matchBlockChars: 64 });
    const old = text('old', 4096);
    const recent = text('recent', 4096);
    placeOn(p, old, 0, 2); // t = 0: the first eviction is due at t = 1 s
    route(p, recent, [1, 0], 500); // to worker 1 (min load), t = 0.5 s
    route(p, text('trigger', 64), [0, 5], 1000); // t = 1 s: evicts down to 4,096 characters
    // THEN the older prompt is gone (a miss: least loaded), the recent one still hits
    expect(route(p, old, [3, 0], 1001).reason).toBe('smg-min-load');
    expect(route(p, recent, [0, 3], 1002)).toEqual({ instance: views([0, 0])[1].id, reason: 'smg-cache-hit' });
  });
});
