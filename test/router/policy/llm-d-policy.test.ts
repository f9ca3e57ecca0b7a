import { SeededRng } from '../../../router/src/common/seeded-rng';
import { createPolicy, type InstanceView, type RoutingPolicy } from '../../../router/src/policy';
import { chatRequest } from './policy-test-helpers';

const BLOCK_CHARS = 256; // 64 tokens, the profile's block size

function prompt(label: string, blocks: number): string {
  let s = '';
  for (let i = 0; s.length < blocks * BLOCK_CHARS; i++) s += `${label}-${i} `;
  return s.slice(0, blocks * BLOCK_CHARS);
}

const id = (i: number) => `http://10.0.0.${i + 1}:8000`;

function views(waiting: readonly number[], kvCapacityTokens = 1_000_000): InstanceView[] {
  return waiting.map((w, i) => ({ id: id(i), healthy: true, inFlight: w, decodeSequences: 0, kvCapacityTokens }));
}

const llmd = (seed = 1): RoutingPolicy => createPolicy({ name: 'llm-d' }, { rng: new SeededRng(seed) });

function sentTo(p: RoutingPolicy, text: string, i: number, released = true): void {
  const request = chatRequest(text);
  const decision = { instance: id(i), reason: 'llm-d-max-score' };
  p.commit(request, decision);
  if (released) p.release(request, decision, { kind: 'completed' });
}

const decide = (p: RoutingPolicy, text: string, instances: readonly InstanceView[]) =>
  p.decide(chatRequest(text), { instances, nowMs: 0 }).instance;

describe('when llm-d sums its weighted scorers', () => {
  it('GIVEN idle pods THEN the one holding the prompt wins (2 × 1 + 1 + 1 against 0 + 1 + 1)', () => {
    const p = llmd();
    sentTo(p, prompt('a', 8), 1);
    expect(decide(p, prompt('a', 8), views([0, 0, 0]))).toBe(id(1));
  });

  it('GIVEN the holder has the longest queue THEN a full match still wins (2 + 1 + 0 against 0 + 1 + 1)', () => {
    const p = llmd();
    sentTo(p, prompt('a', 8), 1);
    expect(decide(p, prompt('a', 8), views([0, 5]))).toBe(id(1));
  });

  it('GIVEN a half match on the longest queue THEN it ties with an idle cold pod (2 × 0.5 + 1 + 0 = 0 + 1 + 1): either wins', () => {
    const text = `${prompt('a', 4)}${prompt('b', 4)}`;
    const winners = new Set<string>();
    for (let seed = 1; seed <= 16; seed++) {
      const p = llmd(seed);
      sentTo(p, prompt('a', 4), 1);
      winners.add(decide(p, text, views([0, 5])));
    }
    expect([...winners].sort()).toEqual([id(0), id(1)]);
  });

  it('GIVEN KV in use by requests in flight THEN the emptier pod wins among cold, equally queued pods', () => {
    const p = llmd();
    // 16 blocks of 64 tokens = 1,024 tokens in flight on pod 0 of 2,048: usage 0.5
    sentTo(p, prompt('busy', 16), 0, false);
    expect(decide(p, prompt('cold', 2), views([0, 0], 2048))).toBe(id(1));
  });
});
