import { EngineModel, EngineRequestError, type StepRecord } from '../../../router/src/emulator/engine-model';
import { builtinProfile } from '../../../router/src/emulator/engine-profile';
import { outputText } from '../../../router/src/emulator/output-text';
import { finished, ofType, textOf } from './engine-text';

const p5 = builtinProfile('p5-llama-3.1-70b');
const tiny = builtinProfile('tiny');

/** Mean duration of decode-only steps once `batch` sequences of ~`context` tokens decode together. */
function decodeStepMs(batch: number, context: number): number {
  const decodeSteps: StepRecord[] = [];
  const engine = new EngineModel(p5, {
    onStep: (s) => {
      if (s.decodeSequences === batch && s.scheduledSequences === batch) decodeSteps.push(s);
    },
  });
  // Hash-free prompts: this measures time, not caching.
  for (let i = 0; i < batch; i++)
    engine.submit({ id: `r${i}`, promptTokens: context, blockHashes: [], maxTokens: 200 }, 0);
  engine.drain();
  expect(decodeSteps.length).toBeGreaterThan(5);
  return decodeSteps.reduce((sum, s) => sum + s.durationMs, 0) / decodeSteps.length;
}

describe('engine model', () => {
  describe('when calibrated as p5-llama-3.1-70b (DESIGN.md §5, within ±15 %)', () => {
    test('GIVEN an idle engine WHEN an uncached 8,000-token prompt arrives THEN the first token comes after ≈0.42 s', () => {
      const engine = new EngineModel(p5);
      engine.submit({ id: 'a', promptText: textOf('a', 8000), maxTokens: 1 }, 0);
      const ttft = finished(engine.drain(), 'a').ttftMs;
      expect(ttft).toBeGreaterThan(420 * 0.85);
      expect(ttft).toBeLessThan(420 * 1.15);
    });

    test('GIVEN 7,000 tokens of an 8,000-token prompt cached THEN the first token comes after ≈0.075 s', () => {
      const engine = new EngineModel(p5);
      const shared = textOf('shared', 7000);
      engine.submit({ id: 'warm', promptText: shared + textOf('x', 1000), maxTokens: 1 }, 0);
      engine.drain();
      engine.submit({ id: 'b', promptText: shared + textOf('y', 1000), maxTokens: 1 }, 10_000);
      const done = finished(engine.drain(), 'b');
      expect(done.cachedTokens).toBe(6992); // 437 whole blocks of 16
      expect(done.ttftMs).toBeGreaterThan(75 * 0.85);
      expect(done.ttftMs).toBeLessThan(75 * 1.15);
    });

    test.each([
      [1, 12],
      [64, 22],
      [128, 33],
    ])('GIVEN %i sequences decoding at 8.5k context THEN a step takes ≈%i ms', (batch, expectedMs) => {
      const ms = decodeStepMs(batch, 8500);
      expect(ms).toBeGreaterThan(expectedMs * 0.85);
      expect(ms).toBeLessThan(expectedMs * 1.15);
    });
  });

  describe('when prompts share a prefix', () => {
    test('GIVEN a cached 100-token prompt WHEN a prompt shares its first 70 tokens THEN only the 4 full leading blocks (64 tokens) hit', () => {
      const engine = new EngineModel(tiny);
      const first = textOf('p', 100);
      engine.submit({ id: 'a', promptText: first, maxTokens: 1 }, 0);
      engine.drain();
      engine.submit({ id: 'b', promptText: first.slice(0, 70 * 4) + textOf('q', 30), maxTokens: 1 }, 100);
      expect(finished(engine.drain(), 'b').cachedTokens).toBe(64);
    });

    test('GIVEN prompts that differ only inside block 1 THEN block 0 hits and no later block does (chained hashes)', () => {
      const engine = new EngineModel(tiny);
      const base = textOf('base', 96);
      const changed = base.slice(0, 20 * 4) + 'XXXX' + base.slice(21 * 4);
      engine.submit({ id: 'a', promptText: base, maxTokens: 1 }, 0);
      engine.drain();
      engine.submit({ id: 'b', promptText: changed, maxTokens: 1 }, 100);
      expect(finished(engine.drain(), 'b').cachedTokens).toBe(16);
    });

    test.each([
      [160, 144], // 10 full blocks, but the last token is recomputed, so block 9 is computed again
      [161, 160], // the last token is in an 11th, partial block: all 10 full blocks hit
      [16, 0], //    one block: its last token must be computed, nothing hits
      [17, 16],
    ])(
      'GIVEN an identical %i-token prompt repeated THEN %i tokens hit (last token always recomputed)',
      (tokens, expected) => {
        const engine = new EngineModel(tiny);
        const text = textOf('same', tokens);
        engine.submit({ id: 'a', promptText: text, maxTokens: 1 }, 0);
        engine.drain();
        expect(engine.cachedTokensFor({ promptText: text })).toBe(expected);
        engine.submit({ id: 'b', promptText: text, maxTokens: 1 }, 100);
        expect(finished(engine.drain(), 'b').cachedTokens).toBe(expected);
      },
    );

    test('GIVEN a repeated prompt THEN prefix-cache counters count queried and hit tokens', () => {
      const engine = new EngineModel(tiny);
      const text = textOf('c', 200);
      engine.submit({ id: 'a', promptText: text, maxTokens: 2 }, 0);
      engine.drain();
      engine.submit({ id: 'b', promptText: text, maxTokens: 2 }, 100);
      engine.drain();
      const stats = engine.stats();
      expect(stats.prefixCacheQueryTokens).toBe(400);
      expect(stats.prefixCacheHitTokens).toBe(192);
      expect(stats.promptTokens).toBe(400);
      expect(stats.generationTokens).toBe(4);
    });

    test('GIVEN a finished turn WHEN the next turn sends the answer back THEN blocks of the generated answer hit too', () => {
      const engine = new EngineModel(tiny);
      const turn1 = textOf('turn1', 100);
      engine.submit({ id: 'a', promptText: turn1, maxTokens: 60 }, 0);
      engine.drain();
      const turn2 = turn1 + outputText(60) + textOf('turn2', 40);
      engine.submit({ id: 'b', promptText: turn2, maxTokens: 1 }, 1000);
      // prompt 100 + 59 computed output tokens = 159 tokens of KV -> 9 full blocks = 144 tokens reusable.
      expect(finished(engine.drain(), 'b').cachedTokens).toBe(144);
    });

    test('GIVEN precomputed block hashes and no text THEN the prompt caches the same way', () => {
      const engine = new EngineModel(tiny);
      const hashes = [1, 2, 3, 4, 5];
      engine.submit({ id: 'a', promptTokens: 90, blockHashes: hashes, maxTokens: 3 }, 0);
      engine.drain();
      engine.submit({ id: 'b', promptTokens: 90, blockHashes: hashes, maxTokens: 3 }, 100);
      expect(finished(engine.drain(), 'b').cachedTokens).toBe(80);
    });
  });

  describe('when the KV cache is full', () => {
    test('GIVEN A, B, C cached in that order WHEN D needs 40 blocks THEN A loses its tail blocks first and B, C keep everything', () => {
      const engine = new EngineModel(tiny); // 128 blocks
      const prompts = ['A', 'B', 'C', 'D'].map((l) => textOf(l, 640)); // 40 blocks each
      prompts.slice(0, 3).forEach((text, i) => {
        engine.submit({ id: `r${i}`, promptText: text, maxTokens: 1 }, i * 100);
        engine.drain();
      });
      expect(engine.stats().cachedBlocks).toBe(120);
      engine.submit({ id: 'd', promptText: prompts[3], maxTokens: 1 }, 1000);
      engine.drain();
      // D took the 8 never-used blocks, then evicted 32 of A's, last block first: A keeps blocks 0..7.
      expect(engine.cachedTokensFor({ promptText: prompts[0] })).toBe(8 * 16);
      expect(engine.cachedTokensFor({ promptText: prompts[1] })).toBe(624);
      expect(engine.cachedTokensFor({ promptText: prompts[2] })).toBe(624);
      expect(engine.stats().evictedBlocks).toBe(32);
      engine.checkInvariants();
    });

    test('GIVEN a long-running request WHEN other prompts churn through the cache THEN its pinned blocks are never evicted', () => {
      const engine = new EngineModel(tiny);
      const pinned = textOf('pinned', 320); // 20 blocks, held while it decodes 300 tokens
      engine.submit({ id: 'pinned', promptText: pinned, maxTokens: 300 }, 0);
      engine.runUntil(50);
      for (let i = 0; i < 12; i++) {
        engine.submit({ id: `churn${i}`, promptText: textOf(`churn${i}`, 400), maxTokens: 2 }, 50 + i * 30);
        engine.runUntil(80 + i * 30);
        expect(engine.cachedTokensFor({ promptText: pinned })).toBe(304);
        engine.checkInvariants();
      }
      expect(engine.stats().evictedBlocks).toBeGreaterThan(0);
      expect(finished(engine.drain(), 'pinned').outputTokens).toBe(300);
    });

    test('GIVEN requests that together outgrow KV WHEN they decode THEN the newest is preempted, requeued first, and every request still completes', () => {
      const engine = new EngineModel(tiny);
      const admittedOrder: string[] = [];
      const events = [];
      for (let i = 0; i < 4; i++) engine.submit({ id: `r${i}`, promptText: textOf(`r${i}`, 480), maxTokens: 544 }, 0);
      for (let t = 10; !engine.isIdle(); t += 10) {
        const batch = engine.runUntil(t);
        for (const e of batch) if (e.type === 'admitted' && !e.resumed) admittedOrder.push(e.id);
        events.push(...batch);
        engine.checkInvariants();
        expect(engine.stats().usedBlocks).toBeLessThanOrEqual(128);
      }
      const preempted = ofType(events, 'preempted');
      expect(preempted.length).toBeGreaterThan(0);
      // The first victim is the most recently admitted request.
      expect(preempted[0].id).toBe(admittedOrder[admittedOrder.length - 1]);
      const resumed = ofType(events, 'admitted').filter((e) => e.resumed);
      expect(resumed.length).toBe(preempted.length);
      for (let i = 0; i < 4; i++) expect(finished(events, `r${i}`).outputTokens).toBe(544);
      expect(engine.stats().preemptions).toBe(preempted.length);
    });

    test('GIVEN preemptions WHEN the preempted requests are admitted again THEN those lookups are counted apart from first-time prefix-cache queries, as vLLM does', () => {
      const engine = new EngineModel(tiny);
      const events = [];
      for (let i = 0; i < 4; i++) engine.submit({ id: `r${i}`, promptText: textOf(`r${i}`, 480), maxTokens: 544 }, 0);
      for (let t = 10; !engine.isIdle(); t += 10) events.push(...engine.runUntil(t));
      const admitted = ofType(events, 'admitted');
      const first = admitted.filter((e) => !e.resumed);
      const again = admitted.filter((e) => e.resumed);
      expect(again.length).toBeGreaterThan(0);
      const stats = engine.stats();
      // First admissions: the prompt only, nothing cached (four distinct prompts).
      expect(stats.prefixCacheQueryTokens).toBe(4 * 480);
      expect(stats.prefixCacheHitTokens).toBe(first.reduce((sum, e) => sum + e.cachedTokens, 0));
      expect(stats.prefixCacheHitTokens).toBe(0);
      // Re-admissions look up prompt + output so far, and find their own blocks that stayed cached.
      expect(stats.preemptedPrefixCacheHitTokens).toBe(again.reduce((sum, e) => sum + e.cachedTokens, 0));
      expect(stats.preemptedPrefixCacheQueryTokens).toBeGreaterThan(again.length * 480);
    });
  });

  describe('when scheduling a step', () => {
    test('GIVEN 20 requests at once THEN no step exceeds the token budget or max sequences, and prefill is chunked', () => {
      const steps: StepRecord[] = [];
      const engine = new EngineModel(tiny, { onStep: (s) => steps.push(s) });
      for (let i = 0; i < 20; i++) engine.submit({ id: `r${i}`, promptText: textOf(`r${i}`, 100), maxTokens: 5 }, 0);
      const events = engine.drain();
      expect(ofType(events, 'finished')).toHaveLength(20);
      expect(Math.max(...steps.map((s) => s.scheduledTokens))).toBe(256);
      expect(Math.max(...steps.map((s) => s.runningSequences))).toBe(8);
      expect(
        steps.every((s) => s.scheduledTokens <= tiny.maxNumBatchedTokens && s.runningSequences <= tiny.maxNumSeqs),
      ).toBe(true);
    });

    test('GIVEN a 600-token prompt and a 256-token budget THEN it is prefilled in 3 chunks before its first token', () => {
      const steps: StepRecord[] = [];
      const engine = new EngineModel(tiny, { onStep: (s) => steps.push(s) });
      engine.submit({ id: 'long', promptText: textOf('long', 600), maxTokens: 1 }, 0);
      engine.drain();
      expect(steps.map((s) => s.scheduledTokens)).toEqual([256, 256, 88]);
    });

    test('GIVEN a request arriving mid-step THEN it joins the next step boundary, not the step in flight', () => {
      const steps: StepRecord[] = [];
      const engine = new EngineModel(tiny, { onStep: (s) => steps.push(s) });
      engine.submit({ id: 'a', promptText: textOf('a', 250), maxTokens: 1 }, 0);
      engine.runUntil(2); // the prefill step starts at 1 (overhead) and runs well past 2
      const firstEnd = steps[0].startMs + steps[0].durationMs;
      expect(firstEnd).toBeGreaterThan(3);
      engine.submit({ id: 'b', promptText: textOf('b', 20), maxTokens: 1 }, 2);
      const admitted = ofType(engine.drain(), 'admitted').find((e) => e.id === 'b');
      expect(admitted?.timeMs).toBe(firstEnd);
    });

    test('GIVEN an idle engine WHEN a request arrives at t THEN its step starts at t + the request overhead', () => {
      const engine = new EngineModel(tiny);
      engine.submit({ id: 'a', promptText: textOf('a', 20), maxTokens: 1 }, 500);
      expect(engine.nextStepTimeMs()).toBe(501);
      expect(engine.runUntil(501)).toEqual([]);
      expect(ofType(engine.runUntil(502), 'admitted')[0].timeMs).toBe(501);
    });
  });

  describe('when a request asks for output', () => {
    test('GIVEN no max_tokens and a prompt near the context length THEN the default is cut to what is left', () => {
      const engine = new EngineModel(tiny);
      const accepted = engine.submit({ id: 'a', promptText: textOf('a', tiny.maxModelLen - 2) }, 0);
      expect(accepted.maxTokens).toBe(Math.min(2, tiny.defaultMaxTokens));
    });

    test('GIVEN no max_tokens THEN the profile default is generated', () => {
      const engine = new EngineModel(tiny);
      engine.submit({ id: 'a', promptText: textOf('a', 10) }, 0);
      expect(finished(engine.drain(), 'a').outputTokens).toBe(tiny.defaultMaxTokens);
    });

    test.each([
      [1000, 24, 24], //    maxModelLen 1024 - 1000: exactly what is left
      [1023, 1, 1], //      one token of room left
      [10, 5, 5],
    ])(
      'GIVEN a %i-token prompt and max_tokens %i THEN exactly %i tokens are generated',
      (prompt, maxTokens, expected) => {
        const engine = new EngineModel(tiny);
        const accepted = engine.submit({ id: 'a', promptText: textOf('a', prompt), maxTokens }, 0);
        expect(accepted.maxTokens).toBe(expected);
        expect(finished(engine.drain(), 'a').outputTokens).toBe(expected);
      },
    );

    test.each([
      ['a prompt of maxModelLen tokens', { promptText: textOf('a', 1024) }, 'prompt-too-long'],
      ['a prompt over maxModelLen', { promptText: textOf('a', 1025) }, 'prompt-too-long'],
      ['an empty prompt', { promptText: '' }, 'empty-prompt'],
      ['max_tokens 0', { promptText: 'hello', maxTokens: 0 }, 'invalid-max-tokens'],
      ['max_tokens 1.5', { promptText: 'hello', maxTokens: 1.5 }, 'invalid-max-tokens'],
      [
        'max_tokens one over what the context leaves (like vLLM)',
        { promptText: textOf('a', 1000), maxTokens: 25 },
        'max-tokens-too-large',
      ],
      ['neither text nor hashes', { promptTokens: 10 }, 'invalid-request'],
      ['hashes that do not fit the prompt', { promptTokens: 20, blockHashes: [1, 2] }, 'invalid-request'],
    ])('GIVEN %s THEN submit is refused with %s', (_name, prompt, code) => {
      const engine = new EngineModel(tiny);
      expect(() => engine.submit({ id: 'x', ...prompt }, 0)).toThrow(expect.objectContaining({ code }));
    });

    test('GIVEN a duplicate live id or a submit time going backwards THEN submit is refused', () => {
      const engine = new EngineModel(tiny);
      engine.submit({ id: 'x', promptText: 'hello' }, 10);
      expect(() => engine.submit({ id: 'x', promptText: 'hello' }, 10)).toThrow(EngineRequestError);
      expect(() => engine.submit({ id: 'y', promptText: 'hello' }, 9)).toThrow(/must not decrease/);
    });
  });

  describe('when a request is aborted', () => {
    test('GIVEN a running request WHEN aborted THEN its blocks are freed, its full blocks stay cached, and it never finishes', () => {
      const engine = new EngineModel(tiny);
      const text = textOf('a', 200);
      engine.submit({ id: 'a', promptText: text, maxTokens: 100 }, 0);
      engine.runUntil(30);
      expect(engine.stats().usedBlocks).toBeGreaterThan(0);
      expect(engine.abort('a')).toBe(true);
      expect(engine.stats()).toMatchObject({ usedBlocks: 0, running: 0, aborted: 1 });
      expect(engine.cachedTokensFor({ promptText: text })).toBe(192);
      expect(engine.drain()).toEqual([]);
      expect(engine.abort('a')).toBe(false);
      engine.checkInvariants();
    });

    test('GIVEN a waiting request WHEN aborted THEN it leaves the queue', () => {
      const engine = new EngineModel(tiny);
      engine.submit({ id: 'a', promptText: 'hello' }, 0);
      expect(engine.abort('a')).toBe(true);
      expect(engine.isIdle()).toBe(true);
      expect(engine.nextStepTimeMs()).toBeUndefined();
    });
  });

  describe('decode stretches planned ahead (RunOptions.lookahead)', () => {
    test('GIVEN a decoding batch WHEN run with lookahead THEN the stretch waits unapplied, next event at its end, and a send applies only the steps before it', () => {
      const ahead = new EngineModel(tiny);
      const eager = new EngineModel(tiny);
      for (const engine of [ahead, eager]) engine.submit({ id: 'a', promptText: textOf('a', 100), maxTokens: 60 }, 0);
      // tiny: the prefill step runs from 1 to ≈3 ms, then decode steps of ≈2.1 ms until the 60th token.
      ahead.runUntil(3.5, { lookahead: true });
      expect(ahead.stats().steps).toBe(1);
      ahead.runUntil(10, { lookahead: true });
      expect(ahead.stats().steps).toBe(1);
      expect(ahead.nextStepTimeMs()).toBeLessThan(3.5);
      expect(ahead.nextRunTimeMs()).toBeGreaterThan(100);
      expect(() => ahead.abort('a')).toThrow('abort while a decode stretch is planned ahead');
      const sendMs = 8;
      eager.runUntil(sendMs);
      for (const engine of [ahead, eager])
        engine.submit({ id: 'b', promptText: textOf('b', 50), maxTokens: 5 }, sendMs);
      expect(ahead.stats().steps).toBe(4);
      expect(ahead.stats()).toEqual(eager.stats());
      expect(ahead.drain()).toEqual(eager.drain());
      expect(ahead.stats()).toEqual(eager.stats());
    });
  });
});
