import { connect } from 'node:net';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { chatBody, get, post, startFixture, type Fixture } from './helpers/router-fixture';

/** Sends raw bytes on a fresh TCP connection and returns everything the server wrote until it closed. */
function rawExchange(port: number, bytes: string, endAfterWrite = false): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    let data = '';
    socket.on('data', (d) => (data += d.toString()));
    socket.on('close', () => resolve(data));
    socket.on('error', reject);
    socket.write(bytes);
    if (endAfterWrite) socket.end();
  });
}

describe('when clients send bad input', () => {
  let fx: Fixture;
  const port = () => fx.router.port;

  beforeAll(async () => {
    fx = await startFixture({
      backends: 1,
      router: { limits: { maxBodyBytes: 4096, bodyTimeoutMs: 300, headersTimeoutMs: 300 } },
    });
  });
  afterAll(() => fx.close());
  afterEach(() => {
    // Bad input never reaches a backend.
    expect(fx.backends[0].requests).toHaveLength(0);
  });

  it.each<[string, string, string, number, string]>([
    ['malformed JSON', '/v1/chat/completions', '{"messages": [', 400, 'invalid_json'],
    ['a JSON string body', '/v1/chat/completions', '"hello"', 400, 'invalid_json'],
    ['messages of the wrong type', '/v1/chat/completions', '{"messages": {"role": "user"}}', 400, 'invalid_field'],
    ['missing messages', '/v1/chat/completions', '{"model": "m"}', 400, 'missing_field'],
    ['missing prompt', '/v1/completions', '{"model": "m"}', 400, 'missing_field'],
    ['a numeric prompt', '/v1/completions', '{"prompt": 3}', 400, 'invalid_field'],
    [
      'stream as a string',
      '/v1/chat/completions',
      '{"messages": [{"role":"user","content":"x"}], "stream": "true"}',
      400,
      'invalid_field',
    ],
    ['malformed JSON on /invocations', '/invocations', '{"prompt": ', 400, 'invalid_json'],
  ])('GIVEN %s THEN 4xx with an OpenAI-style error', async (_label, path, body, status, code) => {
    const res = await post(`${fx.router.url}${path}`, body);
    expect(res.status).toBe(status);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.json()).toEqual({ error: { message: expect.any(String), type: 'invalid_request_error', code } });
  });

  it('GIVEN an invalid X-Amzn-SageMaker-Prefix-Aware-Id THEN 400 invalid_prefix_aware_id', async () => {
    const res = await post(`${fx.router.url}/v1/chat/completions`, chatBody('x'), {
      'content-type': 'application/json',
      'x-amzn-sagemaker-prefix-aware-id': 'q'.repeat(65),
    });
    expect(res.status).toBe(400);
    expect(res.json()).toMatchObject({ error: { code: 'invalid_prefix_aware_id' } });
  });

  it('GIVEN a body of exactly maxBodyBytes THEN it is accepted (not 413)', async () => {
    const base = chatBody('');
    const body = chatBody('a'.repeat(4096 - Buffer.byteLength(base)));
    expect(Buffer.byteLength(body)).toBe(4096);
    const res = await post(`${fx.router.url}/v1/chat/completions`, body);
    expect(res.status).toBe(200);
    fx.backends[0].requests.length = 0;
  });

  it('GIVEN a Content-Length of maxBodyBytes + 1 THEN 413 before the body is read', async () => {
    const body = chatBody('a'.repeat(4097 - Buffer.byteLength(chatBody(''))));
    expect(Buffer.byteLength(body)).toBe(4097);
    const res = await post(`${fx.router.url}/v1/chat/completions`, body);
    expect(res.status).toBe(413);
    expect(res.json()).toMatchObject({ error: { code: 'payload_too_large', type: 'invalid_request_error' } });
  });

  it('GIVEN a chunked body that grows past the limit THEN 413', async () => {
    async function* chunks() {
      for (let i = 0; i < 10; i++) yield Buffer.alloc(1024, 0x61);
    }
    const res = await request(`${fx.router.url}/v1/chat/completions`, {
      method: 'POST',
      body: Readable.from(chunks()),
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode).toBe(413);
    expect(JSON.parse(await res.body.text())).toMatchObject({ error: { code: 'payload_too_large' } });
  });

  it('GIVEN an unknown path THEN 404 not_found', async () => {
    const res = await post(`${fx.router.url}/v1/embeddings`, '{}');
    expect(res.status).toBe(404);
    expect(res.json()).toEqual({
      error: { message: 'no route for POST /v1/embeddings', type: 'invalid_request_error', code: 'not_found' },
    });
  });

  it('GIVEN a wrong method THEN 405 with Allow', async () => {
    const res = await get(`${fx.router.url}/v1/chat/completions`);
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
    expect(JSON.parse(res.text)).toMatchObject({ error: { code: 'method_not_allowed' } });
  });

  it('GIVEN a runtime-API path error THEN the body also carries the AWS fields and x-amzn-errortype', async () => {
    const res = await post(`${fx.router.url}/endpoints/ep/invocations`, '{"messages": 1}');
    expect(res.status).toBe(400);
    expect(res.headers['x-amzn-errortype']).toBe('ValidationError');
    expect(res.json()).toMatchObject({
      message: 'messages must be a non-empty array',
      error: { code: 'invalid_field' },
    });
  });

  it('GIVEN a client that stops sending its body THEN 408 request_timeout and the connection closes', async () => {
    const answer = await rawExchange(
      port(),
      'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"messages":',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
    expect(answer).toContain('"code":"request_timeout"');
  });

  it('GIVEN a client that never finishes its headers THEN the connection is closed with 408', async () => {
    const answer = await rawExchange(port(), 'POST /v1/chat/completions HTTP/1.1\r\nHost: x\r\n');
    expect(answer).toMatch(/^HTTP\/1\.1 408/);
  });

  it('GIVEN garbage instead of HTTP THEN 400 and the router keeps serving', async () => {
    const answer = await rawExchange(port(), 'NOT HTTP AT ALL\r\n\r\n', true);
    expect(answer).toMatch(/^HTTP\/1\.1 400/);
    expect((await get(`${fx.router.url}/ping`)).status).toBe(200);
  });

  it('GIVEN the errors above THEN the rejected counter has them by code', async () => {
    const metrics = (await get(`${fx.router.url}/metrics`)).text;
    expect(metrics).toMatch(/prefix_router_rejected_requests_total\{code="invalid_json"\} [1-9]/);
    expect(metrics).toMatch(/prefix_router_rejected_requests_total\{code="payload_too_large"\} 2/);
  });
});
