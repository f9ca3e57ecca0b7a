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

/** What one engine reports (InstanceView.engine): cached tokens of the prompt, its queue and batch, a speed. */
interface EngineSpec {
  readonly cached: number;
  readonly ahead: number;
  readonly inProgress?: number;
  readonly pending?: number;
  readonly kvWait?: number;
  readonly decoding?: number;
  readonly prefilling?: number;
  readonly speed?: number;
}

/** The p5 profile's step budget (max_num_batched_tokens). */
const STEP_TOKENS = 8192;
/** oracle's default balanceSlackTokens: recomputing up to this many tokens costs the fleet nothing extra. */
const SLACK = 512;

/** Instances with what each engine reports. */
function engines(specs: readonly EngineSpec[]): InstanceView[] {
  return specs.map((s, i) => ({
    id: id(i),
    healthy: true,
    inFlight: 0,
    ...(s.speed === undefined ? {} : { prefillTokensPerSecond: s.speed }),
    engine: {
      cachedPromptTokens: s.cached,
      queue: {
        prefillTokensAhead: s.ahead,
        pendingPromptTokens: s.pending ?? 0,
        stepInProgressTokens: s.inProgress ?? 0,
        kvWaitTokens: s.kvWait ?? 0,
        decodeSequences: s.decoding ?? 0,
        prefillingSequences: s.prefilling ?? 0,
        stepTokens: STEP_TOKENS,
      },
    },
  }));
}

const decide = (p: RoutingPolicy, instances: readonly InstanceView[]) =>
  p.decide(chatRequest(PROMPT), { instances, nowMs: 0 }).instance;

describe("when oracle places a request by the fleet cost of each engine's exact state", () => {
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

  it('GIVEN a holder whose queue is longer than the recompute THEN it is kept while the recompute costs the fleet more (120 uncached + 9,000 ahead < 7,800 cold + 7,168 recomputed beyond the slack)', () => {
    // Greedy by its own TTFT (120 + 9,000 > 7,800) the request would leave the holder and the fleet would prefill
    // the 7,680-token prefix again: the cost counts that recompute.
    const views = engines([
      { cached: 7680, ahead: 9000 },
      { cached: 0, ahead: 0 },
    ]);
    expect(decide(oracle(), views)).toBe(id(0));
    // AND with a queue longer than the cold prompt and the recompute together, an idle engine wins
    const swamped = engines([
      { cached: 7680, ahead: 15_000 },
      { cached: 0, ahead: 0 },
    ]);
    expect(decide(oracle(), swamped)).toBe(id(1));
    // AND the slack is an option: with it at the whole prefix, the recompute is free and the idle engine wins
    expect(decide(createPolicy({ name: 'oracle', balanceSlackTokens: 7680 }, { rng: new SeededRng(1) }), views)).toBe(
      id(1),
    );
  });

  it("GIVEN a request queued on an engine will compute the prompt's prefix THEN that engine counts as holding it (a burst of one cold prefix stays together)", () => {
    // Nothing is cached anywhere now; engine 0 has a request ahead that will compute 7,680 tokens of this prompt.
    const views = engines([
      { cached: 0, ahead: 8000, pending: 7680 },
      { cached: 0, ahead: 0 },
    ]);
    // 8,000 + 120 < 7,800 + 7,168 recomputed beyond the slack
    expect(decide(oracle(), views)).toBe(id(0));
  });

  it('GIVEN the holder cannot admit the request until its running requests free KV blocks THEN that wait counts (an idle engine wins)', () => {
    // 20,000 tokens of waiting for KV room + 120 uncached > 7,800 cold + 7,168 recomputed beyond the slack
    const views = engines([
      { cached: 7680, ahead: 0, kvWait: 20_000 },
      { cached: 0, ahead: 0 },
    ]);
    expect(decide(oracle(), views)).toBe(id(1));
  });

  it('GIVEN an engine with nothing queued but a step in progress THEN the time that step has left counts (an engine with a shorter queue wins)', () => {
    // An engine computes a step's tokens when it starts it: a prefill in progress is in no queue, only its time is.
    const views = engines([
      { cached: 0, ahead: 0, inProgress: 6000 },
      { cached: 0, ahead: 1000 },
    ]);
    expect(decide(oracle(), views)).toBe(id(1));
  });

  it('GIVEN equal queues THEN the engine whose decode batch and waiting prefills the prompt delays less wins', () => {
    // 40 decodes × 2 steps (1,000 + 7,800 tokens over 8,192 a step) = 80 tokens, against 0
    const decodes = engines([
      { cached: 0, ahead: 1000, decoding: 40 },
      { cached: 0, ahead: 1000 },
    ]);
    expect(decide(oracle(), decodes)).toBe(id(1));
    // 3 requests still prefilling, whose step the prompt's first chunk joins: 3 × min(7,800, 8,192 − 1,000) tokens
    const waiting = engines([
      { cached: 0, ahead: 1000, prefilling: 3 },
      { cached: 0, ahead: 1000, decoding: 40 },
    ]);
    expect(decide(oracle(), waiting)).toBe(id(1));
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

  it('GIVEN any engine states THEN the chosen engine has the least fleet cost (step in progress, queue, uncached part, recompute beyond the slack), ties at random', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            cached: fc.integer({ min: 0, max: 9000 }),
            ahead: fc.integer({ min: 0, max: 50_000 }),
            inProgress: fc.integer({ min: 0, max: 8000 }),
          }),
          { minLength: 1, maxLength: 8 },
        ),
        fc.nat(),
        (specs, seed) => {
          const uncached = specs.map((s) => Math.max(1, PROMPT_TOKENS - s.cached));
          const least = Math.min(...uncached);
          const cost = specs.map(
            (s, i) => s.inProgress + s.ahead + uncached[i] + Math.max(0, uncached[i] - least - SLACK),
          );
          const chosen = decide(oracle(seed), engines(specs));
          expect(cost[Number(/10\.0\.0\.(\d+)/.exec(chosen)![1]) - 1]).toBe(Math.min(...cost));
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
