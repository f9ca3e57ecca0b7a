import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InvokeEndpointCommand, SageMakerRuntimeClient } from '@aws-sdk/client-sagemaker-runtime';
import OpenAI from 'openai';
import { request } from 'undici';
import { KeyFileError, KeyRing, parseKeyFile, presentedKey, readKeyEntries } from '../../../router/src/common/api-keys';
import { RouterConfigError } from '../../../router/src/config';
import { createRouterLogger, startRouter } from '../../../router/src/server';
import { chatBody, get, post, startFixture, type Fixture } from '../server/helpers/router-fixture';

const KEY_A = 'sk-router-alpha-0123456789';
const KEY_B = 'sk-router-bravo-9876543210';
const ENGINE_KEY = 'sk-engine-key-for-vllm';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'router-keys-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function keyFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('when a key file is parsed', () => {
  it('keeps one key per line, trimmed, and skips blank lines and # comments', () => {
    // GIVEN a file with a comment, a blank line, CRLF endings and surrounding spaces
    const text = '# current keys\r\n  sk-one  \r\n\r\nsk-two\n#sk-old\n';
    // WHEN parsed / THEN only the two keys remain
    expect(parseKeyFile(text)).toEqual(['sk-one', 'sk-two']);
  });

  it('reads the key from Authorization: Bearer or from x-prefix-router-api-key, the explicit header first', () => {
    expect(presentedKey({ authorization: 'Bearer sk-one' })).toBe('sk-one');
    expect(presentedKey({ authorization: 'bearer   sk-one ' })).toBe('sk-one');
    expect(presentedKey({ authorization: 'AWS4-HMAC-SHA256 Credential=x', 'x-prefix-router-api-key': 'sk-two' })).toBe(
      'sk-two',
    );
    expect(presentedKey({ authorization: 'Basic c2stb25lOg==' })).toBeUndefined();
    expect(presentedKey({})).toBeUndefined();
  });

  it('matches only a whole accepted key (no prefix, no empty key)', () => {
    const ring = new KeyRing(keyFile('ring', `${KEY_A}\n${KEY_B}\n`));
    expect(ring.match(KEY_A)).toBe(0);
    expect(ring.match(KEY_B)).toBe(1);
    expect(ring.match(KEY_A.slice(0, -1))).toBe(-1);
    expect(ring.match(`${KEY_A}x`)).toBe(-1);
    expect(ring.match('')).toBe(-1);
    expect(ring.match(undefined)).toBe(-1);
  });
});

