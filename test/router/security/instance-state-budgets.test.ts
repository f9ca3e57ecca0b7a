import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { Agent, request } from 'undici';
import * as wire from '../../../router/src/server/instance-state-wire';
import { MAX_WAITING_POLLS_PER_PEER } from '../../../router/src/server/instance-state-publisher';
import { MAX_INSTANCE_STATE_BYTES } from '../../../router/src/server/instance-state-observer';
import { createRouterLogger, startRouter } from '../../../router/src/server';
import { chatBody, post, startFixture, waitFor, type Fixture } from '../server/helpers/router-fixture';

const STATE = '/router/v1/instance-state';

describe('when many observers fetch the published state at one version', () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await startFixture({ backends: 1, router: { publishStateMs: 10 } });
    expect(
      (await post(`${fx.router.url}/v1/chat/completions`, chatBody('a published prompt '.repeat(40)))).status,
    ).toBe(200);
  });
  afterAll(() => fx.close());
  afterEach(() => jest.restoreAllMocks());

  it('GIVEN 32 concurrent snapshot fetches THEN the snapshot is encoded once and every answer is the same bytes; a new request encodes again', async () => {
    const encode = jest.spyOn(wire, 'encodeInstanceState');
    const fetchAll = (): Promise<string[]> =>
      Promise.all(Array.from({ length: 32 }, async () => (await request(`${fx.router.url}${STATE}`)).body.text()));
    const bodies = await fetchAll();
    expect(new Set(bodies).size).toBe(1);
    expect(encode).toHaveBeenCalledTimes(1);

    expect((await post(`${fx.router.url}/v1/chat/completions`, chatBody('another prompt '.repeat(40)))).status).toBe(
      200,
    );
    const after = await fetchAll();
    expect(encode).toHaveBeenCalledTimes(2);
    expect(after[0]).not.toBe(bodies[0]);
  });
});

describe('when one address holds many waiting polls', () => {
  let fx: Fixture;
  let agent: Agent;
  let closed = false;
  beforeAll(async () => {
    // The longest batch period (10 s) keeps every current poll waiting for the whole test.
    fx = await startFixture({ backends: 1, router: { publishStateMs: 10_000 } });
    agent = new Agent({ connections: MAX_WAITING_POLLS_PER_PEER + 4 });
  });
  afterAll(async () => {
    if (!closed) await fx?.close();
    await agent.destroy();
  });

  it(`GIVEN ${MAX_WAITING_POLLS_PER_PEER} polls waiting THEN one more is refused with 429 and Retry-After, and the waiting ones are still answered`, async () => {
    const first = JSON.parse(await (await request(`${fx.router.url}${STATE}`)).body.text()) as {
      epoch: string;
      seq: number;
      version: number;
    };
    const current = `${fx.router.url}${STATE}?epoch=${first.epoch}&since=${first.seq}&version=${first.version}&waitMs=30000`;
    const waiting = Array.from({ length: MAX_WAITING_POLLS_PER_PEER }, () => request(current, { dispatcher: agent }));
    // Until all of them have reached the publisher, an extra poll is taken as a waiter too: it is abandoned after
    // 200 ms (which removes it) and sent again. Once the limit is reached it is refused at once.
    let refused: Awaited<ReturnType<typeof request>> | undefined;
    for (let attempt = 0; attempt < 50 && refused === undefined; attempt++) {
      try {
        const extra = await request(current, { dispatcher: agent, signal: AbortSignal.timeout(200) });
        if (extra.statusCode === 429) refused = extra;
        else await extra.body.dump();
      } catch {
        // abandoned while waiting: not all of the others had arrived yet
      }
    }
    expect(refused?.statusCode).toBe(429);
    expect(refused!.headers['retry-after']).toBe('1');
    expect(JSON.parse(await refused!.body.text())).toMatchObject({ error: { code: 'too_many_requests' } });

    // Shutting the router down answers every waiting poll at once: none is left hanging.
    closed = true;
    await fx.close();
    const answers = await Promise.all(waiting);
    for (const a of answers) {
      expect(a.statusCode).toBe(200);
      await a.body.dump();
    }
  });
});

describe('when an observed peer answers with more than the observer reads', () => {
  let peer: Server;
  let peerUrl: string;
  let closedEarly = 0;
  beforeAll(async () => {
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    peer = createServer((req, res) => {
      if (req.url?.startsWith(STATE) !== true) {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      // A JSON value that never ends: 1 MiB of spaces per write, as fast as the observer reads.
      res.writeHead(200, { 'content-type': 'application/json' });
      res.once('close', () => closedEarly++);
      const pump = (): void => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      pump();
    });
    await new Promise<void>((r) => peer.listen(0, '127.0.0.1', r));
    peerUrl = `http://127.0.0.1:${(peer.address() as AddressInfo).port}`;
  });
  afterAll(
    () =>
      new Promise<void>((r) => {
        peer.closeAllConnections();
        peer.close(() => r());
      }),
  );

  it(`GIVEN an endless answer THEN the observer stops reading past ${MAX_INSTANCE_STATE_BYTES} bytes, warns, and routes on its own view`, async () => {
    const logs: string[] = [];
    const destination = new Writable({
      write(c: Buffer, _e, cb) {
        logs.push(
          ...c
            .toString('utf8')
            .split('\n')
            .filter((l) => l.length > 0),
        );
        cb();
      },
    });
    const router = await startRouter(
      { backends: [peerUrl], port: 0, observeInstances: 'on', healthCheck: { intervalMs: 0 } },
      { logger: createRouterLogger('warn', destination) },
    );
    try {
      await waitFor('the observer warns', () => logs.some((l) => l.includes('cannot observe')), 10_000);
      const warning = JSON.parse(logs.find((l) => l.includes('cannot observe'))!) as { error: string };
      expect(warning.error).toContain(`larger than ${MAX_INSTANCE_STATE_BYTES} bytes`);
      await waitFor('the peer sees its answer cut', () => closedEarly >= 1, 10_000);
      expect(router.backends[0].observed).toBeUndefined();
    } finally {
      await router.close();
    }
  });
});
