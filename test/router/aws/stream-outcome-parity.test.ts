import { SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import { PrefixAwareLlmClient } from '../../../router/src/aws/runtime-client';
import { SageMakerRuntimeTransport } from '../../../router/src/aws/sagemaker-transport';
import { StreamingClient, type StreamOutcome } from '../../../router/src/benchmark/streaming-client';
import { parseTargetUrl } from '../../../router/src/benchmark/target-url';
import type { WorkloadRequest } from '../../../router/src/workload/workload-request';
import { startLocalEndpoint, type LocalEndpoint } from './helpers/local-endpoint';

/**
 * The two streaming transports of the live benchmark count one answer the same way (benchmark/stream-tally.ts):
 * the same request through HTTP and through InvokeEndpointWithResponseStream (the real SDK against the local
 * router's runtime API) yields the same kinds of facts, the router's decision headers included.
 */
describe('when the same request goes through the HTTP and the SageMaker transport', () => {
  let endpoint: LocalEndpoint;
  const outcomes: Record<'http' | 'sagemaker', StreamOutcome | undefined> = { http: undefined, sagemaker: undefined };

  beforeAll(async () => {
    endpoint = await startLocalEndpoint(2);
    const body = JSON.stringify({
      model: endpoint.fleet.instances[0].modelName,
      messages: [{ role: 'user', content: 'a question about prefix caching, long enough to route on '.repeat(4) }],
      max_tokens: 4,
      stream: true,
      stream_options: { include_usage: true },
    });
    const http = new StreamingClient({ target: parseTargetUrl(endpoint.url), connections: 1 });
    outcomes.http = await http.send('/v1/chat/completions', body, { timeoutMs: 30_000 });
    await http.close();
    const sdk = new SageMakerRuntimeClient({
      endpoint: endpoint.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-secret' },
    });
    const sagemaker = new SageMakerRuntimeTransport({
      client: new PrefixAwareLlmClient({ endpointName: 'my-llm', client: sdk }),
      instanceHeader: 'x-prefix-router-instance',
    });
    outcomes.sagemaker = await sagemaker.send({ id: 'r1' } as WorkloadRequest, body, { timeoutMs: 30_000 });
    sdk.destroy();
  }, 60_000);

  afterAll(async () => {
    await endpoint.close();
  });

  test.each(['http', 'sagemaker'] as const)(
    'GIVEN the %s transport THEN the answer succeeded with a first token, usage and the instance',
    (name) => {
      const outcome = outcomes[name]!;
      expect(outcome.error).toBeUndefined();
      expect(outcome.firstTokenAt).not.toBeNull();
      expect(outcome.usage?.completionTokens).toBe(4);
      expect(outcome.instance).not.toBeNull();
    },
  );

  test.each(['http', 'sagemaker'] as const)(
    'GIVEN the %s transport THEN it read the decision time and reason headers',
    (name) => {
      const outcome = outcomes[name]!;
      expect(outcome.decisionMicros).toBeGreaterThanOrEqual(0);
      expect(typeof outcome.decisionReason).toBe('string');
    },
  );

  test('THEN both outcomes carry the same set of facts', () => {
    const keys = (o: StreamOutcome) =>
      Object.keys(o)
        .filter((k) => (o as unknown as Record<string, unknown>)[k] !== undefined)
        .sort();
    expect(keys(outcomes.sagemaker!)).toEqual(keys(outcomes.http!));
  });
});
