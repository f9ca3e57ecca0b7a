import {
  publishedBlockChars,
  publishedBlocksOf,
  publishedStateLog,
  RoutingCore,
  type RoutingTarget,
} from '../../../router/src/core/routing-core';
import { SeededRng } from '../../../router/src/common/seeded-rng';
import {
  createPolicy,
  NoHealthyInstanceError,
  type ReleaseOutcome,
  type RoutingDecision,
  type RoutingPolicy,
  type RoutingSnapshot,
} from '../../../router/src/policy';
import { routingBlockHashes } from '../../../router/src/policy/routing-blocks';
import type { RoutingRequest } from '../../../router/src/protocol/routing-request';
import { InstanceLoad } from '../../../router/src/state/instance-load';
import { StateHashKey } from '../../../router/src/state/state-hash-key';

const TEST_KEY = StateHashKey.fromSecret('routing-core test: a fixed state-hash key');
import { chatRequest } from '../policy/policy-test-helpers';

const BLOCK = 64;

interface Instance extends RoutingTarget {
  readonly id: string;
}

/** A policy that always chooses `choice`, predicts `cached` tokens, and records every call. */
function scriptedPolicy(
  choice: () => string,
  cached = 0,
): RoutingPolicy & { calls: string[]; releases: ReleaseOutcome[] } {
  const calls: string[] = [];
  const releases: ReleaseOutcome[] = [];
  return {
    name: 'scripted',
    calls,
    releases,
    decide(_request: RoutingRequest, snapshot: RoutingSnapshot): RoutingDecision {
      calls.push('decide');
      if (!snapshot.instances.some((v) => v.healthy)) throw new NoHealthyInstanceError();
      return { instance: choice(), reason: 'scripted', predictedCachedTokens: cached };
    },
    commit() {
      calls.push('commit');
    },
    release(_request, _decision, outcome) {
      calls.push('release');
      releases.push(outcome);
    },
  };
}

function fleet(ids: readonly string[]): Map<string, Instance> {
  return new Map(ids.map((id) => [id, { id, load: new InstanceLoad() }]));
}

function snapshotOf(instances: Map<string, Instance>, unhealthy: readonly string[] = []): RoutingSnapshot {
  return {
    instances: [...instances.values()].map((i) => ({
      id: i.id,
      healthy: !unhealthy.includes(i.id),
      inFlight: i.load.inFlight,
    })),
    nowMs: 0,
  };
}

const prompt = chatRequest('p'.repeat(BLOCK * 8));

