import { SeededRng } from '../../../router/src/common/seeded-rng';
import { createPolicy, type InstanceView, type RoutingPolicy } from '../../../router/src/policy';
import { chatRequest } from './policy-test-helpers';

const CHUNK = 128; // production-stack's HashTrie chunk_size

/** `chunks` 128-character chunks, distinct per label. */
function chunks(label: string, n: number): string {
  let s = '';
  for (let i = 0; s.length < n * CHUNK; i++) s += `${label}-${i} `;
  return s.slice(0, n * CHUNK);
}

function views(n: number, extra: (i: number) => Partial<InstanceView> = () => ({})): InstanceView[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `http://10.0.0.${i + 1}:8000`,
    healthy: true,
    inFlight: 0,
    ...extra(i),
  }));
}

const trie = (seed = 1): RoutingPolicy =>
  createPolicy({ name: 'production-stack-prefixaware' }, { rng: new SeededRng(seed) });

function send(p: RoutingPolicy, text: string, instances: readonly InstanceView[]): string {
  const request = chatRequest(text);
  const decision = p.decide(request, { instances, nowMs: 0 });
  p.commit(request, decision);
  return decision.instance;
}

/** Sends `text` to instance `i` (the only one offered), so the trie records it there. */
const sendTo = (p: RoutingPolicy, text: string, i: number) => send(p, text, [views(3)[i]]);

/** Which instances win `text` over 24 seeds, after `setup`. */
function winners(setup: (p: RoutingPolicy) => void, text: string, instances: readonly InstanceView[]): string[] {
  const won = new Set<string>();
  for (let seed = 1; seed <= 24; seed++) {
    const p = trie(seed);
    setup(p);
    won.add(send(p, text, instances));
  }
  return [...won].sort();
}

describe('when production-stack-prefixaware walks its trie', () => {
  it('GIVEN a prompt no endpoint was sent THEN any endpoint may win (uniform over all)', () => {
    expect(winners(() => {}, chunks('new', 4), views(3))).toEqual(views(3).map((v) => v.id));
  });

  it('GIVEN one endpoint holds the prompt THEN it wins whatever its load (load plays no part)', () => {
    const busy = views(3, (i) => ({ inFlight: i === 2 ? 500 : 0 }));
    expect(winners((p) => sendTo(p, chunks('x', 4), 2), chunks('x', 4), busy)).toEqual([views(3)[2].id]);
  });

  it('GIVEN two endpoints sharing the first chunks and one holding more THEN the longer holder wins; where they part, either', () => {
    const setup = (p: RoutingPolicy) => {
      sendTo(p, chunks('x', 3), 0);
      sendTo(p, `${chunks('x', 2)}${chunks('y', 1)}`, 1);
    };
    // The third chunk of x only endpoint 0 holds: the walk narrows {0, 1} → {0}
    expect(winners(setup, chunks('x', 3), views(3))).toEqual([views(3)[0].id]);
    // A third chunk neither holds: the walk stops at {0, 1}, and either wins, never endpoint 2
    expect(winners(setup, `${chunks('x', 2)}${chunks('z', 1)}`, views(3))).toEqual([views(3)[0].id, views(3)[1].id]);
  });

  it('GIVEN the only holder is unhealthy THEN the walk stops at the first chunk: any healthy endpoint may win', () => {
    const down = views(3, (i) => ({ healthy: i !== 0 }));
    expect(winners((p) => sendTo(p, chunks('x', 3), 0), chunks('x', 3), down)).toEqual([
      views(3)[1].id,
      views(3)[2].id,
    ]);
  });

  it('GIVEN maxTrieNodes reached THEN the least recently inserted chunk nodes are dropped', () => {
    const won = new Set<string>();
    for (let seed = 1; seed <= 24; seed++) {
      const p = createPolicy({ name: 'production-stack-prefixaware', maxTrieNodes: 4 }, { rng: new SeededRng(seed) });
      sendTo(p, chunks('old', 4), 0);
      sendTo(p, chunks('new', 4), 1); // 8 nodes > 4: the 4 of 'old' go
      won.add(send(p, chunks('old', 4), views(3)));
    }
    expect(won.size).toBe(3);
  });
});
