import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startFakeBackend, type FakeBackend } from '../../../router/bench/fake-openai-backend';
import { createRouterLogger, startRouter, type RunningRouter } from '../../../router/src/server';
import { chatBody, post } from '../server/helpers/router-fixture';

/**
 * Issue 41, finding 5: the per-client cap bucketed requests by the key they presented, verified or not, so on a path
 * that checks no key (`POST /invocations` with --open-container-paths on) made-up keys each got a fresh cap. A
 * client is now its verified key, else its address.
 */
const KEY = 'sk-tenant-alpha-0123456789';

describe('when --max-in-flight-per-client 2 and clients present keys', () => {
  let dir: string;
  let backend: FakeBackend;
  let router: RunningRouter;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'client-caps-'));
    writeFileSync(join(dir, 'keys'), `${KEY}\n`);
    backend = await startFakeBackend({ name: 'slow', behavior: { responseDelayMs: 500 } });
    router = await startRouter(
      {
        backends: [backend.url],
        port: 0,
        healthCheck: { intervalMs: 0 },
        apiKeyFile: join(dir, 'keys'),
        openContainerPaths: 'on',
        limits: { maxInFlightPerClient: 2 },
      },
      { logger: createRouterLogger('silent') },
    );
  });
  afterAll(async () => {
    await router.close();
    await backend.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const statuses = (answers: Array<{ status: number }>) => answers.map((a) => a.status).sort();

  it('GIVEN ten concurrent /invocations with made-up keys (a path that checks none) THEN they share one address cap', async () => {
    const answers = await Promise.all(
      Array.from({ length: 10 }, () =>
        post(`${router.url}/invocations`, chatBody('open path'), {
          'content-type': 'application/json',
          'x-prefix-router-api-key': randomBytes(12).toString('hex'),
        }),
      ),
    );
    expect(statuses(answers)).toEqual([200, 200, ...Array<number>(8).fill(429)]);
  });

  it('GIVEN a verified key on a checked path THEN it has its own cap beside the address', async () => {
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        post(`${router.url}/v1/chat/completions`, chatBody('checked path'), {
          'content-type': 'application/json',
          authorization: `Bearer ${KEY}`,
        }),
      ),
    );
    expect(statuses(answers)).toEqual([200, 200, 429, 429]);
  });
});
