import fc from 'fast-check';
import { SeededRng } from '../../../router/src/common/seeded-rng';
import { EngineModel, type EngineEvent, type StepRecord } from '../../../router/src/emulator/engine-model';
import { builtinProfile, validateProfile } from '../../../router/src/emulator/engine-profile';
import { MEASURED_STEP_JITTER_CV, StepJitter } from '../../../router/src/emulator/step-jitter';
import { textOf } from './engine-text';

const tiny = builtinProfile('tiny');
const roomy = validateProfile({
  ...tiny,
  name: 'roomy',
  kvCapacityBlocks: 1024,
  maxNumSeqs: 32,
  maxNumBatchedTokens: 512,
});

describe('step-time jitter', () => {
  test('GIVEN cv 0 THEN durations are untouched and nothing is drawn', () => {
    const rng = {
      next: () => {
        throw new Error('drawn');
      },
    };
    expect(new StepJitter(0, rng).apply(12.5)).toBe(12.5);
  });

  test.each([0.002, 0.05, 0.3])('GIVEN cv %p THEN factors have mean 1 and that coefficient of variation', (cv) => {
    const jitter = new StepJitter(cv, new SeededRng(7));
    const n = 50_000;
    let sum = 0;
    let sumSq = 0;
    let min = Infinity;
    for (let i = 0; i < n; i++) {
      const f = jitter.apply(1);
      min = Math.min(min, f);
      sum += f;
      sumSq += f * f;
    }
    expect(min).toBeGreaterThan(0);
    const mean = sum / n;
    const sd = Math.sqrt(sumSq / n - mean * mean);
    expect(mean).toBeCloseTo(1, 2);
    expect(sd / mean).toBeGreaterThan(cv * 0.97);
    expect(sd / mean).toBeLessThan(cv * 1.03);
  });

  test.each([-0.01, 1.01, NaN])('GIVEN cv %p THEN it is refused naming the range', (cv) => {
    expect(() => new StepJitter(cv, new SeededRng(1))).toThrow(`step jitter cv must be between 0 and 1 (got ${cv})`);
  });

  test('GIVEN the measured calibration THEN it is the 0.2 % derived from vLLM\u2019s published latency spread', () => {
    // latency_llama70B_tp4: median 3,990.39 ms, P99 3,991.87 ms over 1 prefill + 128 decode steps.
    const sigmaRun = (3991.87 - 3990.39) / 2.326;
    const cv = sigmaRun / Math.sqrt(129) / (3990.39 / 129);
    expect(MEASURED_STEP_JITTER_CV).toBeCloseTo(cv, 3);
  });

  test('GIVEN draws journaled WHEN the last ones are given back THEN they are drawn again in order, and the sequence goes on as if never drawn', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 0, max: 9 }),
        fc.integer({ min: 0, max: 9 }),
        (seed, drawn, back) => {
          back = Math.min(back, drawn);
          const reference = new StepJitter(0.3, new SeededRng(seed));
          const expected = Array.from({ length: 20 }, () => reference.apply(1));
          const jitter = new StepJitter(0.3, new SeededRng(seed));
          jitter.apply(1); // an odd start: the Box–Muller spare is pending when the journal opens
          jitter.journal();
          for (let i = 0; i < drawn; i++) jitter.apply(1);
          jitter.unread(back);
          const rest = Array.from({ length: 19 - drawn + back }, () => jitter.apply(1));
          expect(rest).toEqual(expected.slice(1 + drawn - back));
        },
      ),
      { numRuns: 60 },
    );
    const jitter = new StepJitter(0.3, new SeededRng(1));
    jitter.journal();
    jitter.apply(1);
    expect(() => jitter.unread(2)).toThrow('cannot unread 2 draws: 1 journaled');
  });

  function run(
    profile: typeof tiny,
    fastForward: boolean,
    cv: number,
    seed: number,
    requests: number,
    lookahead = false,
  ): { events: EngineEvent[]; steps: StepRecord[] } {
    const steps: StepRecord[] = [];
    const engine = new EngineModel(profile, {
      fastForward,
      onStep: (s) => steps.push(s),
      ...(cv > 0 ? { stepJitter: new StepJitter(cv, new SeededRng(seed)) } : {}),
    });
    let now = 0;
    const events: EngineEvent[] = [];
    for (let i = 0; i < requests; i++) {
      now += (i * 7) % 23;
      events.push(...engine.runUntil(now, { lookahead }));
      engine.submit(
        { id: `r${i}`, promptText: textOf(`p${i % 3}`, 40 + ((i * 37) % 200)), maxTokens: 20 + ((i * 53) % 150) },
        now,
      );
    }
    events.push(...engine.drain());
    return { events, steps };
  }

  test('GIVEN jitter WHEN decode stretches are fast-forwarded THEN events and steps equal step-by-step execution exactly (same draws, in step order)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 1, max: 16 }),
        fc.constantFrom(0.01, 0.2, 0.5),
        (seed, requests, cv) => {
          const fast = run(roomy, true, cv, seed, requests);
          const slow = run(roomy, false, cv, seed, requests);
          // Stretches planned past each send and cut short by it: their unused draws are given back.
          const ahead = run(roomy, true, cv, seed, requests, true);
          const stepsOf = (r: { steps: StepRecord[] }) => r.steps.map(({ fastForwarded: _f, ...s }) => s);
          expect(fast.events).toEqual(slow.events);
          expect(stepsOf(fast)).toEqual(stepsOf(slow));
          expect(ahead.events).toEqual(slow.events);
          expect(stepsOf(ahead)).toEqual(stepsOf(slow));
        },
      ),
      { numRuns: 12 },
    );
  });

  test('GIVEN a seed THEN a jittered run repeats exactly, and differs from the deterministic model', () => {
    const a = run(roomy, true, 0.2, 5, 20);
    const b = run(roomy, true, 0.2, 5, 20);
    const none = run(roomy, true, 0, 5, 20);
    expect(a.events).toEqual(b.events);
    expect(a.steps.map((s) => s.durationMs)).not.toEqual(none.steps.map((s) => s.durationMs));
  });
});
