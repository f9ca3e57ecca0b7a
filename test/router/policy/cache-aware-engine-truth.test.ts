import { SeededRng } from '../../../router/src/common/seeded-rng';
import { createPolicy, type EngineCacheView, type InstanceView, type RoutingPolicy } from '../../../router/src/policy';
import { parseChatRequest } from '../../../router/src/protocol/parse-request';
import type { RoutingRequest } from '../../../router/src/protocol/routing-request';
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
