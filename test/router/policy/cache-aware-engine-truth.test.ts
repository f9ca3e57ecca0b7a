import fc from 'fast-check';
import { SeededRng } from '../../../router/src/common/seeded-rng';
import { createPolicy, type EngineCacheView, type InstanceView, type RoutingPolicy } from '../../../router/src/policy';
import { parseChatRequest } from '../../../router/src/protocol/parse-request';
import type { RoutingRequest } from '../../../router/src/protocol/routing-request';
import { CHARS_PER_TOKEN } from '../../../router/src/state/block-hash';
import { StateHashKey } from '../../../router/src/state/state-hash-key';

/** An engine whose account never shows this router's prompts (they wait in its queue), and changes on demand. */
class QueuedEngine implements EngineCacheView {
  version = 0;
  cachedTokensOf(): number {
    return 0;
  }
}

const chat = (text: string): RoutingRequest =>
  parseChatRequest(Buffer.from(JSON.stringify({ messages: [{ role: 'user', content: text }] })), {}).routing;
const DOCUMENT = 'a shared document the engine has not stored yet '.repeat(40);

function setup(): { policy: RoutingPolicy; engine: QueuedEngine; view: InstanceView } {
  const policy = createPolicy(
    { name: 'cache-aware' },
    { rng: new SeededRng(1), stateHashKey: StateHashKey.fromSecret('engine truth test: a fixed key') },
  );
  const engine = new QueuedEngine();
  return { policy, engine, view: { id: 'e0', healthy: true, inFlight: 0, engineCache: engine } };
}

describe("when cache-aware follows an engine's account and requests queue there", () => {
  it('GIVEN a request with the same prefix still queued there THEN a later one is predicted its blocks, even after the account changed', () => {
    const { policy, engine, view } = setup();
    const first = chat(`${DOCUMENT} first question`);
    const firstDecision = policy.decide(first, { instances: [view], nowMs: 0 });
    policy.commit(first, firstDecision);
    engine.version++; // the engine published a batch (other requests' blocks): this one is not in it yet
    const second = chat(`${DOCUMENT} second question`);
    const decision = policy.decide(second, { instances: [view], nowMs: 1 });
    expect(decision.predictedCachedTokens).toBeGreaterThan(400);
    policy.commit(second, decision);
    policy.release(second, decision, { kind: 'completed' });
  });

  it('GIVEN the queued request ended and the account changed since THEN the account alone is believed', () => {
    const { policy, engine, view } = setup();
    const first = chat(`${DOCUMENT} first question`);
    const firstDecision = policy.decide(first, { instances: [view], nowMs: 0 });
    policy.commit(first, firstDecision);
    policy.release(first, firstDecision, { kind: 'completed' });
    engine.version++; // its blocks were evicted: the account, changed after it ended, does not hold them
    const second = chat(`${DOCUMENT} second question`);
    expect(policy.decide(second, { instances: [view], nowMs: 1 }).predictedCachedTokens ?? 0).toBe(0);
  });
});

/** An engine whose account holds the first `heldTokens` tokens of every prompt. */
class HoldingEngine implements EngineCacheView {
  version = 0;
  constructor(private readonly heldTokens: number) {}
  cachedTokensOf(): number {
    return this.heldTokens;
  }
}

const STEP_TOKENS = 1000;
const HELD_TOKENS = 400;

function holdingSetup(queuedPrefillTokens: number): {
  policy: RoutingPolicy;
  engine: HoldingEngine;
  view: InstanceView;
} {
  const policy = createPolicy(
    { name: 'cache-aware', stepTokens: STEP_TOKENS },
    { rng: new SeededRng(1), stateHashKey: StateHashKey.fromSecret('engine truth test: a fixed key') },
  );
  const engine = new HoldingEngine(HELD_TOKENS);
  return { policy, engine, view: { id: 'e0', healthy: true, inFlight: 1, queuedPrefillTokens, engineCache: engine } };
}

describe("when cache-aware follows an engine's account and the request would wait behind queued prefill", () => {
  it.each([
    [0, HELD_TOKENS],
    [STEP_TOKENS, HELD_TOKENS],
    [STEP_TOKENS + 1, 0],
  ])(
    'GIVEN %i tokens queued and a prefix the engine holds that this router never sent there THEN it predicts %i cached',
    (queued, predicted) => {
      const { policy, view } = holdingSetup(queued);
      const decision = policy.decide(chat(`${DOCUMENT} a question`), { instances: [view], nowMs: 0 });
      expect(decision.predictedCachedTokens ?? 0).toBe(predicted);
    },
  );

  it('GIVEN the prefix was sent there before (its request ended) THEN the account still counts behind the queue', () => {
    const { policy, engine, view } = holdingSetup(STEP_TOKENS + 1);
    const first = chat(`${DOCUMENT} first question`);
    const firstDecision = policy.decide(first, { instances: [view], nowMs: 0 });
    policy.commit(first, firstDecision);
    policy.release(first, firstDecision, { kind: 'completed', cachedTokens: 0 });
    engine.version++; // the account changed after it ended: what it holds is all the engine holds
    const second = chat(`${DOCUMENT} second question`);
    expect(policy.decide(second, { instances: [view], nowMs: 1 }).predictedCachedTokens).toBe(HELD_TOKENS);
  });
});

describe('when cache-aware reads an engine account of any size, with or without a queue (property)', () => {
  it('THEN without a queue it predicts what the engine holds, and behind one never a block more than its own index', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2000 }),
        fc.integer({ min: 0, max: 3 * STEP_TOKENS }),
        fc.boolean(),
        (held, queued, sentBefore) => {
          const { policy, engine, view } = holdingSetup(queued);
          const engineView = { ...view, engineCache: new HoldingEngine(held) };
          if (sentBefore) {
            const first = chat(`${DOCUMENT} first question`);
            const firstDecision = policy.decide(first, { instances: [engineView], nowMs: 0 });
            policy.commit(first, firstDecision);
            policy.release(first, firstDecision, { kind: 'completed' });
          }
          engine.version++;
          engineView.engineCache.version++; // the account changed after anything sent ended
          const second = chat(`${DOCUMENT} second question`);
          const withEvents = policy.decide(second, { instances: [engineView], nowMs: 1 }).predictedCachedTokens ?? 0;
          // The router's own index alone: the same instance with no engine account.
          const indexOnly = { ...view, engineCache: undefined };
          const estimate = policy.decide(second, { instances: [indexOnly], nowMs: 1 }).predictedCachedTokens ?? 0;
          if (queued <= STEP_TOKENS) expect(withEvents).toBe(held);
          // A part-block the engine holds is never rounded into a routing block: less than one block more.
          else expect(withEvents).toBeLessThan(estimate + policy.routingBlocks!.blockChars / CHARS_PER_TOKEN);
        },
      ),
      { numRuns: 60 },
    );
  });
});
