import fc from 'fast-check';
import type { InstanceView, RoutingSnapshot } from '../../../../router/src/policy';
import type { RoutingRequest } from '../../../../router/src/protocol/routing-request';
import { memoizedUnkeyedRoutingBlockHashes, routingBlockHashes } from '../../../../router/src/policy/routing-blocks';
import { AibrixPrefixTable } from '../../../../router/src/policy/stages/aibrix-prefix-table';
import { StateHashKey, type RoutingBlockKey } from '../../../../router/src/state/state-hash-key';
import { bodyRequest, chatRequest, instances } from '../policy-test-helpers';

/**
 * The table's rule as it was written before its speed-up (issue 37): keyed HMAC block keys as strings in a Map,
 * the narrowing match one filter per block, and a sweep over every block. The table must give the same match
 * percents after any sequence of writes and reads, since only how it is computed changed.
 */
class OldRuleTable {
  private readonly entries = new Map<RoutingBlockKey, { pods: Set<string>; atMs: number }>();
  private lastSweepMs = -Infinity;
  private readonly key = StateHashKey.fromSecret('aibrix-prefix-table test secret, 32+ characters');

  constructor(
    private readonly blockChars: number,
    private readonly maxBlocks: number,
    private readonly ttlMs: number,
  ) {}

  matchPercents(views: readonly InstanceView[], request: RoutingRequest, nowMs: number): number[] {
    const hashes = routingBlockHashes(request, this.blockChars, this.key);
    const percent = new Map<string, number>();
    let ready = views.map((v) => v.id);
    const n = hashes.length;
    for (let i = 0; i < n; i++) {
      const entry = this.entries.get(hashes[i]);
      if (entry === undefined || entry.atMs + this.ttlMs < nowMs) break;
      const holding = ready.filter((id) => entry.pods.has(id));
      if (holding.length === 0) break;
      for (const id of holding) percent.set(id, Math.floor(((i + 1) * 100) / n));
      ready = holding;
    }
    return views.map((v) => percent.get(v.id) ?? 0);
  }

  commit(request: RoutingRequest, pod: string, nowMs: number): void {
    for (const key of routingBlockHashes(request, this.blockChars, this.key)) {
      const entry = this.entries.get(key) ?? { pods: new Set<string>(), atMs: nowMs };
      this.entries.delete(key);
      entry.pods.add(pod);
      entry.atMs = nowMs;
      this.entries.set(key, entry);
    }
    while (this.entries.size > this.maxBlocks) this.entries.delete(this.entries.keys().next().value as string);
    if (nowMs - this.lastSweepMs < 1000) return;
    this.lastSweepMs = nowMs;
    for (const [key, entry] of this.entries) if (entry.atMs + this.ttlMs < nowMs) this.entries.delete(key);
  }
}

/** The pods of the tests: 4, but 40 in the one that needs more than one word of pod bits. */
let PODS = instances(4);

/** One write or read of both tables; `nowMs` undefined: a commit with no snapshot (clock 0). */
type Step =
  | { readonly op: 'commit'; readonly prompt: RoutingRequest; readonly pod: number; readonly nowMs?: number }
  | { readonly op: 'match'; readonly prompt: RoutingRequest; readonly pods: readonly number[]; readonly nowMs: number };

/** Runs `steps` on the table and the old rule; returns each read's match percents from both. */
function runBoth(
  steps: readonly Step[],
  o: { blockChars: number; maxBlocks: number; ttlMs: number },
): { got: number[][]; want: number[][] } {
  const table = new AibrixPrefixTable(
    { maxBlocks: o.maxBlocks, blockTtlMs: o.ttlMs },
    memoizedUnkeyedRoutingBlockHashes(o.blockChars),
  );
  const old = new OldRuleTable(o.blockChars, o.maxBlocks, o.ttlMs);
  const got: number[][] = [];
  const want: number[][] = [];
  for (const step of steps) {
    // A fresh request object per step, as the router makes one per HTTP request (the hashes are memoized per object).
    const request = { ...step.prompt };
    if (step.op === 'commit') {
      const snapshot: RoutingSnapshot | undefined =
        step.nowMs === undefined ? undefined : { instances: PODS, nowMs: step.nowMs };
      table.commit(request, { instance: PODS[step.pod].id, reason: 'aibrix-prefix-match' }, snapshot);
      old.commit(request, PODS[step.pod].id, step.nowMs ?? 0);
    } else {
      const views = step.pods.map((i) => PODS[i]);
      const snapshot = { instances: views, nowMs: step.nowMs };
      const facts = { request, snapshot, hashes: memoizedUnkeyedRoutingBlockHashes(o.blockChars)(request) };
      got.push(table.candidatesOf(views, facts).map((c) => c.matchPercent));
      want.push(old.matchPercents(views, request, step.nowMs));
    }
  }
  return { got, want };
}