describe('when an API key file gives keys a priority class', () => {
  it('reads `KEY priority=N` as the key and its priority, at the range\u2019s bounds too; other lines have none', () => {
    const path = keyFile(
      'classes',
      `${KEY_A} priority=2\n${KEY_B}\nsk-min\tpriority=-1000000\nsk-max priority=1000000\n`,
    );
    expect(readKeyEntries(path)).toEqual([
      { key: KEY_A, priority: 2 },
      { key: KEY_B },
      { key: 'sk-min', priority: -1_000_000 },
      { key: 'sk-max', priority: 1_000_000 },
    ]);
    const ring = new KeyRing(path, undefined, true);
    expect([ring.match(KEY_A), ring.priorityAt(ring.match(KEY_A))]).toEqual([0, 2]);
    expect(ring.priorityAt(ring.match(KEY_B))).toBeUndefined();
    // The line as written is not a key: the suffix is not part of it.
    expect(ring.match(`${KEY_A} priority=2`)).toBe(-1);
  });

  it('counts and lists every bad priority by file:line, never showing a key', () => {
    const path = keyFile(
      'bad-classes',
      `# classes\n${KEY_A} priority=high\n${KEY_B} priority=1000001\nsk-ok priority=1\nsk-x priority=\n`,
    );
    let error: unknown;
    try {
      readKeyEntries(path);
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(KeyFileError);
    const message = (error as Error).message;
    expect(message).toContain(`${path} has 3 bad priorities: `);
    expect(message).toContain(`${path}:2: priority must be an integer in -1000000..1000000 (got "high")`);
    expect(message).toContain(`${path}:3: priority must be an integer in -1000000..1000000 (got "1000001")`);
    expect(message).toContain(`${path}:5: priority must be an integer in -1000000..1000000 (got "")`);
    for (const key of [KEY_A, KEY_B, 'sk-ok', 'sk-x']) expect(message).not.toContain(key);
    expect(() => new KeyRing(path, undefined, true)).toThrow(KeyFileError);
  });

  it('refuses to start on a bad priority, naming the option and the line', async () => {
    const path = keyFile('bad-start', `${KEY_A} priority=1.5\n`);
    await expect(startRouter({ backends: ['http://127.0.0.1:9'], port: 0, apiKeyFile: path })).rejects.toThrow(
      `${path}:1: priority must be an integer`,
    );
  });

  it('keeps the keys in use when a re-read finds a bad priority, and says so', async () => {
    const path = keyFile('reread', `${KEY_A} priority=1\n`);
    const errors: KeyFileError[] = [];
    const ring = new KeyRing(path, (e) => errors.push(e), true);
    writeFileSync(path, `${KEY_B} priority=x\n`);
    await expect(ring.reload()).resolves.toBe(false);
    expect(errors.map((e) => e.message)).toEqual([expect.stringContaining(`${path}:1: priority must be`)]);
    expect([ring.match(KEY_A), ring.priorityAt(0), ring.match(KEY_B)]).toEqual([0, 1, -1]);
  });

  it('reads other key files verbatim: a line is a key, whatever it ends in', () => {
    const ring = new KeyRing(keyFile('admin', `${KEY_A} priority=2\n`));
    expect(ring.match(`${KEY_A} priority=2`)).toBe(0);
    expect(ring.priorityAt(0)).toBeUndefined();
  });
});

describe('when a caller\u2019s key gives its requests a priority class', () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await startFixture({
      backends: 1,
      router: { apiKeyFile: keyFile('live-classes', `${KEY_A} priority=3\n${KEY_B}\n`), flowControl: 'off' },
    });
  });
  afterAll(() => fx.close());

  const sent = async (key: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) => {
    const res = await post(`${fx.router.url}/v1/chat/completions`, chatBody('classes', extra), {
      'content-type': 'application/json',
      authorization: `Bearer ${key}`,
      ...headers,
    });
    expect(res.status).toBe(200);
    return (JSON.parse(fx.backends[0].requests.at(-1)!.body.toString('utf8')) as { priority?: number }).priority;
  };

  it('GIVEN a key with priority=3 THEN the engine sees priority 3; a key without one adds nothing', async () => {
    expect(await sent(KEY_A)).toBe(3);
    expect(await sent(KEY_B)).toBeUndefined();
  });

  it('GIVEN the x-prefix-router-priority header THEN it wins over the key; a body priority wins over both', async () => {
    expect(await sent(KEY_A, {}, { 'x-prefix-router-priority': '1' })).toBe(1);
    expect(await sent(KEY_A, { priority: 0 }, { 'x-prefix-router-priority': '1' })).toBe(0);
  });
});

