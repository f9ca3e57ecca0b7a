import fc from 'fast-check';
import { UsageScanner } from '../../../router/src/server/usage-scanner';

const body = (cached: number, prompt: number, spaced: boolean) =>
  spaced
    ? `data: {"choices":[],"usage": {"prompt_tokens": ${prompt}, "completion_tokens": 7, "prompt_tokens_details": {"cached_tokens": ${cached}}}}\n\ndata: [DONE]\n\n`
    : `{"id":"x","choices":[{"text":"hi"}],"usage":{"prompt_tokens":${prompt},"completion_tokens":7,"prompt_tokens_details":{"cached_tokens":${cached}}}}`;

describe('when a response streams through the usage scanner', () => {
  it('GIVEN a body cut into chunks anywhere THEN it reads prompt_tokens and cached_tokens', () => {
    fc.assert(
      fc.property(
        fc.nat({ max: 10_000_000 }),
        fc.nat({ max: 10_000_000 }),
        fc.boolean(),
        fc.array(fc.nat(), { maxLength: 12 }),
        (cached, prompt, spaced, cuts) => {
          const text = Buffer.from(body(cached, prompt, spaced));
          const points = [...new Set(cuts.map((c) => c % text.length))].sort((a, b) => a - b);
          const scanner = new UsageScanner();
          let last = 0;
          for (const p of [...points, text.length]) {
            if (p > last) scanner.push(text.subarray(last, p));
            last = p;
          }
          expect(scanner.cachedTokens).toBe(cached);
          expect(scanner.promptTokens).toBe(prompt);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('GIVEN a body without usage THEN nothing is read', () => {
    const scanner = new UsageScanner();
    scanner.push(Buffer.from('data: {"choices":[{"delta":{"content":"cached_tokens"}}]}\n\n'));
    expect(scanner.cachedTokens).toBeUndefined();
  });
});
