import { startFakeBackend, type FakeBackend } from '../../../router/bench/fake-openai-backend';
import { SeededRng } from '../../../router/src/common/seeded-rng';
import { RoutingCore } from '../../../router/src/core/routing-core';
import { createPolicy } from '../../../router/src/policy';
import type { InstanceView } from '../../../router/src/policy/routing-policy';
import { parseChatRequest } from '../../../router/src/protocol/parse-request';
import { PREDICTED_CACHED_HEADER } from '../../../router/src/protocol/routing-headers';
import { createRouterLogger, startRouter, type RunningRouter } from '../../../router/src/server';
import { InstanceLoad } from '../../../router/src/state/instance-load';
import { chatBody, post } from '../server/helpers/router-fixture';

/**
 * Issue 41, finding 2: cache-aware recorded a request's blocks when it decided, so a request the engine rejected
 * (context length, a bad max_tokens) made the index predict blocks no engine computed: a victim's next request was
 * judged cold and moved, and a prompt only ever rejected was predicted as a hit. The index now records a request
 * once its engine accepted it (a 2xx answer started), as the published state does.
 */
const PROMPT = 'Customer Jane Roe, account 4417-1234-5678-9113, asked about her mortgage. '.repeat(8);

describe('when the engine rejects a request routed by cache-aware', () => {
  let backend: FakeBackend;
  let router: RunningRouter;
  beforeAll(async () => {
    backend = await startFakeBackend({ name: 'b', behavior: { errorStatus: 400 } });
    router = await startRouter(
      {
        backends: [backend.url],
        port: 0,
        healthCheck: { intervalMs: 0 },
        policy: { name: 'cache-aware', blockChars: 64 },
        routingHeaders: 'all',
      },
      { logger: createRouterLogger('silent') },
    );
  });
  afterAll(async () => {
    await router.close();
    await backend.close();
  });

  it('GIVEN a prompt only ever rejected THEN its next accepted request is predicted cold; the one after is a hit', async () => {
    // GIVEN the prompt was sent twice and rejected both times
    for (let i = 0; i < 2; i++)
      expect((await post(`${router.url}/v1/chat/completions`, chatBody(PROMPT))).status).toBe(400);
    // WHEN the engine accepts it
    backend.behavior.errorStatus = undefined;
    const first = await post(`${router.url}/v1/chat/completions`, chatBody(PROMPT));
    const second = await post(`${router.url}/v1/chat/completions`, chatBody(PROMPT));
    // THEN nothing was predicted from the rejections, and the accepted request's blocks were recorded
    expect(first.status).toBe(200);
    expect(first.headers[PREDICTED_CACHED_HEADER]).toBe('0');
    expect(Number(second.headers[PREDICTED_CACHED_HEADER])).toBeGreaterThan(0);
  });
});

describe('when the routing core drives a policy that commits on acceptance', () => {
  const views: InstanceView[] = [
    { id: 'a', healthy: true, inFlight: 0 },
    { id: 'b', healthy: true, inFlight: 0 },
  ];
  const targets = new Map(views.map((v) => [v.id, { load: new InstanceLoad() }] as const));
  const request = parseChatRequest(new TextEncoder().encode(chatBody(PROMPT)), {}).routing;

  it('GIVEN attempts released without acceptance THEN the policy never saw them; an accepted one is committed once', () => {
    const policy = createPolicy({ name: 'cache-aware', blockChars: 64 }, { rng: new SeededRng(1) });
    expect(policy.commitWhen).toBe('accepted');
    const commits: string[] = [];
    const releases: string[] = [];
    const commit = policy.commit.bind(policy);
    const release = policy.release.bind(policy);
    policy.commit = (r, d) => (commits.push(d.instance), commit(r, d));
    policy.release = (r, d, o) => (releases.push(d.instance), release(r, d, o));
    const core = new RoutingCore(policy, (id) => targets.get(id));
    // A refused attempt, then an accepted one (accepted() twice: idempotent)
    const routed = core.begin(request);
    const refused = routed.decide({ instances: views, nowMs: 0 });
    routed.release({ kind: 'failed' });
    const served = routed.decide(
      { instances: views.filter((v) => v.id !== refused.decision.instance), nowMs: 1 },
      refused.decision.instance,
    );
    routed.accepted();
    routed.accepted();
    routed.end({ kind: 'completed' });
    expect(commits).toEqual([served.decision.instance]);
    expect(releases).toEqual([served.decision.instance]);
  });
});
