import {
  InvokeEndpointCommand,
  InvokeEndpointWithResponseStreamCommand,
  ModelError,
  ModelStreamError,
  SageMakerRuntimeClient,
  ServiceUnavailable,
  ValidationError,
} from '@aws-sdk/client-sagemaker-runtime';
import { parseInvocationRequest } from '../../../router/src/protocol';
import { chatBody, startFixture, type Fixture } from './helpers/router-fixture';

function runtimeClient(url: string): SageMakerRuntimeClient {
  return new SageMakerRuntimeClient({
    endpoint: url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-secret' },
    maxAttempts: 1,
  });
}

const decoder = new TextDecoder();

describe('when the AWS SDK sagemaker-runtime client calls the router', () => {
  let fx: Fixture;
  let client: SageMakerRuntimeClient;

  beforeAll(async () => {
    fx = await startFixture({ backends: 2 });
    client = runtimeClient(fx.router.url);
  });
  afterAll(async () => {
    client.destroy();
    await fx.close();
  });
  afterEach(() => {
    for (const b of fx.backends) {
      b.behavior.errorStatus = undefined;
      b.behavior.failAfterChunks = undefined;
    }
  });

  it('GIVEN InvokeEndpoint with a chat body THEN the backend chat route answers and SigV4 headers stay at the router', async () => {
    const out = await client.send(
      new InvokeEndpointCommand({
        EndpointName: 'my-endpoint',
        ContentType: 'application/json',
        Body: new TextEncoder().encode(chatBody('system text')),
      }),
    );
    expect(out.InvokedProductionVariant).toBe('AllTraffic');
    expect(out.ContentType).toBe('application/json');
    const body = JSON.parse(decoder.decode(out.Body)) as { object: string };
    expect(body.object).toBe('chat.completion');
    const received = fx.backends.flatMap((b) => b.requests).pop()!;
    expect(received.path).toBe('/v1/chat/completions');
    expect(received.headers.authorization).toBeUndefined();
    expect(received.headers['x-amz-date']).toBeUndefined();
  });

  it('GIVEN InvokeEndpoint with another JSON shape THEN the backend /invocations gets it', async () => {
    const out = await client.send(
      new InvokeEndpointCommand({
        EndpointName: 'ep',
        ContentType: 'application/json',
        Body: new TextEncoder().encode('{"inputs":"x"}'),
      }),
    );
    expect(JSON.parse(decoder.decode(out.Body))).toMatchObject({ bytes: 14 });
  });

  it('GIVEN InvokeEndpointWithResponseStream THEN PayloadPart events carry the SSE stream', async () => {
    const out = await client.send(
      new InvokeEndpointWithResponseStreamCommand({
        EndpointName: 'my-endpoint',
        ContentType: 'application/json',
        Body: new TextEncoder().encode(chatBody('streamed', { stream: true })),
      }),
    );
    expect(out.InvokedProductionVariant).toBe('AllTraffic');
    expect(out.ContentType).toBe('text/event-stream');
    let text = '';
    let parts = 0;
    for await (const event of out.Body!) {
      if (event.PayloadPart?.Bytes) {
        parts++;
        text += decoder.decode(event.PayloadPart.Bytes);
      }
    }
    expect(parts).toBeGreaterThanOrEqual(1);
    expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(text).toContain('"content":"hello from b');
  });

  it('GIVEN the same body with different PrefixAwareId values THEN each tenant goes where the policy keys it, and tenants spread', async () => {
    const bodyText = chatBody('the same shared prefix '.repeat(100));
    const body = new TextEncoder().encode(bodyText);
    const snapshot = { instances: fx.router.backends.map((b) => ({ id: b.id, healthy: true, inFlight: 0 })), nowMs: 0 };
    const expected = new Set<string>();
    for (let t = 0; t < 16; t++) {
      const tenant = `tenant-${t}`;
      const routing = parseInvocationRequest(Buffer.from(bodyText), {
        'content-type': 'application/json',
        'x-amzn-sagemaker-prefix-aware-id': tenant,
      }).routing;
      const want = fx.router.policy.decide(routing, snapshot).instance;
      expected.add(want);
      for (let k = 0; k < 2; k++) {
        const out = await client.send(
          new InvokeEndpointCommand({
            EndpointName: 'ep',
            ContentType: 'application/json',
            Body: body,
            PrefixAwareId: tenant,
          }),
        );
        const answeredBy = (JSON.parse(decoder.decode(out.Body)) as { id: string }).id;
        expect(answeredBy).toBe(`chatcmpl-${fx.backends.find((b) => b.url === want)!.name}`);
      }
    }
    expect(expected.size).toBe(2);
  });

  it('GIVEN an invalid PrefixAwareId THEN the SDK raises ValidationError', async () => {
    await expect(
      client.send(
        new InvokeEndpointCommand({
          EndpointName: 'ep',
          ContentType: 'application/json',
          Body: new TextEncoder().encode(chatBody('x')),
          PrefixAwareId: 'z'.repeat(65),
        }),
      ),
    ).rejects.toBeInstanceOf(ValidationError);
  });

  it('GIVEN malformed JSON declared as JSON THEN the SDK raises ValidationError with our message', async () => {
    const err = await client
      .send(
        new InvokeEndpointCommand({
          EndpointName: 'ep',
          ContentType: 'application/json',
          Body: new TextEncoder().encode('{"messages": ['),
        }),
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as ValidationError).message).toBe('request body is not valid JSON');
  });

  it('GIVEN the backend answers 500 THEN the SDK raises ModelError with the original status and message', async () => {
    for (const b of fx.backends) b.behavior.errorStatus = 500;
    const err = await client
      .send(
        new InvokeEndpointCommand({
          EndpointName: 'ep',
          ContentType: 'application/json',
          Body: new TextEncoder().encode(chatBody('x')),
        }),
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect((err as ModelError).OriginalStatusCode).toBe(500);
    expect((err as ModelError).OriginalMessage).toContain('fake failure from b');
  });

  it('GIVEN the backend dies mid-stream THEN the event stream ends with a ModelStreamError the SDK raises', async () => {
    for (const b of fx.backends) {
      b.behavior.failAfterChunks = 1;
    }
    const out = await client.send(
      new InvokeEndpointWithResponseStreamCommand({
        EndpointName: 'ep',
        ContentType: 'application/json',
        Body: new TextEncoder().encode(chatBody('x', { stream: true })),
      }),
    );
    let text = '';
    const err = await (async () => {
      for await (const event of out.Body!)
        if (event.PayloadPart?.Bytes) text += decoder.decode(event.PayloadPart.Bytes);
    })().catch((e: unknown) => e);
    expect(text).toContain('hello from b');
    expect(err).toBeInstanceOf(ModelStreamError);
    expect((err as ModelStreamError).ErrorCode).toBe('upstream_stream_failed');
  });
});

describe('when no backend is healthy for the AWS SDK', () => {
  it('GIVEN every backend failing its health check THEN the SDK raises ServiceUnavailable', async () => {
    const fx = await startFixture({
      backends: 1,
      behavior: { healthStatus: 503 },
      router: { healthCheck: { intervalMs: 1000, timeoutMs: 200 } },
    });
    const client = runtimeClient(fx.router.url);
    try {
      await expect(
        client.send(
          new InvokeEndpointCommand({
            EndpointName: 'ep',
            ContentType: 'application/json',
            Body: new TextEncoder().encode(chatBody('x')),
          }),
        ),
      ).rejects.toBeInstanceOf(ServiceUnavailable);
    } finally {
      client.destroy();
      await fx.close();
    }
  });
});