describe('when a request goes through the routing core', () => {
  test('GIVEN a decision THEN decide and commit run once, and the chosen instance counts the prompt less what was predicted cached', () => {
    // GIVEN a policy that predicts 100 of the 128 prompt tokens cached
    const instances = fleet(['a', 'b']);
    const policy = scriptedPolicy(() => 'b', 100);
    const core = new RoutingCore(policy, (id) => instances.get(id));
    // WHEN it is decided
    const routed = core.begin(prompt);
    const attempt = routed.decide(snapshotOf(instances));
    // THEN
    expect(policy.calls).toEqual(['decide', 'commit']);
    expect(attempt.target.id).toBe('b');
    expect(instances.get('b')!.load).toMatchObject({ inFlight: 1, queuedPrefillTokens: routed.promptTokens - 100 });
    expect(routed.promptTokens).toBe((BLOCK * 8) / 4);
  });

  test('GIVEN a request that ends THEN the policy is released exactly once with the outcome and every count returns to zero', () => {
    const instances = fleet(['a']);
    const policy = scriptedPolicy(() => 'a');
    const released: ReleaseOutcome[] = [];
    const core = new RoutingCore(policy, (id) => instances.get(id), {
      released: (_attempt, outcome) => released.push(outcome),
    });
    const routed = core.begin(prompt);
    routed.decide(snapshotOf(instances));
    routed.firstToken();
    expect(instances.get('a')!.load).toMatchObject({ inFlight: 1, queuedPrefillTokens: 0, decodeSequences: 1 });
    // WHEN it is released, and then ended (as every exit path may)
    routed.release({ kind: 'completed', cachedTokens: 7 });
    routed.end({ kind: 'failed' });
    routed.end();
    // THEN one release, with the first outcome
    expect(policy.releases).toEqual([{ kind: 'completed', cachedTokens: 7 }]);
    expect(released).toEqual([{ kind: 'completed', cachedTokens: 7 }]);
    expect(instances.get('a')!.load).toMatchObject({ inFlight: 0, queuedPrefillTokens: 0, decodeSequences: 0 });
  });

  test('GIVEN a request that ends with its attempt still open THEN end releases it with the given outcome', () => {
    const instances = fleet(['a']);
    const policy = scriptedPolicy(() => 'a');
    const routed = new RoutingCore(policy, (id) => instances.get(id)).begin(prompt);
    routed.decide(snapshotOf(instances));
    routed.end({ kind: 'aborted' });
    expect(policy.releases).toEqual([{ kind: 'aborted' }]);
    expect(instances.get('a')!.load.inFlight).toBe(0);
  });

  test('GIVEN a retry THEN the first attempt is released before the second decides, and the excluded instance cannot be chosen', () => {
    const instances = fleet(['a', 'b']);
    let choice = 'a';
    const policy = scriptedPolicy(() => choice);
    const routed = new RoutingCore(policy, (id) => instances.get(id)).begin(prompt);
    routed.decide(snapshotOf(instances));
    // WHEN the second attempt decides before the first is released THEN it is refused
    expect(() => routed.decide(snapshotOf(instances, ['a']), 'a')).toThrow(/not released/);
    routed.release({ kind: 'failed' });
    // WHEN the policy chooses the instance that refused THEN the core refuses the decision
    expect(() => routed.decide(snapshotOf(instances, ['a']), 'a')).toThrow(/not a routable instance/);
    choice = 'b';
    expect(routed.decide(snapshotOf(instances, ['a']), 'a').target.id).toBe('b');
    routed.end({ kind: 'completed' });
    expect(policy.releases.map((o) => o.kind)).toEqual(['failed', 'completed']);
    expect([...instances.values()].map((i) => i.load.inFlight)).toEqual([0, 0]);
  });

  test('GIVEN a policy that chooses an unknown instance THEN nothing is committed', () => {
    const instances = fleet(['a']);
    const policy = scriptedPolicy(() => 'elsewhere');
    const routed = new RoutingCore(policy, (id) => instances.get(id)).begin(prompt);
    expect(() => routed.decide(snapshotOf(instances))).toThrow(/elsewhere, which is not a routable instance/);
    expect(policy.calls).toEqual(['decide']);
  });

  test('GIVEN no healthy instance THEN NoHealthyInstanceError reaches the caller and no ticket is taken', () => {
    const instances = fleet(['a']);
    const routed = new RoutingCore(
      scriptedPolicy(() => 'a'),
      (id) => instances.get(id),
    ).begin(prompt);
    expect(() => routed.decide(snapshotOf(instances, ['a']))).toThrow(NoHealthyInstanceError);
    expect(instances.get('a')!.load.inFlight).toBe(0);
  });

  test('GIVEN a policy whose release throws THEN the hook sees the error and the load is still released; without a hook it propagates', () => {
    const instances = fleet(['a']);
    const policy = {
      ...scriptedPolicy(() => 'a'),
      release: () => {
        throw new Error('boom');
      },
    };
    const failures: unknown[] = [];
    const routed = new RoutingCore(policy, (id) => instances.get(id), {
      policyReleaseFailed: (err) => failures.push(err),
    }).begin(prompt);
    routed.decide(snapshotOf(instances));
    routed.end({ kind: 'completed' });
    expect(failures).toHaveLength(1);
    expect(instances.get('a')!.load.inFlight).toBe(0);
    const bare = new RoutingCore(policy, (id) => instances.get(id)).begin(prompt);
    bare.decide(snapshotOf(instances));
    expect(() => bare.end({ kind: 'completed' })).toThrow('boom');
    expect(instances.get('a')!.load.inFlight).toBe(0);
  });
});