const OPTIONS = { blockChars: 4, maxBlocks: 200_000, ttlMs: 20 * 60_000 };
const commit = (text: string, pod: number, nowMs?: number): Step => ({
  op: 'commit',
  prompt: chatRequest(text),
  pod,
  nowMs,
});
const match = (text: string, nowMs = 0, pods: readonly number[] = [0, 1, 2, 3]): Step => ({
  op: 'match',
  prompt: chatRequest(text),
  pods,
  nowMs,
});

describe('when the aibrix-prefix-table matches a prompt', () => {
  it.each<[string, Step[], number[][]]>([
    ['a pod that held the whole prompt', [commit('abcdefghijkl', 1), match('abcdefghijkl')], [[0, 100, 0, 0]]],
    // 3 blocks: pod 0 holds the first two, pod 1 all three: pod 0 stops at 2 of 3 (66 %)
    [
      'two pods that part after the second block',
      [commit('abcdefghXXXX', 0), commit('abcdefghijkl', 1), match('abcdefghijkl')],
      [[66, 100, 0, 0]],
    ],
    ['a prompt shorter than one block', [commit('abc', 0), match('abc')], [[0, 0, 0, 0]]],
    ['a first block nobody holds', [commit('abcdefgh', 0), match('Xbcdefgh')], [[0, 0, 0, 0]]],
    [
      'another tenant',
      [commit('abcdefgh', 0), { ...match('abcdefgh'), prompt: chatRequest('abcdefgh', 't') }],
      [[0, 0, 0, 0]],
    ],
    ['a holder not among the ready pods', [commit('abcdefgh', 0), match('abcdefgh', 0, [1, 2])], [[0, 0]]],
    // 20 minutes after its write a block still matches; 1 ms later it no longer does
    [
      'a block at its lifetime and 1 ms past it',
      [commit('abcdefgh', 2, 5), match('abcdefgh', 5 + 1_200_000), match('abcdefgh', 5 + 1_200_001)],
      [
        [0, 0, 100, 0],
        [0, 0, 0, 0],
      ],
    ],
  ])('GIVEN %s THEN the match percents are the old rule’s', (_name, steps, expected) => {
    const { got, want } = runBoth(steps, OPTIONS);
    expect(want).toEqual(expected);
    expect(got).toEqual(want);
  });

  it('GIVEN a clock that went back THEN the once-a-second sweep still drops every expired block, wherever it sits', () => {
    // The block written at 0 ms (a commit without a snapshot) sits after the one written at 10,000 ms: the sweep at
    // 12,000 ms must not stop at that live block before it. (A read at -1 ms would still see an unswept block.)
    const o = { blockChars: 4, maxBlocks: 100, ttlMs: 5_000 };
    const steps = [commit('aaaa', 0, 10_000), commit('bbbb', 1), commit('cccc', 2, 12_000), match('bbbb', -1)];
    const { got, want } = runBoth(steps, o);
    expect(want).toEqual([[0, 0, 0, 0]]);
    expect(got).toEqual(want);
  });

  it('GIVEN more blocks than the table keeps THEN the least recently written go first', () => {
    const o = { blockChars: 2, maxBlocks: 3, ttlMs: 60_000 };
    const { got, want } = runBoth([commit('aabb', 0), commit('ccdd', 1), match('aabb'), match('ccdd')], o);
    expect(want).toEqual([
      [0, 0, 0, 0],
      [0, 100, 0, 0],
    ]);
    expect(got).toEqual(want);
  });
});

/** Prompts drawn from a few pieces, so they share prefixes; some with a tenant, an emoji or a lone surrogate. */
const promptArb: fc.Arbitrary<RoutingRequest> = fc
  .tuple(
    fc.array(fc.constantFrom('sys ', 'prompt:', 'abc', 'x', '😀', '\ud800', 'é', 'long shared head. '), {
      maxLength: 12,
    }),
    fc.constantFrom(undefined, 'tenant-a', 'tenant-b'),
    fc.boolean(),
  )
  .map(([pieces, tenant, asBody]) =>
    asBody ? bodyRequest(pieces.join(''), tenant) : chatRequest(pieces.join(''), tenant),
  );