describe('when the router runs with --api-key-file', () => {
  let fx: Fixture;
  let keys: string;

  beforeEach(async () => {
    keys = keyFile('keys', `${KEY_A}\n`);
    fx = await startFixture({ backends: 1, router: { apiKeyFile: keys } });
  });
  afterEach(() => fx.close());

  it('refuses a request without a key with 401 before the body is read, parsed, routed or recorded', async () => {
    // GIVEN a client that sends headers announcing a body it never sends
    const socket = connect(fx.router.port, '127.0.0.1');
    const answer = await new Promise<string>((resolve, reject) => {
      let text = '';
      socket.on('data', (d) => (text += d.toString('latin1')));
      socket.on('end', () => resolve(text));
      socket.on('close', () => resolve(text));
      socket.on('error', reject);
      socket.write(
        'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{"mod',
      );
    });
    // THEN the router answers 401 at once, with an OpenAI-style body and a challenge, and closes the connection
    expect(answer).toMatch(/^HTTP\/1\.1 401 /);
    expect(answer.toLowerCase()).toContain('www-authenticate: bearer');
    expect(answer.toLowerCase()).toContain('connection: close');
    expect(answer).toContain('"code":"unauthorized"');
    // AND nothing reached the engine, no decision was taken
    expect(fx.backends[0].requests).toHaveLength(0);
    expect(fx.router.backends[0].decisions).toBe(0);
  });

  it.each([
    ['no Authorization', {}],
    ['a wrong key', { authorization: 'Bearer sk-wrong' }],
    ['a key prefix', { authorization: `Bearer ${KEY_A.slice(0, 10)}` }],
    ['Basic credentials', { authorization: `Basic ${Buffer.from(`${KEY_A}:`).toString('base64')}` }],
  ])('answers 401 unauthorized to %s', async (_what, headers: Record<string, string>) => {
    const res = await post(`${fx.router.url}/v1/chat/completions`, chatBody('hello'), {
      'content-type': 'application/json',
      ...headers,
    });
    expect(res.status).toBe(401);
    expect(res.json()).toEqual({
      error: { message: expect.any(String), type: 'invalid_request_error', code: 'unauthorized' },
    });
    expect(fx.backends[0].requests).toHaveLength(0);
  });

  it.each(['/metrics', '/router/v1/instance-state', '/v1/models'])('protects GET %s too', async (path) => {
    expect((await get(`${fx.router.url}${path}`)).status).toBe(401);
  });

  it('keeps /ping and /health open for load balancer and SageMaker health checks', async () => {
    expect((await get(`${fx.router.url}/ping`)).status).toBe(200);
    expect((await get(`${fx.router.url}/health`)).status).toBe(200);
  });

  it('accepts the key from the official openai client and does not forward it to the engine', async () => {
    // GIVEN the openai SDK configured with the router key
    const client = new OpenAI({ baseURL: `${fx.router.url}/v1`, apiKey: KEY_A, maxRetries: 0 });
    // WHEN it sends a chat completion
    const completion = await client.chat.completions.create({
      model: 'fake-model',
      messages: [{ role: 'user', content: 'hi' }],
    });
    // THEN it is served, and the engine never saw the client's key
    expect(completion.choices.length).toBeGreaterThan(0);
    const seen = fx.backends[0].requests.at(-1)!;
    expect(seen.headers.authorization).toBeUndefined();
    expect(JSON.stringify(seen.headers)).not.toContain(KEY_A);
  });

  it('rotates keys without a restart: a key added is accepted, a key removed is refused', async () => {
    // GIVEN KEY_A works
    const withKey = (key: string) =>
      post(`${fx.router.url}/v1/chat/completions`, chatBody('rotate'), {
        'content-type': 'application/json',
        authorization: `Bearer ${key}`,
      });
    expect((await withKey(KEY_A)).status).toBe(200);
    expect((await withKey(KEY_B)).status).toBe(401);
    // WHEN KEY_B is added (both valid during the rotation), then KEY_A removed, each followed by a reload (SIGHUP)
    writeFileSync(keys, `${KEY_A}\n${KEY_B}\n`);
    await fx.router.reloadKeys();
    expect((await withKey(KEY_A)).status).toBe(200);
    expect((await withKey(KEY_B)).status).toBe(200);
    writeFileSync(keys, `${KEY_B}\n`);
    await fx.router.reloadKeys();
    // THEN only KEY_B is accepted
    expect((await withKey(KEY_A)).status).toBe(401);
    expect((await withKey(KEY_B)).status).toBe(200);
  });

  it('picks up a changed key file by itself (polled), and keeps the old keys when the new file is empty', async () => {
    writeFileSync(keys, `# nothing yet\n`);
    await fx.router.reloadKeys();
    const withKey = (key: string) =>
      post(`${fx.router.url}/v1/chat/completions`, chatBody('poll'), {
        'content-type': 'application/json',
        authorization: `Bearer ${key}`,
      });
    expect((await withKey(KEY_A)).status).toBe(200);
    writeFileSync(keys, `${KEY_B}\n`);
    let accepted = false;
    const deadline = Date.now() + 5000;
    while (!accepted && Date.now() < deadline) {
      accepted = (await withKey(KEY_B)).status === 200;
      if (!accepted) await new Promise((r) => setTimeout(r, 100));
    }
    expect(accepted).toBe(true);
  });

  it('takes the key from x-prefix-router-api-key on the SageMaker runtime-API paths, where Authorization is SigV4', async () => {
    // GIVEN the real AWS SDK client with a middleware adding the router key
    const client = new SageMakerRuntimeClient({
      endpoint: fx.router.url,
      region: 'us-east-1',
      credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'not-a-secret' },
      maxAttempts: 1,
    });
    client.middlewareStack.add(
      (next) => async (args) => {
        (args.request as { headers: Record<string, string> }).headers['x-prefix-router-api-key'] = KEY_A;
        return next(args);
      },
      { step: 'build', name: 'routerApiKey' },
    );
    // WHEN it invokes
    const out = await client.send(
      new InvokeEndpointCommand({ EndpointName: 'e', ContentType: 'application/json', Body: chatBody('sdk') }),
    );
    // THEN it is served and the engine saw neither the router key nor the signature
    expect(out.$metadata.httpStatusCode).toBe(200);
    const seen = fx.backends[0].requests.at(-1)!;
    expect(seen.headers['x-prefix-router-api-key']).toBeUndefined();
    expect(seen.headers.authorization).toBeUndefined();
    client.destroy();
  });
});

