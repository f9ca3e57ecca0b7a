import { SeededRng } from '../../../router/src/common/seeded-rng';
import { createPolicy, type InstanceView, type RoutingPolicy } from '../../../router/src/policy';
import { chatRequest } from './policy-test-helpers';

const BLOCK_CHARS = 64; // 16 tokens of 4 characters: Dynamo's default block for vLLM

/** A prompt of exactly `blocks` KV blocks, distinct per label. */
function prompt(label: string, blocks: number): string {
  let s = '';
  for (let i = 0; s.length < blocks * BLOCK_CHARS; i++) s += `${label}-${i} `;
  return s.slice(0, blocks * BLOCK_CHARS);
}

function views(queuedBlocks: readonly number[]): InstanceView[] {
  return queuedBlocks.map((q, i) => ({
    id: `http://10.0.0.${i + 1}:8000`,
    healthy: true,
    inFlight: 0,
    queuedPrefillTokens: q * 16,
  }));
}

function dynamo(options: Record<string, number> = {}, seed = 1): RoutingPolicy {
  return createPolicy({ name: 'dynamo-kv', ...options }, { rng: new SeededRng(seed) });
}

/** Records that `text` went to instance `i` and finished (its blocks stay in the router's overlap record). */
function sent(p: RoutingPolicy, text: string, i: number): void {
  const request = chatRequest(text);
  const decision = { instance: views([0, 0, 0])[i].id, reason: 'dynamo-lowest-cost' };
  p.commit(request, decision);
  p.release(request, decision, { kind: 'completed' });
}

const decideOn = (p: RoutingPolicy, text: string, queued: readonly number[]) =>
  p.decide(chatRequest(text), { instances: views(queued), nowMs: 0 }).instance;

describe('when dynamo-kv compares costs', () => {
  const P = 40; // prompt blocks

  it('GIVEN idle workers THEN the one holding the prompt wins (its prefill is credited)', () => {
    const p = dynamo();
    sent(p, prompt('a', P), 1);
    expect(decideOn(p, prompt('a', P), [0, 0])).toBe(views([0, 0])[1].id);
  });

  // Holder: max(Q + P − P, 0) + P = Q + P; cold idle worker: P + P. The holder wins while Q < P.
  it.each([
    [P - 1, 1],
    [P + 1, 0],
  ])('GIVEN the holder has %d blocks queued and the other is idle and cold THEN worker %d wins', (queued, winner) => {
    const p = dynamo();
    sent(p, prompt('a', P), 1);
    expect(decideOn(p, prompt('a', P), [0, queued])).toBe(views([0, 0])[winner].id);
  });

  it('GIVEN equal costs (Q = P) THEN ties are broken by the seeded RNG: both win across seeds', () => {
    const winners = new Set<string>();
    for (let seed = 1; seed <= 16; seed++) {
      const p = dynamo({}, seed);
      sent(p, prompt('a', P), 1);
      winners.add(decideOn(p, prompt('a', P), [0, P]));
    }
    expect(winners.size).toBe(2);
  });

  it('GIVEN overlapScoreCredit 0 THEN the cache is ignored: the less loaded worker wins', () => {
    const p = dynamo({ overlapScoreCredit: 0 });
    sent(p, prompt('a', P), 1);
    expect(decideOn(p, prompt('a', P), [0, 1])).toBe(views([0, 0])[0].id);
  });

  it('GIVEN requests in flight on a worker THEN their blocks count as decode load until released', () => {
    const p = dynamo();
    const busy = chatRequest(prompt('busy', 10));
    const decision = { instance: views([0, 0])[0].id, reason: 'dynamo-lowest-cost' };
    p.commit(busy, decision);
    // Worker 0 carries 10 decode blocks: a cold prompt goes to worker 1
    expect(decideOn(p, prompt('cold', 5), [0, 0])).toBe(views([0, 0])[1].id);
    p.release(busy, decision, { kind: 'completed' });
    // Released: equal again, but worker 0 now holds 'busy' — a prompt starting with it goes there
    expect(decideOn(p, prompt('busy', 10), [0, 0])).toBe(views([0, 0])[0].id);
  });

  it('GIVEN routerTemperature above 0 THEN a worker with a higher cost is sometimes chosen; at 0 never', () => {
    const chosen = (temperature: number) => {
      const winners = new Set<string>();
      for (let seed = 1; seed <= 40; seed++) {
        const p = dynamo({ routerTemperature: temperature }, seed);
        sent(p, prompt('a', P), 1);
        winners.add(decideOn(p, prompt('a', P), [0, 0]));
      }
      return winners.size;
    };
    expect(chosen(0)).toBe(1);
    expect(chosen(1)).toBe(2);
  });
});
