import fc from 'fast-check';
import {
  EngineModel,
  type EngineEvent,
  type EngineModelOptions,
  type StepRecord,
} from '../../../router/src/emulator/engine-model';
import { builtinProfile, validateProfile, type EngineProfile } from '../../../router/src/emulator/engine-profile';
import { ofType, textOf } from './engine-text';

const tiny = builtinProfile('tiny');
/** Same speed as tiny with room for longer decode stretches (fewer preemptions). */
const roomy = validateProfile({
  ...tiny,
  name: 'roomy',
  kvCapacityBlocks: 1024,
  maxNumSeqs: 32,
  maxNumBatchedTokens: 512,
});
/** vLLM's other scheduler settings (engine-args.ts): priority policy and a per-request token cap per step. */
const tinyPriority = validateProfile({
  ...tiny,
  name: 'tiny-priority',
  schedulingPolicy: 'priority',
  longPrefillTokenThreshold: 48,
});
const roomyPriority = validateProfile({
  ...roomy,
  name: 'roomy-priority',
  schedulingPolicy: 'priority',
  longPrefillTokenThreshold: 100,
});

interface Op {
  readonly gapMs: number;
  readonly family: number;
  readonly prefixTokens: number;
  readonly suffixTokens: number;
  readonly maxTokens: number;
  /** Abort the request submitted this many ops ago (0 = none). */
  readonly abortBack: number;
  /** Run the engine to this long after the submit before the next op. */
  readonly runMs: number;
  /** vLLM request priority (used by priority-policy engines, ignored by FCFS ones). */
  readonly priority: number;
}

const opArb: fc.Arbitrary<Op> = fc.record({
  gapMs: fc.integer({ min: 0, max: 40 }),
  family: fc.integer({ min: 0, max: 3 }),
  prefixTokens: fc.integer({ min: 0, max: 600 }),
  suffixTokens: fc.integer({ min: 1, max: 300 }),
  maxTokens: fc.integer({ min: 1, max: 400 }),
  abortBack: fc.oneof(
    { weight: 9, arbitrary: fc.constant(0) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: 5 }) },
  ),
  runMs: fc.integer({ min: 0, max: 60 }),
  priority: fc.integer({ min: 0, max: 2 }),
});

/** Replays ops on a fresh engine, calling `check` after every operation; returns all events. */
function replay(
  profile: EngineProfile,
  ops: readonly Op[],
  options: EngineModelOptions,
  check?: (engine: EngineModel) => void,
): { events: EngineEvent[]; engine: EngineModel } {
  const engine = new EngineModel(profile, options);
  const events: EngineEvent[] = [];
  let now = 0;
  ops.forEach((op, i) => {
    now += op.gapMs;
    events.push(...engine.runUntil(now));
    if (op.abortBack > 0 && i - op.abortBack >= 0) engine.abort(`r${i - op.abortBack}`);
    const prefix = textOf(`family${op.family}`, op.prefixTokens);
    const total = Math.min(op.prefixTokens + op.suffixTokens, profile.maxModelLen - 1);
    const promptText = (prefix + textOf(`own${i}`, op.suffixTokens)).slice(0, total * 4);
    // An explicit max_tokens over what the context leaves is a 400 (like vLLM): ask for at most what is left.
    engine.submit(
      {
        id: `r${i}`,
        promptText,
        maxTokens: Math.min(op.maxTokens, profile.maxModelLen - Math.ceil(promptText.length / 4)),
        priority: op.priority,
      },
      now,
    );
    check?.(engine);
    events.push(...engine.runUntil(now + op.runMs));
    check?.(engine);
  });
  events.push(...engine.drain());
  check?.(engine);
  return { events, engine };
}

/** Stats both execution modes must agree on (all but the count of fast-forwarded steps). */
function comparable(engine: EngineModel): object {
  const { fastForwardedSteps: _ff, ...rest } = engine.stats();
  return rest;
}

describe('engine model properties', () => {
  describe('when random requests share prefixes, overflow KV and get aborted', () => {
    test.each([
      ['tiny', tiny],
      ['roomy', roomy],
      ['tiny-priority', tinyPriority],
      ['roomy-priority', roomyPriority],
    ])(
      'GIVEN the %s profile THEN KV never exceeds capacity, accounting stays consistent, and every request finishes exactly once',
      (_name, profile) => {
        fc.assert(
          fc.property(fc.array(opArb, { minLength: 1, maxLength: 25 }), (ops) => {
            let maxUsed = 0;
            const { events, engine } = replay(profile, ops, {}, (e) => {
              e.checkInvariants();
              maxUsed = Math.max(maxUsed, e.stats().usedBlocks);
            });
            expect(maxUsed).toBeLessThanOrEqual(profile.kvCapacityBlocks);
            const stats = engine.stats();
            expect(stats.usedBlocks).toBe(0);
            expect(stats.finished + stats.aborted).toBe(ops.length);
            const finishedIds = ofType(events, 'finished').map((e) => e.id);
            expect(new Set(finishedIds).size).toBe(finishedIds.length);
            for (const done of ofType(events, 'finished')) {
              const i = Number(done.id.slice(1));
              const want = Math.min(ops[i].maxTokens, profile.maxModelLen - done.promptTokens);
              expect(done.outputTokens).toBe(want);
              expect(done.cachedTokens % profile.blockTokens).toBe(0);
              expect(done.cachedTokens).toBeLessThan(done.promptTokens);
              expect(done.ttftMs).toBeGreaterThanOrEqual(profile.requestOverheadMs);
              expect(done.e2eMs).toBeGreaterThanOrEqual(done.ttftMs);
            }
          }),
          { numRuns: 60 },
        );
      },
    );
  });

  describe('when decode-only stretches are fast-forwarded', () => {
    test.each([
      ['tiny', tiny],
      ['roomy', roomy],
      ['tiny-priority', tinyPriority],
      ['roomy-priority', roomyPriority],
    ])(
      'GIVEN the %s profile THEN events, times and every step equal step-by-step execution exactly',
      (_name, profile) => {
        let fastForwardedSteps = 0;
        fc.assert(
          fc.property(fc.array(opArb, { minLength: 1, maxLength: 20 }), (ops) => {
            const fastSteps: StepRecord[] = [];
            const slowSteps: StepRecord[] = [];
            const fast = replay(profile, ops, { fastForward: true, onStep: (s) => fastSteps.push(s) });
            const slow = replay(profile, ops, { fastForward: false, onStep: (s) => slowSteps.push(s) });
            expect(fast.events).toEqual(slow.events);
            expect(comparable(fast.engine)).toEqual(comparable(slow.engine));
            expect(fastSteps.map(({ fastForwarded: _f, ...s }) => s)).toEqual(
              slowSteps.map(({ fastForwarded: _f, ...s }) => s),
            );
            fastForwardedSteps += fastSteps.filter((s) => s.fastForwarded).length;
          }),
          { numRuns: 40 },
        );
        // The property is only meaningful if the fast path actually ran.
        expect(fastForwardedSteps).toBeGreaterThan(1000);
      },
    );

    test('GIVEN no step observer THEN the fast path still gives identical events and counters', () => {
      const ops = fc.sample(fc.array(opArb, { minLength: 30, maxLength: 30 }), { numRuns: 1, seed: 42 })[0];
      const fast = replay(roomy, ops, {});
      const slow = replay(roomy, ops, { fastForward: false });
      expect(fast.events).toEqual(slow.events);
      expect(comparable(fast.engine)).toEqual(comparable(slow.engine));
    });
  });
});
