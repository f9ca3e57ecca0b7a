import { parseInvocationRequest } from '../../../router/src/protocol';
import { PrefixAwareLlmClient } from '../../../router/src/aws/runtime-client';
import {
  LlmModelError,
  LlmStreamError,
  LlmValidationError,
  LlmThrottledError,
  LlmUnavailableError,
  toLlmError,
} from '../../../router/src/aws/runtime-errors';
import { startFixture } from '../server/helpers/router-fixture';
import { startLocalEndpoint, useLocalRuntimeEnv, type LocalEndpoint } from './helpers/local-endpoint';

/**
 * The runtime client with the real AWS SDK against the local router and emulated vLLM, reached through
 * AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME with dummy credentials: invoke, stream (deltas, usage with cached
 * tokens), the PrefixAwareId routing hint, and typed errors.
 */
const SYSTEM = 'You are a support assistant for the example product. '.repeat(40); // ~2,200 characters: longer than the 1,024-byte key

function body(question: string, extra: Record<string, unknown> = {}) {
  return {
    model: 'tiny-emulated-model',
    messages: [
      { role: 'system' as const, content: SYSTEM },
      { role: 'user' as const, content: question },
    ],
    max_tokens: 8,
    ignore_eos: true,
    ...extra,
  };
}

describe('when the runtime client calls a local endpoint through AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME', () => {
  let endpoint: LocalEndpoint;
  let restoreEnv: () => void;
  let client: PrefixAwareLlmClient;

  beforeAll(async () => {
    endpoint = await startLocalEndpoint(2);
    restoreEnv = useLocalRuntimeEnv(endpoint.url);
    // No endpoint, region or credentials in code: all from the environment, as a user's would be.
    client = new PrefixAwareLlmClient({ endpointName: 'my-llm', maxAttempts: 1 });
  });
  afterAll(async () => {
    client.destroy();
    restoreEnv();
    await endpoint.close();
  });

  it('GIVEN invoke() THEN the answer carries text, usage, the variant and the instance header', async () => {
    const answer = await client.invoke(body('first question'));
    expect(answer.text.length).toBeGreaterThan(0);
    expect(answer.usage?.promptTokens).toBeGreaterThan(500);
    expect(answer.usage?.completionTokens).toBe(8);
    expect(answer.variant).toBe('AllTraffic');
    expect(endpoint.router.backends.map((b) => b.name)).toContain(answer.headers['x-prefix-router-instance']);
  });

  it('GIVEN stream() THEN text deltas arrive before the final usage, whose cached_tokens show the repeated prefix', async () => {
    await client.invoke(body('warm the prefix'));
    const stream = await client.stream(body('second question'));
    expect(stream.variant).toBe('AllTraffic');
    const events = [];
    for await (const event of stream) events.push(event);
    const deltas = events.filter((e) => e.type === 'delta');
    expect(deltas.length).toBeGreaterThan(0);
    const last = events[events.length - 1];
    expect(last.type).toBe('usage');
    if (last.type !== 'usage') throw new Error('unreachable');
    expect(last.usage.completionTokens).toBe(8);
    // The system prompt was sent before: whole 16-token blocks of it come back cached.
    expect(last.usage.cachedTokens).toBeGreaterThanOrEqual(16 * 20);
  });

  it('GIVEN the same prompt with different prefixAwareId values THEN each id lands where the policy keys it, and ids spread', async () => {
    const payload = JSON.stringify({ ...body('same question'), stream: false });
    const snapshot = {
      instances: endpoint.router.backends.map((b) => ({ id: b.id, healthy: true, inFlight: 0 })),
      nowMs: 0,
    };
    const placements = new Set<string>();
    for (let t = 0; t < 12; t++) {
      const id = `app-${t}`;
      const routing = parseInvocationRequest(Buffer.from(payload), {
        'content-type': 'application/json',
        'x-amzn-sagemaker-prefix-aware-id': id,
      }).routing;
      const expected = endpoint.router.policy.decide(routing, snapshot).instance;
      const answer = await client.invoke(body('same question'), { prefixAwareId: id });
      expect(answer.headers['x-prefix-router-instance']).toBe(
        endpoint.router.backends.find((b) => b.id === expected)!.name,
      );
      placements.add(expected);
    }
    expect(placements.size).toBe(2);
  });

  it('GIVEN a prefixAwareId longer than 64 characters THEN a typed validation error says what to fix', async () => {
    const err = await client.invoke(body('x'), { prefixAwareId: 'z'.repeat(65) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmValidationError);
    expect((err as LlmValidationError).advice).toMatch(/PrefixAwareId/);
  });

  it('GIVEN a prompt the engine rejects THEN a typed model error carries the container status and message', async () => {
    const err = await client.invoke(body('x', { max_tokens: -1 })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmModelError);
    expect((err as LlmModelError).originalStatusCode).toBe(400);
    expect((err as LlmModelError).originalMessage).toMatch(/max_tokens/);
  });

  it('GIVEN an abort signal THEN the call ends as aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const err = await client.stream(body('x'), { signal: controller.signal }).catch((e: unknown) => e);
    expect((err as { kind?: string }).kind).toBe('aborted');
  });
});

describe('when SDK errors are mapped to typed errors', () => {
  it.each([
    ['ThrottlingException', 400, LlmThrottledError],
    ['Unknown', 429, LlmThrottledError],
    ['ServiceUnavailable', 503, LlmUnavailableError],
    ['ModelNotReadyException', 429, LlmUnavailableError],
    ['ValidationError', 400, LlmValidationError],
  ] as const)('GIVEN %s with HTTP %i THEN the class is %p', (name, status, cls) => {
    expect(toLlmError({ name, message: 'm', $metadata: { httpStatusCode: status } }, 'ep')).toBeInstanceOf(cls);
  });
});

describe('when the stream breaks after it started', () => {
  it('GIVEN a backend that dies mid-stream THEN the deltas so far arrive and iterating throws a typed stream error', async () => {
    const fx = await startFixture({ backends: 1, behavior: { failAfterChunks: 1 } });
    const client = new PrefixAwareLlmClient({
      endpointName: 'ep',
      sdkConfig: {
        endpoint: fx.router.url,
        region: 'us-east-1',
        credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-secret' },
        maxAttempts: 1,
      },
    });
    try {
      const stream = await client.stream({ messages: [{ role: 'user', content: 'x' }] });
      const deltas: string[] = [];
      const err = await (async () => {
        for await (const e of stream) if (e.type === 'delta') deltas.push(e.text);
      })().catch((e: unknown) => e);
      expect(deltas.join('')).toContain('hello from b');
      expect(err).toBeInstanceOf(LlmStreamError);
      expect((err as LlmStreamError).errorCode).toBe('upstream_stream_failed');
    } finally {
      client.destroy();
      await fx.close();
    }
  });
});
