import OpenAI, { NotFoundError } from 'openai';
import { request } from 'undici';
import { startEmulator, type RunningEmulator } from '../../../router/src/emulator/emulator-server';
import { builtinProfile } from '../../../router/src/emulator/engine-profile';
import { INSTANCE_HEADER, PREDICTED_CACHED_HEADER } from '../../../router/src/protocol/routing-headers';
import { startRouter, type RunningRouter } from '../../../router/src/server';
import { MISS_REFRESH_MS, ServedModelsDirectory } from '../../../router/src/server/served-models';

/**
 * A fleet whose engines serve different LoRA adapters (vLLM `--enable-lora --lora-modules`), behind the router,
 * driven by the official openai client: requests go only to engines serving their adapter, each adapter's
 * prefixes stay on one instance of its set, no adapter is ever served from another's cache, and an unknown model
 * gets vLLM's own 404.
 */
const tiny = builtinProfile('tiny');
/** tiny with room for every prompt these tests send (16,384 tokens of KV): a repeat's miss is the router's doing, not eviction. */
const roomy = { ...tiny, kvCapacityBlocks: 1024 };
const BASE = 'base-model';
/** Engines 1 and 2 serve `sql` and `support`; engines 3 and 4 serve only `support`. */
const LAYOUT = [['sql', 'support'], ['sql', 'support'], ['support'], ['support']] as const;

async function startFleet(): Promise<RunningEmulator[]> {
  const engines: RunningEmulator[] = [];
  for (const [i, adapters] of LAYOUT.entries()) {
    engines.push(
      await startEmulator({
        profile: roomy,
        timeScale: 50,
        modelName: BASE,
        seed: i,
        loraModules: adapters.map((name) => ({ name, path: `/opt/ml/adapters/${name}` })),
      }),
    );
  }
  return engines;
}

function system(tag: string): string {
  // Longer than the 1024-character prefix sagemaker-prefix-aware keys on: the user turn does not move the key.
  return `You are assistant ${tag}. Follow the house rules. `.repeat(30);
}

describe.each(['sagemaker-prefix-aware', 'cache-aware'] as const)(
  'when the %s router fronts engines serving different LoRA adapters',
  (policy) => {
    let engines: RunningEmulator[];
    let router: RunningRouter;
    let client: OpenAI;
    const engineOf = (name: string | null): number => router.backends.findIndex((b) => b.name === name);

    beforeAll(async () => {
      engines = await startFleet();
      router = await startRouter({
        backends: engines.map((e) => e.url),
        policy:
          policy === 'cache-aware'
            ? { name: 'cache-aware', blockChars: 64 }
            : { name: 'sagemaker-prefix-aware', prefixLength: 1024, concurrencyThreshold: 32 },
        port: 0,
        logLevel: 'silent',
        healthCheck: { intervalMs: 60_000 },
        routingHeaders: 'all',
      });
      client = new OpenAI({ baseURL: `${router.url}/v1`, apiKey: 'unused', maxRetries: 0, timeout: 30_000 });
    }, 60_000);

    afterAll(async () => {
      await router.close();
      await Promise.all(engines.map((e) => e.close()));
    });

    it('GIVEN the engines list their adapters at /v1/models THEN the router knows what each serves and lists the union', async () => {
      expect(router.backends.map((b) => b.id)).toHaveLength(4);
      const models = await client.models.list();
      expect(models.data.map((m) => m.id).sort()).toEqual([BASE, 'sql', 'support'].sort());
      const sql = models.data.find((m) => m.id === 'sql') as unknown as { parent: string; root: string };
      expect(sql).toMatchObject({ parent: BASE, root: '/opt/ml/adapters/sql' });
    });

    it('GIVEN requests for adapter sql with many prefixes THEN each goes only to an engine serving sql, and each engine computes a prefix once', async () => {
      const byPrefix = new Map<number, Set<number>>();
      let misses = 0;
      for (let round = 0; round < 2; round++) {
        for (let p = 0; p < 8; p++) {
          const { data, response } = await client.chat.completions
            .create({
              model: 'sql',
              max_tokens: 2,
              messages: [
                { role: 'system', content: system(`sql-${p}`) },
                { role: 'user', content: `query ${round}` },
              ],
            })
            .withResponse();
          expect(data.model).toBe('sql');
          const engine = engineOf(response.headers.get(INSTANCE_HEADER));
          expect(LAYOUT[engine]).toContain('sql');
          byPrefix.set(p, (byPrefix.get(p) ?? new Set()).add(engine));
          // A hit holds the whole system prompt; a miss shares at most the template and "You are assistant sql-".
          const cached = data.usage?.prompt_tokens_details?.cached_tokens ?? 0;
          if (cached < (data.usage?.prompt_tokens ?? 0) / 2) misses++;
        }
      }
      const placements = [...byPrefix.values()].reduce((sum, engines) => sum + engines.size, 0);
      // sagemaker-prefix-aware keys each prefix to one instance. cache-aware may move a repeat to the other sql
      // engine when the one holding it has more than its bounded share of the requests (over-share-filter.ts,
      // whatever hashing put there), so its promise is the cache's: each engine computes a prefix once.
      if (policy === 'sagemaker-prefix-aware') expect(placements).toBe(byPrefix.size);
      expect(misses).toBe(placements);
    });

    it('GIVEN requests for adapter support THEN they may use all four engines, and the sql-only rule does not shrink them', async () => {
      const used = new Set<number>();
      for (let p = 0; p < 24; p++) {
        const { response } = await client.chat.completions
          .create({
            model: 'support',
            max_tokens: 2,
            messages: [
              { role: 'system', content: system(`support-${p}`) },
              { role: 'user', content: 'hi' },
            ],
          })
          .withResponse();
        used.add(engineOf(response.headers.get(INSTANCE_HEADER)));
      }
      expect(used.has(2) || used.has(3)).toBe(true);
    });

    it('GIVEN one prompt served under adapter sql THEN the same prompt under support, or the base model, gets no cached tokens from it', async () => {
      // A completion prompt (no chat template in front), so nothing before it is shared with earlier requests.
      const prompt = 'shared-between-adapters: the same long document. '.repeat(30);
      const first = await client.completions.create({ model: 'sql', max_tokens: 2, prompt }).withResponse();
      const again = await client.completions.create({ model: 'sql', max_tokens: 2, prompt }).withResponse();
      expect(first.data.usage?.prompt_tokens_details?.cached_tokens ?? 0).toBe(0);
      // On the engine that computed it, the prompt is cached under sql (cache-aware may send the repeat to the other
      // sql engine while the first has more than its bounded share of requests: that one computes it afresh).
      const sameEngine = again.response.headers.get(INSTANCE_HEADER) === first.response.headers.get(INSTANCE_HEADER);
      if (policy === 'sagemaker-prefix-aware') expect(sameEngine).toBe(true);
      expect((again.data.usage?.prompt_tokens_details?.cached_tokens ?? 0) > 0).toBe(sameEngine);
      for (const model of ['support', BASE]) {
        const { data, response } = await client.completions.create({ model, max_tokens: 2, prompt }).withResponse();
        expect(data.usage?.prompt_tokens_details?.cached_tokens).toBe(0);
        if (policy === 'cache-aware') expect(Number(response.headers.get(PREDICTED_CACHED_HEADER))).toBe(0);
      }
    });

    it('GIVEN a model no engine serves THEN the router answers the 404 vLLM itself gives, and no engine sees the request', async () => {
      const before = engines.map((e) => e.engine.stats().submitted);
      const error = await client.chat.completions
        .create({ model: 'no-such-adapter', messages: [{ role: 'user', content: 'hello' }] })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(NotFoundError);
      expect((error as NotFoundError).status).toBe(404);
      const fromRouter = await request(`${router.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'no-such-adapter', messages: [{ role: 'user', content: 'hello' }] }),
      });
      const fromEngine = await request(`${engines[0].url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'no-such-adapter', messages: [{ role: 'user', content: 'hello' }] }),
      });
      expect(fromRouter.statusCode).toBe(404);
      expect(await fromRouter.body.json()).toEqual(await fromEngine.body.json());
      expect(engines.map((e) => e.engine.stats().submitted)).toEqual(before);
    });
  },
);

