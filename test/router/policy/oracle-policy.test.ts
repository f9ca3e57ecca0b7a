import fc from 'fast-check';
import { SeededRng } from '../../../router/src/common/seeded-rng';
import { loadRouterConfig } from '../../../router/src/config';
import {
  createPolicy,
  EngineStateMissingError,
  type InstanceView,
  type RoutingPolicy,
} from '../../../router/src/policy';
import { estimatedPromptTokens } from '../../../router/src/policy/prompt-tokens';
import { startRouter } from '../../../router/src/server';
import { chatRequest } from './policy-test-helpers';

const id = (i: number) => `http://10.0.0.${i + 1}:8000`;
const PROMPT = 'You are the support assistant of ACME. '.repeat(800); // 32,000 characters
/** What the router estimates the prompt costs (7,800 tokens today); the property below reads it, never a copy. */
const PROMPT_TOKENS = estimatedPromptTokens(chatRequest(PROMPT));

const oracle = (seed = 1): RoutingPolicy => createPolicy({ name: 'oracle' }, { rng: new SeededRng(seed) });

/** Instances with what each engine reports: cached tokens of the prompt, prefill ahead, and optionally a speed. */
function engines(
  specs: ReadonlyArray<{ cached: number; ahead: number; speed?: number; inFlight?: number }>,
): InstanceView[] {
  return specs.map((s, i) => ({
    id: id(i),
    healthy: true,
    inFlight: s.inFlight ?? 0,
    ...(s.speed === undefined ? {} : { prefillTokensPerSecond: s.speed }),
    engine: { cachedPromptTokens: s.cached, prefillTokensAhead: s.ahead },
  }));
}

const decide = (p: RoutingPolicy, instances: readonly InstanceView[]) =>
  p.decide(chatRequest(PROMPT), { instances, nowMs: 0 }).instance;

describe('when oracle places a request by the TTFT each engine predicts', () => {
  it('GIVEN the router sent the prefix to one engine but that engine evicted it, and another holds it THEN oracle goes to the holder while cache-aware follows its stale index', () => {
    // GIVEN cache-aware's index says instance 0 holds the prompt (it was sent there)
    const cacheAware = createPolicy({ name: 'cache-aware' }, { rng: new SeededRng(1) });
    const request = chatRequest(PROMPT);
    const sent = { instance: id(0), reason: 'cache-aware-hit' };
    cacheAware.commit(request, sent);
    cacheAware.release(request, sent, { kind: 'completed' });
    // AND the engines say: 0 evicted it, 1 holds 7,680 tokens of it (e.g. a replica's request put it there)
    const views = engines([
      { cached: 0, ahead: 0 },
      { cached: 7680, ahead: 0 },
      { cached: 0, ahead: 0 },
    ]);
    // WHEN both decide THEN oracle chooses the holder, cache-aware the instance its estimate names
    expect(decide(oracle(), views)).toBe(id(1));
    expect(decide(cacheAware, views)).toBe(id(0));
  });

  it('GIVEN the holder has more prefill ahead than the prompt costs cold THEN an idle engine wins (120 uncached + 9,000 ahead > 7,800 cold)', () => {
    const views = engines([
      { cached: 7680, ahead: 9000 },
      { cached: 0, ahead: 0 },
    ]);
    expect(decide(oracle(), views)).toBe(id(1));
    // AND with less ahead than the cached part saves, the holder wins
    const lighter = engines([
      { cached: 7680, ahead: 7000 },
      { cached: 0, ahead: 0 },
    ]);
    expect(decide(oracle(), lighter)).toBe(id(0));
  });

  it('GIVEN a slower engine THEN its work counts in fastest-engine time (the same work: the fast one wins; the slow one idle against 10,000 ahead on the fast one: the slow one)', () => {
    expect(
      decide(
        oracle(),
        engines([
          { cached: 0, ahead: 3000, speed: 10_000 },
          { cached: 0, ahead: 3000, speed: 20_000 },
        ]),
      ),
    ).toBe(id(1));
    expect(
      decide(
        oracle(),
        engines([
          { cached: 0, ahead: 0, speed: 10_000 },
          { cached: 0, ahead: 10_000, speed: 20_000 },
        ]),
      ),
    ).toBe(id(0)); // 7,800 × 2 = 15,600 against 17,800
  });

  it('GIVEN any engine states THEN the chosen engine has the least predicted work (cached part, queue ahead), ties at random', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ cached: fc.integer({ min: 0, max: 9000 }), ahead: fc.integer({ min: 0, max: 50_000 }) }), {
          minLength: 1,
          maxLength: 8,
        }),
        fc.nat(),
        (specs, seed) => {
          const work = specs.map((s) => s.ahead + Math.max(0, PROMPT_TOKENS - s.cached));
          const chosen = decide(oracle(seed), engines(specs));
          expect(work[Number(/10\.0\.0\.(\d+)/.exec(chosen)![1]) - 1]).toBe(Math.min(...work));
        },
      ),
    );
  });

  it('GIVEN an instance without engine state (a caller that is not the simulator) THEN it throws, naming the policy and the instance', () => {
    const views: InstanceView[] = [{ id: id(0), healthy: true, inFlight: 0 }];
    expect(() => decide(oracle(), views)).toThrow(EngineStateMissingError);
    expect(() => decide(oracle(), views)).toThrow(`policy oracle reads each engine's own state`);
  });
});

describe('when serve is configured with oracle', () => {
  it('GIVEN --policy oracle THEN the configuration is refused, naming the flag and why', () => {
    expect(() => loadRouterConfig({ flags: { policy: 'oracle', backends: 'http://127.0.0.1:1' }, env: {} })).toThrow(
      /--policy is refused: oracle reads every engine's exact prefix cache and prefill queue, which only the simulator's engine models have/,
    );
  });

  it('GIVEN a ready oracle policy object THEN startRouter refuses it too', async () => {
    await expect(
      startRouter({ backends: ['http://127.0.0.1:1'], policy: oracle(), port: 0, logLevel: 'silent' }),
    ).rejects.toThrow(/policy is refused: oracle reads/);
  });
});
