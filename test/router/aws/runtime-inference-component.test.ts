import { PrefixAwareLlmClient } from '../../../router/src/aws/runtime-client';
import { LlmModelError, LlmValidationError } from '../../../router/src/aws/runtime-errors';
import { startEmulator, type RunningEmulator } from '../../../router/src/emulator/emulator-server';
import { startRouter, type RunningRouter } from '../../../router/src/server';
import { useLocalRuntimeEnv } from './helpers/local-endpoint';

/**
 * InferenceComponentName through the real SDK against the router's runtime API: SageMaker sends a call only to
 * instances holding the component it names, and the local router does the same with the engines listing it (an
 * adapter served with --lora-modules). Engine 1 serves adapter sql, engine 2 adapter support.
 */
const SYSTEM = 'You answer questions about the ACME catalogue. '.repeat(40);

function chat(model: string, question: string) {
  return {
    model,
    max_tokens: 4,
    messages: [
      { role: 'system' as const, content: SYSTEM },
      { role: 'user' as const, content: question },
    ],
  };
}

describe('when the runtime client names an inference component on the local runtime API', () => {
  let engines: RunningEmulator[];
  let router: RunningRouter;
  let restoreEnv: () => void;
  let client: PrefixAwareLlmClient;

  beforeAll(async () => {
    engines = [
      await startEmulator({
        profile: 'tiny',
        timeScale: 20,
        modelName: 'base',
        loraModules: [{ name: 'sql', path: '/adapters/sql' }],
      }),
      await startEmulator({
        profile: 'tiny',
        timeScale: 20,
        modelName: 'base',
        loraModules: [{ name: 'support', path: '/adapters/support' }],
      }),
    ];
    router = await startRouter({
      backends: engines.map((e) => e.url),
      port: 0,
      logLevel: 'silent',
      healthCheck: { intervalMs: 0 },
      policy: { name: 'sagemaker-prefix-aware', prefixLength: 1024 },
      routingHeaders: 'all',
    });
    restoreEnv = useLocalRuntimeEnv(router.url);
    client = new PrefixAwareLlmClient({
      endpointName: 'adapters-endpoint',
      maxAttempts: 1,
      inferenceComponentName: 'sql',
    });
  }, 60_000);
  afterAll(async () => {
    client.destroy();
    restoreEnv();
    await router.close();
    await Promise.all(engines.map((e) => e.close()));
  });

  it('GIVEN the client-wide component THEN every invoke reaches the one engine serving it, and the adapter answers', async () => {
    for (let i = 0; i < 4; i++) {
      const answer = await client.invoke(chat('sql', `question ${i}`));
      expect(answer.headers['x-prefix-router-instance']).toBe(router.backends[0].name);
      expect((answer.body as { model: string }).model).toBe('sql');
    }
  });

  it('GIVEN a per-call component on a stream THEN it overrides the client-wide one', async () => {
    const stream = await client.stream(chat('support', 'streamed'), { inferenceComponentName: 'support' });
    const events = [];
    for await (const event of stream) events.push(event);
    expect(stream.headers['x-prefix-router-instance']).toBe(router.backends[1].name);
    expect(events.some((e) => e.type === 'delta')).toBe(true);
  });

  it('GIVEN a component no engine serves THEN ModelError with the container status 404 SageMaker relays', async () => {
    const error = await client.invoke(chat('sql', 'x'), { inferenceComponentName: 'chat' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LlmModelError);
    expect((error as LlmModelError).originalStatusCode).toBe(404);
    expect((error as LlmModelError).originalMessage).toContain('The model `chat` does not exist.');
  });

  it.each(['bad_name', '-leading', 'a'.repeat(64)])(
    'GIVEN the invalid component name %s THEN ValidationError',
    async (name) => {
      await expect(client.invoke(chat('sql', 'x'), { inferenceComponentName: name })).rejects.toBeInstanceOf(
        LlmValidationError,
      );
    },
  );

  it('GIVEN a 63-character name THEN it is valid (and unknown here: ModelError, not ValidationError)', async () => {
    await expect(client.invoke(chat('sql', 'x'), { inferenceComponentName: 'a'.repeat(63) })).rejects.toBeInstanceOf(
      LlmModelError,
    );
  });
});