describe('when an engine loads an adapter at run time (vLLM /v1/load_lora_adapter)', () => {
  let engines: RunningEmulator[];
  let router: RunningRouter;

  beforeAll(async () => {
    engines = [
      await startEmulator({ profile: tiny, timeScale: 50, modelName: BASE, allowRuntimeLoraUpdating: true }),
      await startEmulator({ profile: tiny, timeScale: 50, modelName: BASE, allowRuntimeLoraUpdating: true }),
    ];
    router = await startRouter({
      backends: engines.map((e) => e.url),
      port: 0,
      logLevel: 'silent',
      healthCheck: { intervalMs: 60_000 },
      routingHeaders: 'instance',
    });
  }, 60_000);
  afterAll(async () => {
    await router.close();
    await Promise.all(engines.map((e) => e.close()));
  });

  const chat = (model: string) =>
    request(`${router.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model, max_tokens: 2, messages: [{ role: 'user', content: 'hello' }] }),
    });

  it('GIVEN the second engine loads adapter fresh after the router started THEN the first request for it re-reads the lists and reaches that engine', async () => {
    const loaded = await request(`${engines[1].url}/v1/load_lora_adapter`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ lora_name: 'fresh', lora_path: '/adapters/fresh' }),
    });
    expect([loaded.statusCode, await loaded.body.text()]).toEqual([
      200,
      "Success: LoRA adapter 'fresh' added successfully.",
    ]);
    for (let i = 0; i < 3; i++) {
      const res = await chat('fresh');
      expect(res.statusCode).toBe(200);
      expect(((await res.body.json()) as { model: string }).model).toBe('fresh');
      expect(res.headers[INSTANCE_HEADER]).toBe(router.backends[1].name);
    }
    expect([...router.backends.map((b) => b.id)]).toHaveLength(2);
  });

  it("GIVEN models still unknown after the re-read THEN each gets vLLM's 404", async () => {
    const first = await chat('never-loaded');
    await first.body.dump();
    const second = await chat('never-loaded-either');
    expect([first.statusCode, second.statusCode]).toEqual([404, 404]);
    expect(await second.body.json()).toEqual({
      error: {
        message: 'The model `never-loaded-either` does not exist.',
        type: 'NotFoundError',
        param: 'model',
        code: 404,
      },
    });
  });
});

describe("when requests for unknown models cause re-reads of the engines' lists", () => {
  it.each([
    [999, false],
    [1000, true],
  ])(
    'GIVEN a re-read at 0 ms THEN another at %d ms re-reads: %s (at most one per MISS_REFRESH_MS)',
    async (later, expected) => {
      const directory = new ServedModelsDirectory([], 1000, () => undefined);
      expect(MISS_REFRESH_MS).toBe(1000);
      expect(await directory.refreshOnMiss(0)).toBe(true);
      expect(await directory.refreshOnMiss(later)).toBe(expected);
    },
  );
});
