import OpenAI from 'openai';
import { INSTANCE_HEADER } from '../../../router/src/server';
import { get, startFixture, type Fixture } from './helpers/router-fixture';

describe('when the official openai client talks to the router', () => {
  let fx: Fixture;
  let client: OpenAI;

  beforeAll(async () => {
    fx = await startFixture({ backends: 3 });
    client = new OpenAI({ baseURL: `${fx.router.url}/v1`, apiKey: 'test-key', maxRetries: 0 });
  });
  afterAll(() => fx.close());

  it('GIVEN a non-streamed chat completion THEN the backend answer comes back with the chosen instance header', async () => {
    const { data, response } = await client.chat.completions
      .create({ model: 'fake-model', messages: [{ role: 'user', content: 'hello there' }] })
      .withResponse();
    const instance = response.headers.get(INSTANCE_HEADER);
    const backend = fx.backends[fx.router.backends.findIndex((b) => b.name === instance)];
    expect(backend).toBeDefined();
    expect(data.choices[0].message.content).toBe(`hello from ${backend.name}`);
    expect(response.headers.get('x-prefix-router-decision')).toBe('prefix-affinity');
    expect(Number(response.headers.get('x-prefix-router-decision-us'))).toBeGreaterThan(0);
  });

  it('GIVEN a streamed chat completion THEN every chunk arrives in order', async () => {
    const stream = await client.chat.completions.create({
      model: 'fake-model',
      messages: [{ role: 'user', content: 'stream please' }],
      stream: true,
    });
    const parts: string[] = [];
    for await (const chunk of stream) parts.push(chunk.choices[0]?.delta?.content ?? '');
    expect(parts.join('')).toMatch(/^hello from b\d 1 2$/);
  });

  it('GIVEN completions, streamed and not THEN both work', async () => {
    const plain = await client.completions.create({ model: 'fake-model', prompt: 'Once upon a time' });
    expect(plain.choices[0].text).toMatch(/^hello from b\d$/);
    const stream = await client.completions.create({ model: 'fake-model', prompt: 'Once upon a time', stream: true });
    const parts: string[] = [];
    for await (const chunk of stream) parts.push(chunk.choices[0]?.text ?? '');
    expect(parts.join('')).toMatch(/^hello from b\d 1 2$/);
  });

  it('GIVEN the same long system prompt twenty times THEN every request lands on one instance, and the backend gets the exact body', async () => {
    const system = 'You are a support agent for ACME. '.repeat(300); // longer than the 8192-character default prefix
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const { response } = await client.chat.completions
        .create({
          model: 'fake-model',
          messages: [
            { role: 'system', content: system },
            { role: 'user', content: `question ${i}` },
          ],
        })
        .withResponse();
      seen.add(response.headers.get(INSTANCE_HEADER)!);
    }
    expect(seen.size).toBe(1);
    const backend = fx.backends[fx.router.backends.findIndex((b) => b.name === [...seen][0])];
    const last = JSON.parse(backend.requests[backend.requests.length - 1].body.toString()) as {
      messages: Array<{ content: string }>;
    };
    expect(last.messages[1].content).toBe('question 19');
    expect(backend.requests[backend.requests.length - 1].headers.authorization).toBe('Bearer test-key');
  });

  it('GIVEN many different prompts THEN all instances get traffic', async () => {
    const seen = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const { response } = await client.chat.completions
        .create({ model: 'fake-model', messages: [{ role: 'user', content: `distinct conversation ${i}` }] })
        .withResponse();
      seen.add(response.headers.get(INSTANCE_HEADER)!);
    }
    expect(seen.size).toBe(3);
  });

  it('GIVEN the SageMaker OpenAI-compatible path THEN the client works with it as base URL', async () => {
    const sm = new OpenAI({ baseURL: `${fx.router.url}/endpoints/my-endpoint/openai/v1`, apiKey: 'x', maxRetries: 0 });
    const res = await sm.chat.completions.create({ model: 'fake-model', messages: [{ role: 'user', content: 'hi' }] });
    expect(res.choices[0].message.content).toMatch(/^hello from b\d$/);
  });

  it('GIVEN GET /v1/models THEN the backend list is returned', async () => {
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['fake-model']);
  });

  it('GIVEN GET /ping THEN it is 200 while a backend is healthy', async () => {
    const res = await get(`${fx.router.url}/ping`);
    expect(res.status).toBe(200);
    expect(JSON.parse(res.text)).toMatchObject({ status: 'healthy', healthyBackends: 3 });
  });

  it('GIVEN a bad request THEN the client raises a 400 with our error code', async () => {
    await expect(client.chat.completions.create({ model: 'fake-model', messages: [] })).rejects.toMatchObject({
      status: 400,
      code: 'invalid_field',
    });
  });
});
