import { request } from 'undici';
import { startFakeBackend } from '../../../router/bench/fake-openai-backend';
import { findNginx, startNginxReference } from '../../../router/bench/nginx-reference';

describe('when bench:router looks for its reference proxy', () => {
  const saved = process.env.BENCH_NGINX;
  afterEach(() => {
    if (saved === undefined) delete process.env.BENCH_NGINX;
    else process.env.BENCH_NGINX = saved;
  });

  it('GIVEN no nginx binary THEN it says so and how to install it, instead of failing', async () => {
    process.env.BENCH_NGINX = '/nonexistent/nginx';
    const ref = await startNginxReference(['http://127.0.0.1:1']);
    expect(ref).toEqual({ missing: expect.stringContaining('apt-get install -y nginx') });
  });

  // Runs where nginx is installed (the benchmark machine); CI images without nginx skip it.
  (findNginx() === undefined ? it.skip : it)(
    'GIVEN nginx installed THEN it proxies chat requests to the backends and stops cleanly',
    async () => {
      const backend = await startFakeBackend({ name: 'behind-nginx' });
      const ref = await startNginxReference([backend.url]);
      try {
        if (!('url' in ref)) throw new Error(ref.missing);
        const res = await request(`${ref.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
        });
        expect(res.statusCode).toBe(200);
        expect(await res.body.text()).toContain('hello from behind-nginx');
      } finally {
        if ('stop' in ref) await ref.stop();
        await backend.close();
      }
    },
  );
});
