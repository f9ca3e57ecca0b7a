import { readStreamEvent, openAiErrorOf, sanitizeCode } from '../../../router/src/benchmark';

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
    expect(readStreamEvent('message', '{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3,"prompt_tokens_details":{"cached_tokens":8}}}')).toEqual({
      kind: 'chunk',
      generated: false,
      usage: { promptTokens: 10, completionTokens: 3, cachedTokens: 8 },
    });
  });

  it('GIVEN usage without prompt_tokens_details THEN cached tokens are unknown, not 0', () => {
    expect(readStreamEvent('message', '{"choices":[],"usage":{"prompt_tokens":10,"completion_tokens":3}}')).toMatchObject({ usage: { cachedTokens: undefined } });
  });

  it('GIVEN [DONE] THEN it is the end', () => {
    expect(readStreamEvent('message', '[DONE]')).toEqual({ kind: 'done' });
  });

  it.each([
    ['an OpenAI error object', 'message', '{"error":{"message":"m","type":"server_error","code":"upstream_stream_failed"}}', 'upstream_stream_failed'],
    ["vLLM's numeric code", 'message', '{"error":{"message":"m","type":"BadRequestError","code":400}}', 'BadRequestError'],
    ["vLLM's older top-level error", 'message', '{"object":"error","message":"m","type":"InternalServerError","code":500}', 'InternalServerError'],
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
