import fc from 'fast-check';
import {
  parseChatRequest,
  parseCompletionRequest,
  parseInvocationRequest,
  RouterError,
  type RouterErrorCode,
} from '../../../router/src/protocol';

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value), 'utf8');

function expectError(fn: () => unknown, code: RouterErrorCode, message?: string): void {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(RouterError);
    expect((err as RouterError).code).toBe(code);
    if (message !== undefined) expect((err as RouterError).message).toBe(message);
    return;
  }
  throw new Error(`expected ${code}`);
}

describe('when a chat completion body is parsed', () => {
  it('GIVEN string and part-array contents THEN the routing text is the text content in order, other parts skipped', () => {
    const parsed = parseChatRequest(
      json({
        model: 'llama',
        stream: true,
        user: 'u-1',
        messages: [
          { role: 'system', content: 'You are helpful. ' },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Look: ' },
              { type: 'image_url', image_url: { url: 'data:...' } },
              { type: 'text', text: 'what is it?' },
            ],
          },
          { role: 'assistant', content: null, tool_calls: [] },
        ],
      }),
      {},
    );
    expect(parsed.routing).toMatchObject({
      model: 'llama',
      api: 'chat',
      keyBasis: 'message-text',
      routingText: 'You are helpful. Look: what is it?',
      stream: true,
      sessionKey: 'u-1',
      rawBody: undefined,
      tenantKey: undefined,
    });
    expect(parsed.upstreamPath).toBe('/v1/chat/completions');
  });

  it('GIVEN prompt_cache_key THEN it is the tenant key, and the Prefix-Aware-Id header wins over it', () => {
    const body = json({ messages: [{ role: 'user', content: 'hi' }], prompt_cache_key: 'from-body' });
    expect(parseChatRequest(body, {}).routing.tenantKey).toBe('from-body');
    expect(parseChatRequest(body, { 'x-amzn-sagemaker-prefix-aware-id': 'from-header' }).routing.tenantKey).toBe(
      'from-header',
    );
  });

  it('GIVEN the body-bytes basis (runtime API) THEN the raw body is kept for keying', () => {
    const body = json({ messages: [{ role: 'user', content: 'hi' }] });
    expect(parseChatRequest(body, {}, 'body-bytes').routing.rawBody).toBe(body);
  });

  it.each<[string, Buffer, RouterErrorCode, string]>([
    ['malformed JSON', Buffer.from('{"messages": ['), 'invalid_json', 'request body is not valid JSON'],
    ['invalid UTF-8', Buffer.from([0x7b, 0xff, 0x7d]), 'invalid_json', 'request body is not valid JSON'],
    ['a JSON array', json([1]), 'invalid_json', 'request body must be a JSON object'],
    ['no messages', json({ model: 'm' }), 'missing_field', 'messages is required'],
    ['empty messages', json({ messages: [] }), 'invalid_field', 'messages must be a non-empty array'],
    ['messages as a string', json({ messages: 'hi' }), 'invalid_field', 'messages must be a non-empty array'],
    ['a message that is not an object', json({ messages: ['hi'] }), 'invalid_field', 'messages[0] must be an object'],
    [
      'a message without role',
      json({ messages: [{ content: 'hi' }] }),
      'invalid_field',
      'messages[0].role must be a string',
    ],
    [
      'numeric content',
      json({ messages: [{ role: 'user', content: 5 }] }),
      'invalid_field',
      'messages[0].content must be a string, an array of content parts, or null',
    ],
    [
      'a part without type',
      json({ messages: [{ role: 'user', content: [{ text: 'x' }] }] }),
      'invalid_field',
      'messages[0].content[0].type must be a string',
    ],
    [
      'a text part without text',
      json({ messages: [{ role: 'user', content: [{ type: 'text' }] }] }),
      'invalid_field',
      'messages[0].content[0].text must be a string',
    ],
    [
      'a part that is a string',
      json({ messages: [{ role: 'user', content: ['x'] }] }),
      'invalid_field',
      'messages[0].content[0] must be an object',
    ],
    [
      'stream as a string',
      json({ messages: [{ role: 'user', content: 'x' }], stream: 'yes' }),
      'invalid_field',
      'stream must be a boolean',
    ],
    [
      'model as a number',
      json({ messages: [{ role: 'user', content: 'x' }], model: 3 }),
      'invalid_field',
      'model must be a string',
    ],
    [
      'prompt_cache_key as a number',
      json({ messages: [{ role: 'user', content: 'x' }], prompt_cache_key: 3 }),
      'invalid_field',
      'prompt_cache_key must be a string',
    ],
  ])('GIVEN %s THEN it is rejected', (_label, body, code, message) => {
    expectError(() => parseChatRequest(body, {}), code, message);
  });
});

