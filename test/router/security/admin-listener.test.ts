import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { chatBody, get, post, startFixture, type Fixture } from '../server/helpers/router-fixture';

const ADMIN_KEY = 'sk-admin-scraper-key';
const CLIENT_KEY = 'sk-client-key';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'router-admin-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('when the router runs with --admin-port', () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await startFixture({ backends: 1, router: { adminPort: 0, publishStateMs: 10 } });
  });
  afterAll(() => fx.close());

  it('listens for admin on loopback by default', () => {
    expect(fx.router.adminUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(fx.router.adminUrl).not.toBe(fx.router.url);
  });

  it.each(['/metrics', '/router/v1/instance-state'])('serves GET %s only on the admin listener', async (path) => {
    expect((await get(`${fx.router.url}${path}`)).status).toBe(404);
    expect((await get(`${fx.router.adminUrl}${path}`)).status).toBe(200);
  });

  it('does not serve inference on the admin listener', async () => {
    expect((await post(`${fx.router.adminUrl}/v1/chat/completions`, chatBody('x'))).status).toBe(404);
    expect((await post(`${fx.router.url}/v1/chat/completions`, chatBody('x'))).status).toBe(200);
  });
});

describe('when the admin listener has its own key file', () => {
  let fx: Fixture;
  beforeAll(async () => {
    const adminKeys = join(dir, 'admin');
    const clientKeys = join(dir, 'client');
    writeFileSync(adminKeys, `${ADMIN_KEY}\n`);
    writeFileSync(clientKeys, `${CLIENT_KEY}\n`);
    fx = await startFixture({
      backends: 1,
      router: { adminPort: 0, adminApiKeyFile: adminKeys, apiKeyFile: clientKeys },
    });
  });
  afterAll(() => fx.close());

  it('refuses /metrics without the admin key, and with a client key', async () => {
    expect((await get(`${fx.router.adminUrl}/metrics`)).status).toBe(401);
    const res = await request(`${fx.router.adminUrl}/metrics`, { headers: { authorization: `Bearer ${CLIENT_KEY}` } });
    await res.body.dump();
    expect(res.statusCode).toBe(401);
  });

  it('serves /metrics with the admin key', async () => {
    const res = await request(`${fx.router.adminUrl}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } });
    const text = await res.body.text();
    expect(res.statusCode).toBe(200);
    expect(text).toContain('prefix_router_');
  });

  it('does not accept the admin key for inference', async () => {
    const res = await post(`${fx.router.url}/v1/chat/completions`, chatBody('x'), {
      'content-type': 'application/json',
      authorization: `Bearer ${ADMIN_KEY}`,
    });
    expect(res.status).toBe(401);
  });
});