/** A generated step: its clock is the previous one's plus `dtMs`, which may go back. */
type GeneratedStep =
  | { op: 'commit'; prompt: RoutingRequest; pod: number; dtMs: number; noSnapshot: boolean }
  | { op: 'match'; prompt: RoutingRequest; pods: number[]; dtMs: number };

const dtArb = fc.integer({ min: -500, max: 1500 });
const stepArb: fc.Arbitrary<GeneratedStep> = fc.oneof(
  fc.record({
    op: fc.constant('commit' as const),
    prompt: promptArb,
    pod: fc.integer({ min: 0, max: 3 }),
    dtMs: dtArb,
    noSnapshot: fc.boolean(),
  }),
  fc.record({
    op: fc.constant('match' as const),
    prompt: promptArb,
    pods: fc.subarray([0, 1, 2, 3], { minLength: 1 }),
    dtMs: dtArb,
  }),
);

describe('when any sequence of writes and reads runs on the aibrix-prefix-table', () => {
  it('GIVEN generated prompts, block sizes, bounds and clocks (also going back) THEN every read equals the old rule’s', () => {
    fc.assert(
      fc.property(
        fc.array(stepArb, { minLength: 1, maxLength: 40 }),
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 1, max: 3000 }),
        (generated, blockChars, maxBlocks, ttlMs) => {
          let clock = 0;
          const steps = generated.map((g): Step => {
            clock += g.dtMs;
            return g.op === 'commit'
              ? { op: 'commit', prompt: g.prompt, pod: g.pod, nowMs: g.noSnapshot ? undefined : clock }
              : { op: 'match', prompt: g.prompt, pods: g.pods, nowMs: clock };
          });
          const { got, want } = runBoth(steps, { blockChars, maxBlocks, ttlMs });
          expect(got).toEqual(want);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('when the aibrix-prefix-table holds many long prompts for many pods', () => {
  afterEach(() => {
    PODS = instances(4);
  });

  it('GIVEN a block written to 40 pods in turn THEN every pod holds it, the first 32 too after a second word of pod bits', () => {
    PODS = instances(40);
    const steps = [...PODS.map((_, pod) => commit('abcdefgh', pod)), match('abcdefgh', 0, [0, 31, 32, 39])];
    const { got, want } = runBoth(steps, OPTIONS);
    expect(want).toEqual([[100, 100, 100, 100]]);
    expect(got).toEqual(want);
  });

  it('GIVEN an evicted block’s slot reused by another block THEN the new block holds only its own pod', () => {
    const { got, want } = runBoth([commit('aaaa', 0), commit('bbbb', 1), commit('cccc', 2), match('cccc')], {
      blockChars: 4,
      maxBlocks: 1,
      ttlMs: 60_000,
    });
    expect(want).toEqual([[0, 0, 100, 0]]);
    expect(got).toEqual(want);
  });

  it('GIVEN 40 pods and prompts of thousands of blocks THEN it grows, evicts and reuses slots as the old rule matches', () => {
    PODS = instances(40);
    const head = 'shared head of many prompts. '.repeat(40);
    const longPromptArb = fc
      .array(fc.constantFrom('alpha ', 'beta ', 'gamma '.repeat(30), head), { minLength: 1, maxLength: 8 })
      .map((pieces) => chatRequest(pieces.join('')));
    const longStepArb = fc.oneof(
      fc.record({ op: fc.constant('commit' as const), prompt: longPromptArb, pod: fc.integer({ min: 0, max: 39 }) }),
      fc.record({
        op: fc.constant('match' as const),
        prompt: longPromptArb,
        pods: fc.subarray(
          Array.from({ length: 40 }, (_, i) => i),
          { minLength: 1 },
        ),
      }),
    );
    fc.assert(
      fc.property(
        fc.array(longStepArb, { minLength: 1, maxLength: 30 }),
        fc.integer({ min: 1, max: 4 }),
        fc.integer({ min: 500, max: 6000 }),
        (generated, blockChars, maxBlocks) => {
          const steps = generated.map((g, t): Step => ({ ...g, nowMs: t * 100 }));
          const { got, want } = runBoth(steps, { blockChars, maxBlocks, ttlMs: 60_000 });
          expect(got).toEqual(want);
        },
      ),
      { numRuns: 25 },
    );
  });
});
