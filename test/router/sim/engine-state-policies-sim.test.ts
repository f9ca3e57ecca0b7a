import { builtinProfile } from '../../../router/src/emulator/engine-profile';
import type { PolicyConfig } from '../../../router/src/policy';
import { simulate } from '../../../router/src/sim/simulator';
import { parseWorkloadSpec } from '../../../router/src/workload';

// 12 groups sharing a 300-token prefix, one request at a time: every engine is idle when a request is decided, so
// the engine that holds the most of the prompt is the best choice for oracle and llm-d-precise alike.
const SPEC =
  'long-context?groups=12&prefixTokens=300&suffixTokens=10..60&outputTokens=3&count=40&seed=11&concurrency=1';
const p5 = builtinProfile('p5-llama-3.1-70b');

function cachedByGroup(policy: PolicyConfig): { first: number[]; repeat: number[]; reasons: Set<string> } {
  const workload = parseWorkloadSpec(SPEC);
  const groupOf = new Map([...workload.requests()].map((r) => [r.id, r.group]));
  const result = simulate({ workload, policy, seed: 3, instances: 4, profile: p5 });
  const seen = new Set<number | undefined>();
  const first: number[] = [];
  const repeat: number[] = [];
  for (const r of [...result.records].sort((a, b) => a.sentAtMs - b.sentAtMs)) {
    const group = groupOf.get(r.id);
    (seen.has(group) ? repeat : first).push(r.cachedPromptTokens ?? 0);
    seen.add(group);
  }
  return { first, repeat, reasons: new Set(result.records.map((r) => r.reason ?? '')) };
}

describe.each([
  ['oracle', 'oracle-least-fleet-cost'],
  ['llm-d-precise', 'llm-d-max-score'],
] as const)('when the simulator runs %s', (name, reason) => {
  it("GIVEN idle engines THEN every repeat of a group is served from the group's prefix, read from the engines' caches", () => {
    const { first, repeat, reasons } = cachedByGroup({ name });
    expect(reasons).toEqual(new Set([reason]));
    expect(first.length).toBeGreaterThan(1);
    expect(repeat.length).toBeGreaterThan(10);
    expect(first.every((c) => c === 0)).toBe(true);
    // 300 shared tokens: at least 18 full 16-token blocks (288 tokens) are cached for every repeat.
    expect(Math.min(...repeat)).toBeGreaterThanOrEqual(288);
  });
});

describe('when the simulator runs random on the same workload', () => {
  it('GIVEN its decisions THEN some repeat misses (so the checks above depend on the engine state)', () => {
    const { repeat } = cachedByGroup({ name: 'random' });
    expect(Math.min(...repeat)).toBe(0);
  });
});
