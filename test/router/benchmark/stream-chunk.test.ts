import fc from 'fast-check';
import { readOrdinaryEvent, readStreamEvent, openAiErrorOf, sanitizeCode } from '../../../router/src/benchmark';

describe('when a streamed event is read', () => {
  it('GIVEN the role-only opening chat chunk THEN it carries no generated output', () => {
    expect(readStreamEvent('message', '{"choices":[{"index":0,"delta":{"role":"assistant","content":""}}]}')).toEqual({
      kind: 'chunk',
      generated: false,
      usage: undefined,
    });
  });

  it.each([
    ['chat content', '{"choices":[{"delta":{"content":"Hi"}}]}'],
    ['reasoning content', '{"choices":[{"delta":{"reasoning_content":"hm"}}]}'],
    ['a tool call', '{"choices":[{"delta":{"tool_calls":[{"index":0}]}}]}'],
    ['completion text', '{"choices":[{"index":0,"text":"x"}]}'],
  ])('GIVEN %s THEN it is generated output', (_name, data) => {
    expect(readStreamEvent('message', data)).toMatchObject({ kind: 'chunk', generated: true });
  });

  it('GIVEN a usage chunk THEN prompt, completion and cached tokens are read', () => {
    expect(
      readStreamEvent(
        'message',
        '{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":8}}}',
      ),
    ).toEqual({
      kind: 'chunk',
      generated: false,
      usage: { promptTokens: 10, completionTokens: 3, cachedTokens: 8 },
    });
  });

  it('GIVEN usage without prompt_tokens_details THEN cached tokens are unknown, not 0', () => {
    expect(
      readStreamEvent('message', '{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3}}'),
    ).toMatchObject({ usage: { cachedTokens: undefined } });
  });

  it('GIVEN [DONE] THEN it is the end', () => {
    expect(readStreamEvent('message', '[DONE]')).toEqual({ kind: 'done' });
  });

  it.each([
    [
      'an OpenAI error object',
      'message',
      '{"error":{"message":"m","type":"server_error","code":"upstream_stream_failed"}}',
      'upstream_stream_failed',
    ],
    [
      "vLLM's numeric code",
      'message',
      '{"error":{"message":"m","type":"BadRequestError","code":400}}',
      'BadRequestError',
    ],
    [
      "vLLM's older top-level error",
      'message',
      '{"object":"error","message":"m","type":"InternalServerError","code":500}',
      'InternalServerError',
    ],
    ['an error event with text', 'error', 'overloaded', 'unknown'],
  ])('GIVEN %s THEN it is a terminal error with code %s', (_name, type, data, code) => {
    expect(readStreamEvent(type, data)).toMatchObject({ kind: 'error', code });
  });

  it('GIVEN data that is not JSON THEN it is invalid', () => {
    expect(readStreamEvent('message', '{oops')).toMatchObject({ kind: 'invalid' });
  });

  it('GIVEN a code with odd characters or a huge length THEN it is cut to a short plain key', () => {
    expect(sanitizeCode('a b/c')).toBe('a_b_c');
    expect(sanitizeCode('x'.repeat(100))).toHaveLength(64);
    expect(sanitizeCode('')).toBe('unknown');
    expect(openAiErrorOf({ error: { message: 'm' } })).toEqual({ code: undefined, message: 'm' });
  });
});

describe('when the fast path reads an ordinary event', () => {
  it('GIVEN any chunk THEN the fast path either defers to the full read or agrees with it (no usage, no error, same output flag)', () => {
    const text = fc.oneof(
      fc.constant(''),
      fc.string({ maxLength: 6 }),
      fc.constantFrom('"error"', 'usage', '[DONE]', '\\', '"'),
    );
    const choice = fc.oneof(
      fc.record({
        index: fc.nat(3),
        delta: fc.record(
          { content: fc.option(text, { nil: null }), role: fc.constantFrom('assistant', undefined) },
          { requiredKeys: [] },
        ),
      }),
      fc.record({ index: fc.nat(3), text }),
      fc.record({ delta: fc.record({ tool_calls: fc.array(fc.record({ index: fc.nat(2) }), { maxLength: 2 }) }) }),
    );
    const usage = fc.option(fc.record({ prompt_tokens: fc.nat(), completion_tokens: fc.nat() }), { nil: null });
    const chunk = fc.record(
      {
        id: text,
        choices: fc.array(choice, { maxLength: 2 }),
        usage,
        error: fc.constantFrom(undefined, { message: 'm', code: 'c' }),
      },
      { requiredKeys: ['choices'] },
    );
    fc.assert(
      fc.property(chunk, fc.boolean(), (value, spaced) => {
        const data = spaced ? JSON.stringify(value, null, 1) : JSON.stringify(value);
        const fast = readOrdinaryEvent('message', data);
        if (fast === undefined) return;
        const full = readStreamEvent('message', data);
        expect(full.kind).toBe('chunk');
        if (full.kind === 'chunk') {
          expect(full.usage).toBeUndefined();
          expect(fast.generated).toBe(full.generated);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('GIVEN a usage chunk, an error or [DONE] THEN the fast path defers', () => {
    expect(readOrdinaryEvent('message', '{"choices":[],"usage": {"prompt_tokens":1}}')).toBeUndefined();
    expect(readOrdinaryEvent('message', '{"error":{"code":"x"}}')).toBeUndefined();
    expect(readOrdinaryEvent('message', '[DONE]')).toBeUndefined();
    expect(readOrdinaryEvent('error', '{"choices":[]}')).toBeUndefined();
    expect(readOrdinaryEvent('message', '{"choices":[{"delta":{"content":"x"}}],"usage":null}')).toEqual({
      generated: true,
    });
  });
});