describe('when the X-Amzn-SageMaker-Prefix-Aware-Id header is checked', () => {
  const body = json({ messages: [{ role: 'user', content: 'x' }] });
  const withHeader = (value: string) => () => parseChatRequest(body, { 'x-amzn-sagemaker-prefix-aware-id': value });

  it('GIVEN 1 character THEN it is accepted', () => expect(withHeader('a')().routing.tenantKey).toBe('a'));
  it('GIVEN 64 characters THEN it is accepted', () =>
    expect(withHeader('x'.repeat(64))().routing.tenantKey).toBe('x'.repeat(64)));
  it('GIVEN spaces and symbols (printable ASCII) THEN it is accepted', () =>
    expect(withHeader(' ~!tenant 1~')().routing.tenantKey).toBe(' ~!tenant 1~'));
  it('GIVEN 0 characters THEN it is rejected', () => expectError(withHeader(''), 'invalid_prefix_aware_id'));
  it('GIVEN 65 characters THEN it is rejected without echoing it', () =>
    expectError(
      withHeader('y'.repeat(65)),
      'invalid_prefix_aware_id',
      'X-Amzn-SageMaker-Prefix-Aware-Id must be 1 to 64 printable ASCII characters (got 65 characters)',
    ));
  it('GIVEN a DEL character THEN it is rejected', () => expectError(withHeader('a\u007f'), 'invalid_prefix_aware_id'));
  it('GIVEN a non-ASCII character THEN it is rejected', () =>
    expectError(withHeader('tenant-é'), 'invalid_prefix_aware_id'));
});

describe('when a completions body is parsed', () => {
  it.each<[string, unknown, string]>([
    ['a string', 'Once upon', 'Once upon'],
    ['an array of strings', ['Once ', 'upon'], 'Once upon'],
    ['token ids', [1, 2, 3], '1 2 3'],
    ['arrays of token ids', [[1, 2], [3]], '1 2 3'],
  ])('GIVEN a prompt that is %s THEN the routing text is %j', (_label, prompt, text) => {
    const parsed = parseCompletionRequest(json({ prompt, model: 'm' }), {});
    expect(parsed.routing).toMatchObject({ api: 'completions', routingText: text, model: 'm' });
    expect(parsed.upstreamPath).toBe('/v1/completions');
  });

  it.each<[string, unknown, RouterErrorCode]>([
    ['absent', undefined, 'missing_field'],
    ['an empty array', [], 'invalid_field'],
    ['a number', 42, 'invalid_field'],
    ['mixed strings and ids', ['a', 1], 'invalid_field'],
    ['negative ids', [-1], 'invalid_field'],
    ['an empty id array inside', [[]], 'invalid_field'],
  ])('GIVEN a prompt that is %s THEN it is rejected', (_label, prompt, code) => {
    expectError(() => parseCompletionRequest(json({ prompt }), {}), code);
  });
});

