import { EngineModel } from '../../../router/src/emulator/engine-model';
import { builtinProfile, prefillTokensPerSecond } from '../../../router/src/emulator/engine-profile';
import { textOf } from './engine-text';

const p5 = builtinProfile('p5-llama-3.1-70b');

describe('when the engine model reports the prefill work ahead of a new request (what oracle reads)', () => {
  test('GIVEN an idle engine THEN nothing is ahead', () => {
    expect(new EngineModel(p5).prefillTokensAhead(0)).toBe(0);
  });

  test('GIVEN two waiting requests, the second sharing a prefix the cache holds THEN each counts its prompt less what is cached now', () => {
    // GIVEN 4,000 tokens of a shared prefix cached by an earlier request
    const engine = new EngineModel(p5);
    const shared = textOf('shared', 4000);
    engine.submit({ id: 'warm', promptText: shared + textOf('w', 100), maxTokens: 1 }, 0);
    engine.drain();
    const cached = engine.cachedTokensFor({ promptText: shared + textOf('b', 2000) });
    expect(cached).toBeGreaterThanOrEqual(3984);
    // WHEN a cold request and one sharing the prefix wait (submitted, no step run yet)
    engine.submit({ id: 'a', promptText: textOf('a', 3000), maxTokens: 1 }, 10_000);
    engine.submit({ id: 'b', promptText: shared + textOf('b', 2000), maxTokens: 1 }, 10_000);
    // THEN the cold one counts whole, the other only its uncached part
    expect(engine.prefillTokensAhead(10_000)).toBe(3000 + 6000 - cached);
  });

  test('GIVEN a request part way through its prefill THEN only what it has left counts, and nothing once it decodes', () => {
    const engine = new EngineModel(p5);
    engine.submit({ id: 'long', promptText: textOf('long', 20_000), maxTokens: 50 }, 0);
    const firstStepEnd = engine.nextStepTimeMs()! + 1e-6;
    engine.runUntil(firstStepEnd); // one step: at most maxNumBatchedTokens of it computed
    const ahead = engine.prefillTokensAhead(firstStepEnd);
    expect(ahead).toBe(20_000 - p5.maxNumBatchedTokens);
    engine.runUntil(5_000); // past its first token, decoding
    expect(engine.prefillTokensAhead(5_000)).toBe(0);
  });

  test('GIVEN a step in progress THEN queueAhead counts its time left in full-step prefill tokens, the prefilling and decoding requests, and the step budget', () => {
    // GIVEN a 20,000-token prompt whose first step (maxNumBatchedTokens of it) started and has not ended
    const engine = new EngineModel(p5);
    engine.submit({ id: 'long', promptText: textOf('long', 20_000), maxTokens: 2000 }, 0);
    const start = engine.nextStepTimeMs()!;
    engine.runUntil(start + 1e-6);
    const end = engine.clockMs;
    expect(end).toBeGreaterThan(start);
    // WHEN the queue is read half way through that step
    const half = engine.queueAhead((start + end) / 2, { promptText: textOf('other', 1000) });
    // THEN half the step's time is ahead, in tokens at the profile's full-step speed
    expect(half.stepInProgressTokens).toBeCloseTo((((end - start) / 2) * prefillTokensPerSecond(p5)) / 1000, 6);
    expect(half).toMatchObject({
      prefillTokensAhead: 20_000 - p5.maxNumBatchedTokens,
      pendingPromptTokens: 0,
      prefillingSequences: 1,
      decodeSequences: 0,
      stepTokens: p5.maxNumBatchedTokens,
    });
    // AND once it decodes (2,000 tokens: still at 5 s), at the end of its last step: nothing in progress, one decoding, none prefilling
    engine.runUntil(5_000);
    const decoding = engine.queueAhead(engine.clockMs, { promptText: textOf('other', 1000) });
    expect(decoding).toMatchObject({
      stepInProgressTokens: 0,
      prefillTokensAhead: 0,
      prefillingSequences: 0,
      decodeSequences: 1,
    });
  });

  test("GIVEN a waiting request sharing a prefix the cache does not hold yet THEN pendingTokensFor counts its full blocks, never the prompt's last token", () => {
    // GIVEN a request with a 4,000-token prefix waiting (submitted, no step run yet): nothing of it is cached now
    const engine = new EngineModel(p5);
    const shared = textOf('shared', 4000);
    engine.submit({ id: 'first', promptText: shared + textOf('a', 500), maxTokens: 1 }, 0);
    const next = { promptText: shared + textOf('b', 500) };
    expect(engine.cachedTokensFor(next)).toBe(0);
    // THEN the prefix it will have computed counts (full 16-token blocks of the shared 4,000)
    const pending = engine.pendingTokensFor(next);
    expect(pending).toBeGreaterThanOrEqual(3984);
    expect(pending).toBeLessThanOrEqual(4000);
    expect(engine.queueAhead(0, next).pendingPromptTokens).toBe(pending);
    // AND a prompt sharing nothing has none pending; once the first request is done, nothing is pending
    expect(engine.pendingTokensFor({ promptText: textOf('c', 4500) })).toBe(0);
    engine.drain();
    expect(engine.pendingTokensFor(next)).toBe(0);
    expect(engine.cachedTokensFor(next)).toBe(pending);
  });

  test('GIVEN running requests hold most of the KV cache THEN queueAhead counts the steps until one ends and frees room for the prompt, and nothing when it fits', () => {
    // GIVEN 600 KV blocks (9,600 tokens), 500 of them held by one 8,000-token request decoding 200 tokens
    const small = { ...p5, kvCapacityBlocks: 600 };
    const engine = new EngineModel(small);
    engine.submit({ id: 'big', promptText: textOf('big', 8000), maxTokens: 200 }, 0);
    engine.runUntil(1_000); // prefilled, decoding
    const now = engine.clockMs;
    const fits = engine.queueAhead(now, { promptText: textOf('small', 1000) });
    expect(fits.kvWaitTokens).toBe(0);
    // WHEN a 4,000-token prompt (250 blocks) is read against the ~100 blocks left
    const wait = engine.queueAhead(now, { promptText: textOf('large', 4000) });
    // THEN it waits for the running request's remaining steps: more than one step, at most its 200 decodes
    const stepTokens = (stepMs: number) => (stepMs * prefillTokensPerSecond(small)) / 1000;
    expect(wait.kvWaitTokens).toBeGreaterThan(stepTokens(6.6));
    expect(wait.kvWaitTokens).toBeLessThan(200 * stepTokens(20));
  });
});
