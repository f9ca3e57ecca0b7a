import { request as httpRequest } from 'node:http';
import { routerOptionProblems } from '../../../router/src/config/router-config';
import { allowedHostProblem, hostAllowed, hostOf } from '../../../router/src/protocol/host-allowlist';
import { chatBody, startFixture, type Fixture } from '../server/helpers/router-fixture';

/** One request with exactly the Host header given (undefined: none at all, as an HTTP/1.0 client may send). */
function send(
  url: string,
  method: string,
  path: string,
  host: string | undefined,
  body?: string,
): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> =
      body === undefined
        ? {}
        : { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)) };
    if (host !== undefined) headers.host = host;
    const req = httpRequest(
      {
        hostname,
        port: Number(port),
        method,
        path,
        headers,
        setHost: host === undefined ? false : undefined,
        agent: false,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe('when a Host header is matched against the allowlist', () => {
  it.each([
    ['router.internal', ['router.internal'], true],
    ['ROUTER.internal:8080', ['router.internal'], true],
    ['router.internal.', ['router.internal'], true],
    ['evil.example', ['router.internal'], false],
    ['router.internal.evil.example', ['router.internal'], false],
    ['llm.svc.cluster.local:80', ['.svc.cluster.local'], true],
    ['svc.cluster.local', ['.svc.cluster.local'], true],
    ['xsvc.cluster.local', ['.svc.cluster.local'], false],
    ['[::1]:8080', ['[::1]'], true],
    ['[::2]:8080', ['[::1]'], false],
    ['127.0.0.1:8080', ['127.0.0.1'], true],
    ['', ['router.internal'], false],
  ])('GIVEN Host %j and allowlist %j THEN allowed is %s', (host, allowed, expected) => {
    expect(hostAllowed(host, allowed)).toBe(expected);
  });

  it('GIVEN no Host header THEN it is not allowed', () => {
    expect(hostAllowed(undefined, ['router.internal'])).toBe(false);
  });

  it('GIVEN a Host with a port THEN its host part is the name without the port', () => {
    expect(hostOf('Example.COM:443')).toBe('example.com');
    expect(hostOf('[FE80::1]:443')).toBe('[fe80::1]');
  });
});

describe('when --allowed-hosts is configured', () => {
  it.each([['http://router.internal'], ['router.internal:8080'], ['*.example.com'], ['user@host'], ['']])(
    'GIVEN the entry %j THEN it is refused with the reason',
    (entry) => {
      expect(allowedHostProblem(entry)).toBeDefined();
      expect(routerOptionProblems({ backends: ['http://127.0.0.1:1'], allowedHosts: [entry] })).toEqual([
        expect.objectContaining({ option: 'allowedHosts' }),
      ]);
    },
  );

  it('GIVEN an empty list THEN it is refused (an allowlist that refuses everything is a mistake)', () => {
    expect(routerOptionProblems({ backends: ['http://127.0.0.1:1'], allowedHosts: [] })).toEqual([
      expect.objectContaining({ option: 'allowedHosts' }),
    ]);
  });
});

describe('when the router runs with --allowed-hosts', () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await startFixture({ backends: 1, router: { allowedHosts: ['router.internal', '127.0.0.1'], adminPort: 0 } });
  });
  afterAll(() => fx.close());

  it('GIVEN a DNS-rebinding page (its own name in Host) THEN inference is refused with 421 and an OpenAI-style body, never reaching the engine', async () => {
    const before = fx.backends[0].requests.length;
    const answer = await send(fx.router.url, 'POST', '/v1/chat/completions', 'attacker.example', chatBody('secret'));
    expect(answer.status).toBe(421);
    expect(JSON.parse(answer.body)).toMatchObject({
      error: { code: 'misdirected_request', type: 'invalid_request_error' },
    });
    expect(answer.body).not.toContain('attacker.example');
    expect(fx.backends[0].requests.length).toBe(before);
  });

  it('GIVEN the rebinding page asks the admin listener THEN /metrics is refused too', async () => {
    expect((await send(fx.router.adminUrl!, 'GET', '/metrics', 'attacker.example')).status).toBe(421);
    expect((await send(fx.router.adminUrl!, 'GET', '/metrics', '127.0.0.1')).status).toBe(200);
  });

  it('GIVEN a listed name with any port THEN the request is served', async () => {
    expect(
      (await send(fx.router.url, 'POST', '/v1/chat/completions', 'router.internal:9999', chatBody('x'))).status,
    ).toBe(200);
  });

  it('GIVEN an HTTP/1.1 request with no Host header at all THEN it is refused with 400, as RFC 9112 §3.2 requires', async () => {
    expect((await send(fx.router.url, 'GET', '/v1/models', undefined)).status).toBe(400);
  });

  it.each(['/ping', '/health'])(
    'GIVEN a health probe by address to %s THEN it is answered whatever the Host',
    async (path) => {
      expect((await send(fx.router.url, 'GET', path, '10.0.0.7:8080')).status).toBe(200);
    },
  );
});