describe('when an invocation body is parsed', () => {
  it('GIVEN a body with messages THEN it goes to the chat route, keyed on body bytes', () => {
    const body = json({ messages: [{ role: 'user', content: 'hello' }], stream: true });
    const parsed = parseInvocationRequest(body, { 'content-type': 'application/json' });
    expect(parsed.upstreamPath).toBe('/v1/chat/completions');
    expect(parsed.routing).toMatchObject({
      api: 'invocations',
      keyBasis: 'body-bytes',
      routingText: 'hello',
      stream: true,
    });
    expect(parsed.routing.rawBody).toBe(body);
  });

  it('GIVEN a body with prompt THEN it goes to the completions route', () => {
    expect(parseInvocationRequest(json({ prompt: 'hello' }), {}).upstreamPath).toBe('/v1/completions');
  });

  it('GIVEN a JSON body of another shape THEN it is forwarded to the backend /invocations as is', () => {
    const parsed = parseInvocationRequest(json({ inputs: 'hello', parameters: {}, prompt_cache_key: 't' }), {
      'content-type': 'application/json',
    });
    expect(parsed).toMatchObject({ upstreamPath: '/invocations', jsonBody: false });
    expect(parsed.routing.tenantKey).toBe('t');
  });

  it('GIVEN a non-JSON payload THEN it is forwarded to the backend /invocations', () => {
    expect(parseInvocationRequest(Buffer.from('1,2,3\n'), { 'content-type': 'text/csv' }).upstreamPath).toBe(
      '/invocations',
    );
  });

  it('GIVEN malformed JSON declared as application/json THEN it is rejected', () => {
    expectError(
      () => parseInvocationRequest(Buffer.from('{"messages":'), { 'content-type': 'application/json; charset=utf-8' }),
      'invalid_json',
    );
  });

  it('GIVEN a messages body with a bad message THEN it is rejected like on the chat route', () => {
    expectError(() => parseInvocationRequest(json({ messages: [{ role: 1 }] }), {}), 'invalid_field');
  });
});

describe('when arbitrary input is parsed', () => {
  const parsers = [parseChatRequest, parseCompletionRequest, parseInvocationRequest] as const;
  const outcome = (fn: () => unknown): 'ok' | 'router-error' => {
    try {
      fn();
      return 'ok';
    } catch (err) {
      if (err instanceof RouterError) return 'router-error';
      throw err;
    }
  };

  it('GIVEN any JSON value THEN every parser returns or throws a RouterError, nothing else', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.constantFrom(0, 1, 2), (value, i) => {
        expect(['ok', 'router-error']).toContain(
          outcome(() =>
            parsers[i](Buffer.from(JSON.stringify(value) ?? 'null'), { 'content-type': 'application/json' }),
          ),
        );
      }),
      { numRuns: 500 },
    );
  });

  it('GIVEN chat-shaped objects with arbitrary members THEN the same holds', () => {
    const member = fc.oneof(
      fc.jsonValue(),
      fc.array(fc.dictionary(fc.constantFrom('role', 'content', 'type', 'text'), fc.jsonValue())),
    );
    fc.assert(
      fc.property(
        fc.dictionary(fc.constantFrom('messages', 'prompt', 'stream', 'model', 'prompt_cache_key', 'user'), member),
        fc.constantFrom(0, 1, 2),
        (value, i) => {
          expect(['ok', 'router-error']).toContain(outcome(() => parsers[i](json(value), {})));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('GIVEN arbitrary bytes THEN the same holds', () => {
    fc.assert(
      fc.property(
        fc.uint8Array({ maxLength: 200 }),
        fc.constantFrom(0, 1, 2),
        fc.option(fc.string({ maxLength: 80 })),
        (bytes, i, header) => {
          const headers = header === null ? {} : { 'x-amzn-sagemaker-prefix-aware-id': header };
          expect(['ok', 'router-error']).toContain(outcome(() => parsers[i](Buffer.from(bytes), headers)));
        },
      ),
      { numRuns: 500 },
    );
  });
});
