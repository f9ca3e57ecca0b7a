import { Agent, request } from 'undici';
import * as wire from '../../../router/src/server/instance-state-wire';
import {
  MAX_ENCODED_SINCE_POINTS,
  MAX_WAITING_POLLS_PER_PEER,
} from '../../../router/src/server/instance-state-publisher';
import { chatBody, post, startFixture, type Fixture } from '../server/helpers/router-fixture';

/**
 * Issue 41, finding 4: every distinct `since=` on /router/v1/instance-state was encoded and kept until the state
 * changed (RSS grew from 131 MB to 1.99 GB in 75 s), and polls with `waitMs=0` escaped the per-address limit. The
 * publisher now keeps the snapshot and a bounded set of recent `since` answers, and counts every `since` poll.
 */
const STATE = '/router/v1/instance-state';

interface Head {
  epoch: string;
  seq: number;
  version: number;
}

async function head(fx: Fixture): Promise<Head> {
  return JSON.parse(await (await request(`${fx.router.url}${STATE}`)).body.text()) as Head;
}

describe('when a client asks for the events since many distinct points', () => {
  let fx: Fixture;
  beforeAll(async () => {
    fx = await startFixture({ backends: 1, router: { publishStateMs: 5 } });
    for (let i = 0; i < 3 * MAX_ENCODED_SINCE_POINTS; i++)
      expect((await post(`${fx.router.url}/v1/chat/completions`, chatBody(`prompt ${i} `.repeat(40)))).status).toBe(
        200,
      );
  });
  afterAll(() => fx.close());
  afterEach(() => jest.restoreAllMocks());

  it(`GIVEN more than ${MAX_ENCODED_SINCE_POINTS} points at one version THEN the oldest asked is encoded again (not kept), the latest is not`, async () => {
    const { epoch, seq } = await head(fx);
    expect(seq).toBeGreaterThan(2 * MAX_ENCODED_SINCE_POINTS);
    const since = async (s: number): Promise<void> => {
      const answer = await request(`${fx.router.url}${STATE}?epoch=${epoch}&since=${s}&waitMs=0`);
      expect(answer.statusCode).toBe(200);
      expect(JSON.parse(await answer.body.text())).toMatchObject({ epoch });
    };
    const encode = jest.spyOn(wire, 'encodeInstanceState');
    for (let s = 0; s < 2 * MAX_ENCODED_SINCE_POINTS; s++) await since(s);
    expect(encode).toHaveBeenCalledTimes(2 * MAX_ENCODED_SINCE_POINTS);
    // The latest point is still held; the first was evicted.
    await since(2 * MAX_ENCODED_SINCE_POINTS - 1);
    expect(encode).toHaveBeenCalledTimes(2 * MAX_ENCODED_SINCE_POINTS);
    await since(0);
    expect(encode).toHaveBeenCalledTimes(2 * MAX_ENCODED_SINCE_POINTS + 1);
  });
});

describe('when one address sends many since polls with waitMs 0', () => {
  let fx: Fixture;
  let agent: Agent;
  beforeAll(async () => {
    // A long batch period keeps each since poll counted until its tick.
    fx = await startFixture({ backends: 1, router: { publishStateMs: 2_000 } });
    agent = new Agent({ connections: 2 * MAX_WAITING_POLLS_PER_PEER });
  });
  afterAll(async () => {
    await fx.close();
    await agent.destroy();
  });

  it(`GIVEN ${2 * MAX_WAITING_POLLS_PER_PEER} at once THEN those past ${MAX_WAITING_POLLS_PER_PEER} get 429, the rest are answered`, async () => {
    const { epoch, seq } = await head(fx);
    const url = `${fx.router.url}${STATE}?epoch=${epoch}&since=${seq}&waitMs=0`;
    const answers = await Promise.all(
      Array.from({ length: 2 * MAX_WAITING_POLLS_PER_PEER }, async () => {
        const answer = await request(url, { dispatcher: agent });
        await answer.body.dump();
        return answer.statusCode;
      }),
    );
    expect(answers.filter((s) => s === 429).length).toBe(MAX_WAITING_POLLS_PER_PEER);
    expect(answers.filter((s) => s === 200).length).toBe(MAX_WAITING_POLLS_PER_PEER);
  });
});