describe('when the router runs with --upstream-api-key-file', () => {
  let fx: Fixture;

  beforeAll(async () => {
    fx = await startFixture({
      backends: 1,
      router: {
        apiKeyFile: keyFile('client-keys', `${KEY_A}\n`),
        upstreamApiKeyFile: keyFile('engine-key', `${ENGINE_KEY}\n`),
      },
    });
  });
  afterAll(() => fx.close());

  it.each([
    ['/v1/chat/completions', chatBody('x')],
    ['/v1/completions', JSON.stringify({ model: 'fake-model', prompt: 'x' })],
    ['/invocations', chatBody('x')],
    ['/endpoints/e/invocations', chatBody('x')],
    ['/endpoints/e/openai/v1/chat/completions', chatBody('x')],
  ])('sends the engine key on POST %s in place of the client key', async (path, body) => {
    const res = await post(`${fx.router.url}${path}`, body, {
      'content-type': 'application/json',
      'x-prefix-router-api-key': KEY_A,
    });
    expect(res.status).toBe(200);
    expect(fx.backends[0].requests.at(-1)!.headers.authorization).toBe(`Bearer ${ENGINE_KEY}`);
  });

  it('sends it on GET /v1/models', async () => {
    // GIVEN a bare engine that records the Authorization of GET /v1/models
    const seen: Array<string | undefined> = [];
    const engine = createServer((req, res) => {
      seen.push(req.headers.authorization);
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}');
    });
    await new Promise<void>((r) => engine.listen(0, '127.0.0.1', r));
    const router = await startRouter(
      {
        backends: [`http://127.0.0.1:${(engine.address() as AddressInfo).port}`],
        port: 0,
        healthCheck: { intervalMs: 0 },
        upstreamApiKeyFile: keyFile('engine-key-2', `${ENGINE_KEY}\n`),
      },
      { logger: createRouterLogger('silent') },
    );
    try {
      // WHEN a client lists models with its own (vLLM-bound) key
      const res = await request(`${router.url}/v1/models`, { headers: { authorization: 'Bearer sk-client' } });
      await res.body.text();
      // THEN the engine got the configured engine key instead, on the router's own read of the model list at start
      // (the router answers /v1/models from the lists it read, and takes the context length from them)
      expect(res.statusCode).toBe(200);
      expect(seen).toEqual([`Bearer ${ENGINE_KEY}`]);
    } finally {
      await router.close();
      await new Promise((r) => engine.close(r));
    }
  });
});

describe('when no key file is set (existing deployments)', () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await startFixture({ backends: 1 });
  });
  afterAll(() => fx.close());

  it("passes the client's Authorization to the engine unchanged, so vLLM's own --api-key keeps working on OpenAI paths", async () => {
    const res = await post(`${fx.router.url}/v1/chat/completions`, chatBody('x'), {
      'content-type': 'application/json',
      authorization: 'Bearer sk-for-vllm',
    });
    expect(res.status).toBe(200);
    expect(fx.backends[0].requests.at(-1)!.headers.authorization).toBe('Bearer sk-for-vllm');
  });
});

describe('when the SageMaker container contract is open (--open-container-paths on)', () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await startFixture({
      backends: 1,
      router: { apiKeyFile: keyFile('sm-keys', `${KEY_A}\n`), openContainerPaths: 'on' },
    });
  });
  afterAll(() => fx.close());

  it('serves POST /invocations without a key, as SageMaker calls it', async () => {
    expect((await post(`${fx.router.url}/invocations`, chatBody('x'))).status).toBe(200);
  });

  it.each(['/v1/chat/completions', '/endpoints/e/invocations'])('still requires the key on POST %s', async (path) => {
    expect((await post(`${fx.router.url}${path}`, chatBody('x'))).status).toBe(401);
  });
});

describe('when a key file option is wrong', () => {
  it.each([
    [
      'a missing file',
      { apiKeyFile: '/nonexistent/keys' },
      /apiKeyFile must name a readable file.*cannot be read \(ENOENT\)/,
    ],
    ['a file with no key', { apiKeyFile: 'EMPTY' }, /apiKeyFile must name a readable file.*holds no key/],
    ['an admin key without an admin port', { adminApiKeyFile: 'A' }, /adminApiKeyFile needs adminPort/],
  ])(
    'refuses to start with %s, naming the option but never a key',
    async (_what, options: Record<string, string>, message) => {
      const resolved = Object.fromEntries(
        Object.entries(options).map(([k, v]) => [
          k,
          v === 'EMPTY' ? keyFile('empty', '# none\n') : v === 'A' ? keyFile('admin-a', `${KEY_A}\n`) : v,
        ]),
      );
      const start = startRouter({
        backends: ['http://127.0.0.1:1'],
        port: 0,
        healthCheck: { intervalMs: 0 },
        ...resolved,
      });
      await expect(start).rejects.toThrow(RouterConfigError);
      await expect(start).rejects.toThrow(message);
      await start.catch((err: Error) => expect(err.message).not.toContain(KEY_A));
    },
  );
});
