import fc from 'fast-check';
import { PREFILL_SPEED_DEFAULTS, PrefillSpeedEstimator, slowdownOf } from '../../../router/src/policy/prefill-speed';

const options = { priorTokensPerSecond: 20_000, priorSamples: 4, smoothing: 0.05, minSampleTokens: 2048 };

describe('when an instance has not been observed', () => {
  test('GIVEN a new estimator THEN its speed is unknown and it has no samples', () => {
    const e = new PrefillSpeedEstimator(options);
    expect(e.tokensPerSecond('a')).toBeUndefined();
    expect(e.samples('a')).toBe(0);
  });

  test('GIVEN an unknown speed THEN a policy treats it as the fastest (slowdown 1), so it is tried and learned', () => {
    expect(slowdownOf(undefined, 20_000)).toBe(1);
    expect(slowdownOf(10_000, 20_000)).toBe(2);
    expect(slowdownOf(20_000, 20_000)).toBe(1);
  });
});

describe('when samples arrive', () => {
  test('GIVEN the first sample THEN the estimate moves 1/(priorSamples + 1) of the way from the prior, in ms per token', () => {
    const e = new PrefillSpeedEstimator(options);
    // 10,000 tokens in 1,000 ms = 0.1 ms/token; prior 0.05 ms/token; weight 1/5.
    expect(e.observe('a', 10_000, 1000)).toBe(true);
    expect(1000 / e.tokensPerSecond('a')!).toBeCloseTo(0.05 + (0.1 - 0.05) / 5, 12);
    expect(e.samples('a')).toBe(1);
  });

  test.each([
    [2047, false, 'below minSampleTokens'],
    [2048, true, 'at minSampleTokens'],
  ])('GIVEN a sample of %i tokens (%s) THEN used = %s', (tokens, used) => {
    const e = new PrefillSpeedEstimator(options);
    expect(e.observe('a', tokens, 500)).toBe(used);
    expect(e.samples('a')).toBe(used ? 1 : 0);
  });

  test.each([0, -1, NaN, Infinity])('GIVEN a TTFT of %p THEN the sample is ignored', (ttft) => {
    const e = new PrefillSpeedEstimator(options);
    expect(e.observe('a', 10_000, ttft)).toBe(false);
    expect(e.tokensPerSecond('a')).toBeUndefined();
  });

  test('GIVEN steady samples of one speed THEN the estimate converges to it, and instances are learned separately', () => {
    const e = new PrefillSpeedEstimator(options);
    for (let i = 0; i < 200; i++) {
      e.observe('fast', 8192, 8192 / 20); // 20,000 tokens/s
      e.observe('slow', 8192, 8192 / 6.5); // 6,500 tokens/s
    }
    expect(e.tokensPerSecond('fast')!).toBeCloseTo(20_000, 0);
    expect(e.tokensPerSecond('slow')! / 6500).toBeCloseTo(1, 3);
  });

  test('GIVEN an instance whose speed changes THEN it is re-learned within a few multiples of 1/smoothing samples', () => {
    const e = new PrefillSpeedEstimator(options);
    for (let i = 0; i < 100; i++) e.observe('a', 8192, 8192 / 20);
    for (let i = 0; i < 60; i++) e.observe('a', 8192, 8192 / 6.5); // 3 × 1/0.05
    // Within 5 % of the new time per token: (1 − 0.05)^60 ≈ 4.6 % of the old distance is left.
    expect(Math.abs(1000 / e.tokensPerSecond('a')! - 1 / 6.5) / (1 / 6.5)).toBeLessThan(0.05);
  });

  test('GIVEN forget THEN the instance starts from the prior again', () => {
    const e = new PrefillSpeedEstimator(options);
    e.observe('a', 8192, 1000);
    e.forget('a');
    expect(e.tokensPerSecond('a')).toBeUndefined();
  });

  test('GIVEN any samples THEN the estimate stays between the prior and the samples’ extremes, in ms per token (property)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            tokens: fc.integer({ min: 2048, max: 200_000 }),
            ttft: fc.double({ min: 1, max: 100_000, noNaN: true }),
          }),
          { minLength: 1, maxLength: 100 },
        ),
        (samples) => {
          const e = new PrefillSpeedEstimator(options);
          for (const s of samples) e.observe('a', s.tokens, s.ttft);
          const perToken = [1000 / options.priorTokensPerSecond, ...samples.map((s) => s.ttft / s.tokens)];
          const ms = 1000 / e.tokensPerSecond('a')!;
          expect(ms).toBeGreaterThanOrEqual(Math.min(...perToken) * (1 - 1e-9));
          expect(ms).toBeLessThanOrEqual(Math.max(...perToken) * (1 + 1e-9));
        },
      ),
    );
  });

  test('GIVEN one instance twice as slow on every sample THEN it is estimated twice as slow (property: the estimator is linear in time)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            tokens: fc.integer({ min: 2048, max: 200_000 }),
            ttft: fc.double({ min: 1, max: 100_000, noNaN: true }),
          }),
          { minLength: 1, maxLength: 50 },
        ),
        (samples) => {
          const e = new PrefillSpeedEstimator({ ...options, priorSamples: 0 });
          for (const s of samples) {
            e.observe('a', s.tokens, s.ttft);
            e.observe('b', s.tokens, 2 * s.ttft);
          }
          expect(e.tokensPerSecond('a')! / e.tokensPerSecond('b')!).toBeCloseTo(2, 9);
        },
      ),
    );
  });
});

describe('when the options are out of range', () => {
  test.each([
    [{ priorTokensPerSecond: 0 }, /priorTokensPerSecond/],
    [{ priorSamples: -1 }, /priorSamples/],
    [{ smoothing: 0 }, /smoothing/],
    [{ smoothing: 1.01 }, /smoothing/],
    [{ minSampleTokens: 0 }, /minSampleTokens/],
  ])('GIVEN %j THEN the constructor names the option', (bad, message) => {
    expect(() => new PrefillSpeedEstimator({ ...PREFILL_SPEED_DEFAULTS, ...bad })).toThrow(message);
  });
});