describe('when a request reaches a publishing instance', () => {
  test('GIVEN the live router (it publishes itself) THEN the request is admitted once, whatever the retries, and its blocks enter only once accepted', () => {
    const instances = fleet(['a', 'b']);
    let choice = 'a';
    const log = publishedStateLog(BLOCK, 1_000_000, TEST_KEY, 'e');
    const routed = new RoutingCore(
      scriptedPolicy(() => choice),
      (id) => instances.get(id),
    ).begin(prompt);
    routed.reach(log);
    routed.reach(log);
    expect(log.load.inFlight).toBe(1);
    routed.decide(snapshotOf(instances));
    routed.release({ kind: 'failed' });
    choice = 'b';
    routed.decide(snapshotOf(instances, ['a']), 'a');
    expect(log.load.inFlight).toBe(1);
    expect(log.indexedBlocks).toBe(0);
    routed.accepted();
    expect(log.indexedBlocks).toBe(8);
    routed.end({ kind: 'completed' });
    expect(log.load.inFlight).toBe(0);
  });

  test("GIVEN a simulated instance (a decision sends the request there) THEN it is admitted to that instance's log at the decision", () => {
    const logs = new Map(['a', 'b'].map((id) => [id, publishedStateLog(BLOCK, 1_000_000, TEST_KEY, id)]));
    const instances = new Map(
      ['a', 'b'].map((id) => [id, { id, load: new InstanceLoad(), publishedLog: logs.get(id)! }]),
    );
    const routed = new RoutingCore(
      scriptedPolicy(() => 'b'),
      (id) => instances.get(id),
    ).begin(prompt);
    routed.decide(snapshotOf(instances));
    expect([logs.get('a')!.load.inFlight, logs.get('b')!.load.inFlight]).toEqual([0, 1]);
    routed.accepted();
    routed.end({ kind: 'completed' });
    expect(logs.get('b')!.load.inFlight).toBe(0);
  });

  test('GIVEN an engine that kept less than the published index predicted THEN a completed release corrects it; a failed one does not', () => {
    const instances = fleet(['a']);
    const run = (outcome: ReleaseOutcome): number => {
      const log = publishedStateLog(BLOCK, 1_000_000, TEST_KEY, 'e');
      const core = new RoutingCore(
        scriptedPolicy(() => 'a'),
        (id) => instances.get(id),
      );
      // GIVEN the prompt published once already
      const first = core.begin(prompt);
      first.reach(log);
      first.decide(snapshotOf(instances));
      first.accepted();
      first.end({ kind: 'completed' });
      const seqBefore = log.updateSince(undefined, undefined).seq;
      // WHEN it comes again and the engine reports nothing cached
      const again = core.begin(prompt);
      again.reach(log);
      again.decide(snapshotOf(instances));
      again.accepted();
      again.end(outcome);
      return log.updateSince(undefined, undefined).seq - seqBefore;
    };
    // THEN: the record, plus an eviction and a re-record when the engine's report came with a completed request
    expect(run({ kind: 'completed', cachedTokens: 0 })).toBe(3);
    expect(run({ kind: 'failed', cachedTokens: 0 })).toBe(1);
    expect(run({ kind: 'completed' })).toBe(1);
  });

  test('GIVEN publishing without blocks (load only) THEN nothing enters the published index', () => {
    const instances = fleet(['a']);
    const log = publishedStateLog(BLOCK, 1_000_000, TEST_KEY, 'e');
    const routed = new RoutingCore(
      scriptedPolicy(() => 'a'),
      (id) => instances.get(id),
      {},
      { publishBlocks: false },
    ).begin(prompt);
    routed.reach(log);
    routed.decide(snapshotOf(instances));
    routed.accepted();
    expect(log.indexedBlocks).toBe(0);
    expect(log.load.inFlight).toBe(1);
    routed.end({ kind: 'completed' });
  });
});

describe('when published blocks are hashed', () => {
  const cacheAware = createPolicy(
    { name: 'cache-aware', blockChars: BLOCK },
    { rng: new SeededRng(1), stateHashKey: TEST_KEY },
  );
  const roundRobin = createPolicy({ name: 'round-robin' }, { rng: new SeededRng(1) });

  test('GIVEN a policy hashing blocks of the same size THEN its own (memoized) hashes are reused', () => {
    const own = cacheAware.routingBlocks!.hashesOf(prompt);
    expect(publishedBlocksOf(cacheAware, prompt, BLOCK, TEST_KEY)).toBe(own);
  });

  test("GIVEN another block size, or a policy without the capability THEN the blocks are hashed at the log's size", () => {
    expect([...publishedBlocksOf(cacheAware, prompt, BLOCK * 2, TEST_KEY)]).toEqual([
      ...routingBlockHashes(prompt, BLOCK * 2, TEST_KEY),
    ]);
    expect([...publishedBlocksOf(roundRobin, prompt, BLOCK, TEST_KEY)]).toEqual([
      ...routingBlockHashes(prompt, BLOCK, TEST_KEY),
    ]);
  });

  test("GIVEN the block size a log publishes at THEN a stated size wins, then the observers' policy's, then the fallback", () => {
    expect(publishedBlockChars(cacheAware, 512, 256)).toBe(512);
    expect(publishedBlockChars(cacheAware, undefined, 256)).toBe(BLOCK);
    expect(publishedBlockChars(roundRobin, undefined, 256)).toBe(256);
  });

  test('GIVEN an instance with 1,000 KV tokens THEN its published log holds what they hold, never less than one block', () => {
    expect(publishedStateLog(BLOCK, 1_000, TEST_KEY, 'e').capacityBlocks).toBe(Math.floor((1_000 * 4) / BLOCK));
    expect(publishedStateLog(BLOCK, 1, TEST_KEY, 'e').capacityBlocks).toBe(1);
  });
});
