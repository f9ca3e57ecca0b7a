import { SeededRng } from '../../../router/src/common/seeded-rng';
import { createPolicy, type InstanceView, type RoutingPolicy } from '../../../router/src/policy';
import { chatRequest } from './policy-test-helpers';

/** A prompt of `chars` characters, distinct per label. */
function text(label: string, chars: number): string {
  let s = '';
  for (let i = 0; s.length < chars; i++) s += `${label}-${i} `;
  return s.slice(0, chars);
}

const id = (i: number) => `http://10.0.0.${i + 1}:8000`;

function views(loads: readonly number[]): InstanceView[] {
  return loads.map((inFlight, i) => ({ id: id(i), healthy: true, inFlight }));
}

const aibrix = (seed = 1): RoutingPolicy => createPolicy({ name: 'aibrix-prefix-cache' }, { rng: new SeededRng(seed) });

/** Records `prompt` for pod `i` (a committed decision at time 0). */
function sentTo(p: RoutingPolicy, prompt: string, i: number): void {
  p.commit(chatRequest(prompt), { instance: id(i), reason: 'aibrix-prefix-match' });
}

const decide = (p: RoutingPolicy, prompt: string, loads: readonly number[], nowMs = 0) =>
  p.decide(chatRequest(prompt), { instances: views(loads), nowMs });

const PROMPT = text('conversation', 800);

describe('when aibrix-prefix-cache routes', () => {
  it.each([
    [[0, 9], { instance: id(0), reason: 'aibrix-imbalance' }],
    [[0, 8], { instance: id(1), reason: 'aibrix-prefix-match' }],
  ])('GIVEN pod 1 holds the prompt and loads %j THEN the guard fires only above 8 apart: %j', (loads, expected) => {
    const p = aibrix();
    sentTo(p, PROMPT, 1);
    expect(decide(p, PROMPT, loads)).toEqual(expected);
  });

  it('GIVEN the holder is above the mean + 1 σ THEN a least-loaded pod instead (0, 0, 6: limit 2 + 2.83)', () => {
    const winners = new Set<string>();
    for (let seed = 1; seed <= 16; seed++) {
      const p = aibrix(seed);
      sentTo(p, PROMPT, 2);
      const decision = decide(p, PROMPT, [0, 0, 6]);
      expect(decision.reason).toBe('aibrix-least-request');
      winners.add(decision.instance);
    }
    expect([...winners].sort()).toEqual([id(0), id(1)]);
  });

  it('GIVEN pods holding different lengths THEN the longer match wins over a less loaded shorter one, within the bound', () => {
    const p = aibrix();
    sentTo(p, PROMPT, 0); // 100 %
    sentTo(p, PROMPT.slice(0, 400), 1); // 50 %
    // Loads 1, 0, 1, 1: mean 0.75, σ 0.43, limit 1.18: pod 0 (load 1) is within it
    expect(decide(p, PROMPT, [1, 0, 1, 1])).toEqual({ instance: id(0), reason: 'aibrix-prefix-match' });
  });

  it('GIVEN two pods with the same match THEN the one with fewer requests in flight', () => {
    const p = aibrix();
    sentTo(p, PROMPT, 0);
    sentTo(p, PROMPT, 1);
    expect(decide(p, PROMPT, [3, 1, 2])).toEqual({ instance: id(1), reason: 'aibrix-prefix-match' });
  });

  it('GIVEN a block older than 20 minutes THEN it no longer matches', () => {
    const p = aibrix();
    sentTo(p, PROMPT, 1);
    expect(decide(p, PROMPT, [0, 1], 20 * 60_000).reason).toBe('aibrix-prefix-match');
    expect(decide(p, PROMPT, [0, 1], 20 * 60_000 + 1)).toEqual({ instance: id(0), reason: 'aibrix-least-request' });
  });
});

describe('when the aibrix-prefix-cache table is full', () => {
  it('GIVEN prefixCacheBlockNumber 250 and two 200-block prompts THEN the older prompt is evicted from its start and the newer kept whole', () => {
    const p = createPolicy({ name: 'aibrix-prefix-cache', prefixCacheBlockNumber: 250 } as never, {
      rng: new SeededRng(1),
    });
    const older = text('older', 800);
    const newer = text('newer', 800);
    sentTo(p, older, 1);
    sentTo(p, newer, 0);
    expect(decide(p, newer, [0, 0, 0]).reason).toBe('aibrix-prefix-match');
    expect(decide(p, newer, [0, 0, 0]).instance).toBe(id(0));
    expect(decide(p, older, [0, 0, 0]).reason).toBe('aibrix-least-request');
  });
});
